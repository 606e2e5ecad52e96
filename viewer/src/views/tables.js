// Operators and Kernels views: the two tables of the TensorBoard profiler plugin that PyTorch users
// look for. Operators is PyTorch's key_averages() (one row per op name, host and device time);
// Kernels is the device's own table (one row per name and device). Both sort by any column and
// filter by a name substring; both are virtualised (dom.js virtualRows), since the payload keeps
// up to payload_limits' cap of rows. Host and device time are never mixed: a host share is of all
// host self time, a device share of all device time.
import { el, virtualRows } from '../dom.js';
import { formatDuration, formatInt, formatShare, visibleText } from '../format.js';

// Names beyond this are cut before they reach the DOM (a templated kernel name can be kilobytes);
// CSS clips the rest with an ellipsis, and the cell's tooltip keeps the whole name.
const NAME_CHARS = 300;
const clip = (s) => (s.length > NAME_CHARS ? `${s.slice(0, NAME_CHARS - 1)}…` : s);
const mean = (total, calls) => (calls ? total / calls : 0);
const exactNs = (ns) => `${formatInt(ns)} ns`;

/** A time column: three significant digits shown, the exact nanoseconds in the tooltip. */
const time = (key, label, value, group, hint) => ({
  key,
  label,
  group,
  hint,
  num: true,
  value,
  // A plain 0 rather than "0 ns": most host-only ops launch no device work, and a column of
  // units over nothing hides the rows that have some.
  text: (r) => (value(r) === 0 ? '0' : formatDuration(value(r))),
  title: (r) => exactNs(Math.round(value(r))),
});
/** A share column: sorts with its time, reads as a percentage of `whole`. */
const share = (key, label, value, whole, group) => ({
  key,
  label,
  group,
  num: true,
  share: true,
  value,
  text: (r) => (value(r) === 0 && whole ? '0' : formatShare(value(r), whole)),
  title: (r) => formatShare(value(r), whole),
});

/**
 * A sortable, filterable, virtualised table. columns: [{key, label, num, value(row), text(row),
 * title(row), group?, share?}]; the first column is the name. Rows keep their payload order for
 * ties, so the default sort (the payload's) and every other order are deterministic.
 */
function sortableTable(panel, { id, columns, rows, sortKey, filterLabel, nameOf }) {
  const items = rows.map((row, index) => ({ row, index }));
  let key = sortKey;
  let descending = true;
  let sorted = items; // the payload's order is the default sort
  let shown = items;
  let needle = '';

  const filterId = `${id}-filter`;
  const input = el('input', {
    id: filterId,
    type: 'search',
    autocomplete: 'off',
    placeholder: 'part of a name',
  });
  const status = el('span', { id: `${id}-count`, class: 'note', 'aria-live': 'polite' });
  panel.append(
    el(
      'div',
      { class: 'table-filter' },
      el('label', { for: filterId }, filterLabel),
      input,
      status,
    ),
  );

  // Two header rows when columns are grouped (Host, Device): the group names the time domain
  // once, so the leaf headers stay short enough for narrow numeric columns.
  const grouped = columns.some((c) => c.group);
  const groupRow = grouped ? el('tr', { class: 'group-row' }) : null;
  if (grouped) {
    for (let i = 0; i < columns.length;) {
      let j = i;
      while (j < columns.length && columns[j].group === columns[i].group) j++;
      groupRow.append(
        el(
          'th',
          { scope: 'colgroup', colspan: j - i, class: columns[i].group ? 'group' : null },
          columns[i].group || '',
        ),
      );
      i = j;
    }
  }
  const headRow = el('tr');
  const body = el('tbody');
  const thead = el('thead', null, groupRow, headRow);
  const tableEl = el(
    'table',
    { id, class: 'sortable vtable data-table' },
    el(
      'colgroup',
      null,
      columns.map((c, i) =>
        el('col', { class: i === 0 ? 'col-name' : c.share ? 'col-share' : `col-${c.kind || 'n'}` }),
      ),
    ),
    thead,
    body,
  );
  const scroller = el('div', { class: 'table-wrap vscroll' }, tableEl);
  panel.append(scroller);

  const headers = columns.map((col) => {
    const button = el('button', { type: 'button', class: 'sort' }, col.label);
    const th = el(
      'th',
      {
        scope: 'col',
        class: col.num ? 'num' : null,
        'data-key': col.key,
        title: col.hint || (col.group ? `${col.group} ${col.label.toLowerCase()}` : null),
      },
      button,
    );
    button.addEventListener('click', () => {
      if (key === col.key) descending = !descending;
      else {
        key = col.key;
        descending = !!col.num; // numbers biggest first, names from A
      }
      const cmp = col.num
        ? (a, b) => col.value(a.row) - col.value(b.row)
        : (a, b) => {
            const x = col.value(a.row);
            const y = col.value(b.row);
            return x < y ? -1 : x > y ? 1 : 0;
          };
      sorted = [...items].sort((a, b) => (descending ? cmp(b, a) : cmp(a, b)) || a.index - b.index);
      refresh();
    });
    headRow.append(th);
    return th;
  });

  const view = virtualRows(
    scroller,
    tableEl,
    thead, // the whole header (one or two rows) sits above row 0
    body,
    () => shown.length,
    (i) => {
      const { row } = shown[i];
      return el(
        'tr',
        { 'data-index': i, 'aria-rowindex': i + 2 },
        columns.map((c, k) =>
          k === 0
            ? el('td', { class: 'name-cell-end', title: c.title(row) }, c.text(row))
            : el(
                'td',
                {
                  class: c.num ? 'num' : null,
                  title: c.title(row),
                  // The exact value, for tests and for copying; the text is rounded.
                  'data-value': c.num ? c.value(row) : null,
                },
                c.text(row),
              ),
        ),
      );
    },
  );

  const refresh = () => {
    const lower = needle.toLowerCase();
    shown = lower ? sorted.filter((x) => nameOf(x.row).toLowerCase().includes(lower)) : sorted;
    tableEl.setAttribute('aria-rowcount', String(shown.length + 1));
    status.textContent = needle
      ? `${formatInt(shown.length)} of ${formatInt(items.length)} rows`
      : `${formatInt(items.length)} rows`;
    for (const th of headers)
      th.setAttribute(
        'aria-sort',
        th.dataset.key === key ? (descending ? 'descending' : 'ascending') : 'none',
      );
    scroller.scrollTop = 0;
    view.draw(true);
  };
  input.addEventListener('input', () => {
    needle = input.value;
    refresh();
  });
  refresh();
}

/** Whether the payload has op rows (older payloads have no `operators`: no Operators view). */
export const hasOperators = (payload) => (payload.views.operators?.items || []).length > 0;
/** Whether the payload has device work (no Kernels view for a trace without any). */
export const hasKernels = (payload) => (payload.views.kernels?.items || []).length > 0;

function capNote(kept, total, what) {
  return kept < total
    ? el(
        'p',
        { class: 'note', id: `${what}-cap` },
        `Showing ${formatInt(kept)} of ${formatInt(total)} ${what} (the viewer keeps at most ${formatInt(kept)}; \`candle-graph query --kind ${what === 'op names' ? 'ops' : 'kernels'} --limit N\` lists them all).`,
      )
    : null;
}

// Self, self %, total and mean of one side (`host` or `device`) of an op row: the same four
// columns under each group header, the share taken of that side's own total.
function sideColumns(side, group, all, meanTitle) {
  const self = (r) => r[`${side}_self_ns`];
  const total = (r) => r[`${side}_total_ns`];
  return [
    time(`${side}_self_ns`, 'Self', self, group),
    share(`${side}_self_share`, 'Self %', self, all, group),
    time(`${side}_total_ns`, 'Total', total, group),
    time(`${side}_mean_ns`, 'Mean', (r) => mean(total(r), r.calls), group, meanTitle),
  ];
}

export function renderOperators(panel, payload) {
  const ops = payload.views.operators;
  const total = payload.payload_limits?.operator_rows_total ?? ops.items.length;
  const hostAll = ops.host_self_ns;
  const deviceAll = ops.device_ns;
  panel.append(el('h1', null, 'Operators'));
  panel.append(
    el(
      'p',
      { class: 'note' },
      'One row per op name over the measured region, as PyTorch’s key_averages(): host time is the ops’ nesting on their threads; device time is the device work each op launched (self) and with its descendants’ (total). Means are totals ÷ calls. Host shares are of all host self time, device shares of all device time.',
    ),
  );
  panel.append(
    el(
      'p',
      { id: 'operators-totals', class: 'totals' },
      `Host self time of all ops: ${formatDuration(hostAll)}. `,
      deviceAll
        ? ops.unattributed_device_ns
          ? `Device time: ${formatDuration(deviceAll)}, of which ${formatDuration(ops.unattributed_device_ns)} (${formatShare(ops.unattributed_device_ns, deviceAll)}) unattributed (launched by no host op of the trace).`
          : `Device time: ${formatDuration(deviceAll)}, all of it attributed to the host ops that launched it.`
        : 'No device work in this trace.',
    ),
  );
  panel.append(capNote(ops.items.length, total, 'op names') || '');
  const HOST = 'Host';
  const DEVICE = 'Device';
  sortableTable(panel, {
    id: 'operators-table',
    filterLabel: 'Filter op names',
    nameOf: (r) => r.name,
    sortKey: 'host_self_ns',
    rows: ops.items,
    columns: [
      {
        key: 'name',
        label: 'Name',
        value: (r) => r.name,
        text: (r) => clip(r.name),
        title: (r) => visibleText(r.name),
      },
      {
        key: 'calls',
        label: 'Calls',
        num: true,
        kind: 'calls',
        value: (r) => r.calls,
        text: (r) => formatInt(r.calls),
        title: (r) => formatInt(r.calls),
      },
      ...sideColumns('host', HOST, hostAll, 'Host total ÷ calls'),
      ...sideColumns('device', DEVICE, deviceAll, 'Device total ÷ calls'),
    ],
  });
}

export function renderKernels(panel, payload) {
  const k = payload.views.kernels;
  const total = payload.payload_limits?.kernel_rows_total ?? k.items.length;
  const devices = new Set(k.items.map((r) => r.device));
  panel.append(el('h1', null, 'Kernels'));
  panel.append(
    el(
      'p',
      { class: 'note' },
      'Device work per name and device: kernels, memory copies and memsets (stream and event waits are not work and are left out). C++ names are shown demangled; the tooltip gives the raw name.',
    ),
  );
  panel.append(
    el(
      'p',
      { id: 'kernels-totals', class: 'totals' },
      `Device time: ${formatDuration(k.device_ns)} over ${formatInt(total)} names on ${formatInt(devices.size)} device${devices.size === 1 ? '' : 's'}. Shares are of all device time.`,
    ),
  );
  panel.append(capNote(k.items.length, total, 'kernel names') || '');
  const title = (r) =>
    r.raw_name !== r.name
      ? `${visibleText(r.name)}\n\nraw name: ${visibleText(r.raw_name)}`
      : visibleText(r.name);
  const text = (key) => ({
    key,
    label: key[0].toUpperCase() + key.slice(1),
    kind: key,
    value: (r) => r[key],
    text: (r) => r[key],
    title: (r) => visibleText(r[key]),
  });
  sortableTable(panel, {
    id: 'kernels-table',
    filterLabel: 'Filter names',
    nameOf: (r) => r.name,
    sortKey: 'total_ns',
    rows: k.items,
    columns: [
      { key: 'name', label: 'Name', value: (r) => r.name, text: (r) => clip(r.name), title },
      text('kind'),
      text('device'),
      {
        key: 'calls',
        label: 'Calls',
        num: true,
        kind: 'calls',
        value: (r) => r.calls,
        text: (r) => formatInt(r.calls),
        title: (r) => formatInt(r.calls),
      },
      time('total_ns', 'Total', (r) => r.total_ns),
      time('mean_ns', 'Mean', (r) => mean(r.total_ns, r.calls)),
      time('min_ns', 'Min', (r) => r.min_ns),
      time('max_ns', 'Max', (r) => r.max_ns),
      share('share', 'Share', (r) => r.total_ns, k.device_ns),
    ],
  });
}
