// Span costs view (trace6.md §12.3): every node sorted by total time; any column sorts. The table is
// virtualised: it scrolls over all rows, but only the rows in (and just around) the visible
// window are in the DOM, so showing the view or scrolling costs the same for 10^2 or 10^6 rows
// (docs/performance.md (Viewer)); dom.js virtualRows does the windowing.
import { el, virtualRows } from '../dom.js';
import { formatBytes, formatMs, shortBytes, visibleText } from '../format.js';

// Rows have a fixed height, so cells cannot wrap: bytes are shown short (the exact value is the
// cell's tooltip) and long names keep their informative end (`…/backward/layer42`): the cell is
// clipped at its start by CSS (style.css, name-cell) to whatever width the window leaves, and
// names longer than any column are cut here first so a row's DOM stays small.
const NAME_CHARS = 160;
const clipStart = (s) => (s.length > NAME_CHARS ? `…${s.slice(s.length - NAME_CHARS + 1)}` : s);
const bytes = (v) => (v == null ? '–' : shortBytes(v));
const COLUMNS = [
  {
    key: 'name',
    label: 'Name',
    text: (r) => clipStart(r.name),
    full: (r) => r.name,
    cmp: (a, b) => a.name.localeCompare(b.name),
  },
  { key: 'kind', label: 'Kind', text: (r) => r.kind, cmp: (a, b) => a.kind.localeCompare(b.kind) },
  { key: 'self_time_ns', label: 'Self', num: true, text: (r) => formatMs(r.self_ms) },
  { key: 'total_time_ns', label: 'Total', num: true, text: (r) => formatMs(r.total_ms) },
  {
    key: 'bytes',
    label: 'Requested',
    num: true,
    text: (r) => bytes(r.bytes),
    full: (r) => formatBytes(r.bytes),
  },
  {
    key: 'peak_bytes',
    label: 'Peak live',
    num: true,
    text: (r) => bytes(r.peak_bytes),
    full: (r) => formatBytes(r.peak_bytes),
  },
  {
    key: 'storage_bytes',
    label: 'Storage',
    num: true,
    text: (r) => bytes(r.storage_bytes),
    full: (r) => (r.storage_bytes == null ? '–' : formatBytes(r.storage_bytes)),
  },
];

export function renderSpanCosts(panel, payload, index, inspector) {
  const items = payload.views.span_costs.items;
  let sortKey = 'total_time_ns';
  let descending = true;
  let order = items; // the payload is already sorted by total time, descending
  panel.append(el('h1', null, 'Span costs'));
  panel.append(
    el(
      'p',
      { class: 'note' },
      `${items.length.toLocaleString('en-US')} nodes. Select a header to sort; select a row to inspect it; the table scrolls over all rows.`,
    ),
  );
  const headRow = el('tr');
  const body = el('tbody');
  const tableEl = el(
    'table',
    { id: 'span-costs-table', class: 'sortable vtable', 'aria-rowcount': String(items.length + 1) },
    el(
      'colgroup',
      null,
      COLUMNS.map((c) => el('col', { class: `col-${c.key}` })),
    ),
    el('thead', null, headRow),
    body,
  );
  const scroller = el('div', { class: 'table-wrap vscroll' }, tableEl);
  panel.append(scroller);

  const headers = COLUMNS.map((col) => {
    const button = el('button', { type: 'button', class: 'sort' }, col.label);
    const th = el(
      'th',
      { scope: 'col', class: col.num ? 'num' : null, 'data-key': col.key },
      button,
    );
    button.addEventListener('click', () => {
      if (sortKey === col.key) descending = !descending;
      else {
        sortKey = col.key;
        descending = !!col.num;
      }
      const cmp = col.cmp || ((a, b) => (a[col.key] ?? -1) - (b[col.key] ?? -1));
      order = [...items].sort(
        (a, b) => (descending ? cmp(b, a) : cmp(a, b)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
      scroller.scrollTop = 0;
      draw(true);
    });
    headRow.append(th);
    return th;
  });

  const rows = virtualRows(
    scroller,
    tableEl,
    headRow,
    body,
    () => order.length,
    (i) => {
      const row = order[i];
      const tr = el(
        'tr',
        { tabindex: '0', 'data-id': row.id, 'data-index': i, 'aria-rowindex': i + 2 },
        COLUMNS.map((c) => {
          if (c.key === 'name')
            return el(
              'td',
              { class: 'name-cell', title: visibleText(c.full(row)) },
              el('span', null, c.text(row)),
            );
          return el(
            'td',
            { class: c.num ? 'num' : null, title: visibleText((c.full || c.text)(row)) },
            c.text(row),
          );
        }),
      );
      if (inspector.selected === row.id) tr.classList.add('selected');
      return tr;
    },
  );
  const draw = (force) => {
    for (const th of headers) {
      th.setAttribute(
        'aria-sort',
        th.dataset.key === sortKey ? (descending ? 'descending' : 'ascending') : 'none',
      );
    }
    rows.draw(force);
  };

  const pick = (event) => {
    const tr = event.target.closest('tr[data-id]');
    if (!tr) return;
    for (const old of body.querySelectorAll('tr.selected')) old.classList.remove('selected');
    tr.classList.add('selected');
    inspector.select(tr.dataset.id, 'span_costs');
  };
  body.addEventListener('click', pick);
  body.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      pick(event);
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const tr = event.target.closest('tr[data-index]');
      if (!tr) return;
      const target = Number(tr.dataset.index) + (event.key === 'ArrowDown' ? 1 : -1);
      if (target < 0 || target >= order.length) return;
      // Scroll the target row into the window (which renders it), then move the focus to it.
      rows.scrollToRow(target);
      body.querySelector(`tr[data-index="${target}"]`)?.focus({ preventScroll: true });
    }
  });
  draw(true);
}
