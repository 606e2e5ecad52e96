// Overview view: what the TensorBoard profiler plugin's overview page gave PyTorch users, from the
// device work the trace recorded (payload views.overview, built from the evidence packet's
// gpu_trace). Per device, the measured step is split into parts that add up to its total, drawn
// as one stacked bar and listed with ms and shares; under it the key numbers (busy share, launch
// delays, host synchronization) and the packet's GPU findings. Every number is the payload's; the
// view only adds and divides, so the page says what `candle-graph query --kind gpu` says.
import { el, fields, section, table } from '../dom.js';
import { deviceWithModel, formatDuration, formatInt, formatShare, streamName } from '../format.js';

// The parts in the order they are stacked: device work, then device idle, then host-only time.
// `cls` picks the colour (style.css .part-*), shared with the timeline's lanes.
export const PARTS = [
  {
    key: 'compute_ns',
    cls: 'compute',
    label: 'Compute',
    hint: 'time at least one compute kernel ran on the device',
  },
  {
    key: 'communication_exposed_ns',
    cls: 'communication',
    label: 'Communication not under compute',
    hint: 'time a communication kernel (NCCL, RCCL, HCCL) ran and no compute kernel did',
  },
  {
    key: 'memory_exposed_ns',
    cls: 'memory',
    label: 'Memory copies and sets alone',
    hint: 'time only memcpys or memsets ran: no compute and no communication kernel',
  },
  {
    key: 'idle_host_wait_ns',
    cls: 'idle-host',
    label: 'Idle: host wait',
    hint: 'idle because the host had not yet launched the next work',
  },
  {
    key: 'idle_kernel_wait_ns',
    cls: 'idle-kernel',
    label: 'Idle: kernel wait',
    hint: 'idle in short gaps between back-to-back work (under 30 µs)',
  },
  {
    key: 'idle_other_ns',
    cls: 'idle-other',
    label: 'Idle: other',
    hint: 'idle for another reason: synchronization, dependencies between streams',
  },
  {
    key: 'host_only_ns',
    cls: 'host-only',
    label: 'Host only',
    hint: 'part of the step before the device’s first work or after its last',
  },
];

/** Whether there is device work to give an overview of (else no Overview entry at all). */
export const hasOverview = (payload) => (payload.views.overview?.devices || []).length > 0;

// Milliseconds with two decimals and grouped thousands ("12,854.05 ms"): the table's unit is
// fixed so its column reads at a glance; the exact ns are in each cell's tooltip. Rounded by
// toFixed, as formatMs and the findings' text round, so the same value reads the same everywhere.
const ms = (ns) => {
  const [whole, frac] = (ns / 1e6).toFixed(2).split('.');
  return `${Number(whole).toLocaleString('en-US')}.${frac} ms`;
};

function stackedBar(d) {
  const bar = el('div', {
    class: 'stack',
    role: 'img',
    'aria-label': `${deviceWithModel(d.device, d.gpu_model)}: ${PARTS.map((p) => `${p.label} ${formatShare(d[p.key], d.total_ns)}`).join(', ')}`,
  });
  for (const p of PARTS) {
    if (!d[p.key]) continue;
    const seg = el('span', {
      class: `stack-part part-${p.cls}`,
      'data-part': p.key,
      title: `${p.label}: ${ms(d[p.key])} (${formatShare(d[p.key], d.total_ns)}) — ${p.hint}`,
    });
    // Widths through the CSSOM (the page's CSP allows no style attributes in markup).
    seg.style.width = `${(100 * d[p.key]) / d.total_ns}%`;
    bar.append(seg);
  }
  return bar;
}

function partsTable(d, i) {
  const row = (label, ns, attrs, swatch) =>
    el(
      'tr',
      attrs,
      el(
        'th',
        { scope: 'row' },
        swatch ? el('span', { class: `swatch part-${swatch}` }) : null,
        label,
      ),
      el('td', { class: 'num', 'data-value': ns, title: `${formatInt(ns)} ns` }, ms(ns)),
      el('td', { class: 'num' }, formatShare(ns, d.total_ns)),
    );
  const busy = d.compute_ns + d.communication_exposed_ns + d.memory_exposed_ns;
  const deviceWindow = busy + d.idle_host_wait_ns + d.idle_kernel_wait_ns + d.idle_other_ns;
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      { class: 'parts', id: `overview-parts-${i}` },
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          el('th', { scope: 'col' }, 'Part'),
          el('th', { scope: 'col', class: 'num' }, 'Time'),
          el('th', { scope: 'col', class: 'num' }, 'Share'),
        ),
      ),
      el(
        'tbody',
        null,
        PARTS.map((p) => row(p.label, d[p.key], { 'data-part': p.key, title: p.hint }, p.cls)),
      ),
      el(
        'tfoot',
        null,
        row('Busy (the first three)', busy, { 'data-part': 'busy' }),
        row('Device window (busy + idle)', deviceWindow, { 'data-part': 'window' }),
        row('Total (window + host only)', deviceWindow + d.host_only_ns, { 'data-part': 'total' }),
      ),
    ),
  );
}

function keyNumbers(d) {
  const l = d.launches;
  const stalls = d.sync_stalls || [];
  return fields([
    ['Busy', `${ms(d.busy_ns)}, ${formatShare(d.busy_ns, d.window_ns)} of the device window`],
    [
      'Launches',
      l.count
        ? `${formatInt(l.count)} · launch-to-start delay p50 ${formatDuration(l.p50_delay_ns)}, p95 ${formatDuration(l.p95_delay_ns)}, max ${formatDuration(l.max_delay_ns)} · ${formatInt(l.delay_outliers)} over 100 µs`
        : 'none recorded (no runtime call with a correlation)',
    ],
    [
      'Communication hidden under compute',
      d.comm_compute_overlap === null || d.comm_compute_overlap === undefined
        ? 'no communication'
        : `${(100 * d.comm_compute_overlap).toFixed(1)}% of ${ms(d.communication_ns)}`,
    ],
    [
      'Host blocked in synchronizing calls',
      stalls.length
        ? stalls
            .map((s) => `${s.call} ${formatDuration(s.ns)} (${formatInt(s.count)} calls)`)
            .join(' · ')
        : 'none',
    ],
    ['Device-side waits (stream/event syncs)', d.sync_ns ? formatDuration(d.sync_ns) : 'none'],
  ]);
}

function streamsTable(d) {
  const t = (key, label) => ({ label, num: true, value: (s) => ms(s[key]) });
  return table(
    [
      { label: 'Stream', value: (s) => streamName(s.stream) },
      t('busy_ns', 'Busy'),
      t('host_wait_ns', 'Host wait'),
      t('kernel_wait_ns', 'Kernel wait'),
      t('other_wait_ns', 'Other wait'),
    ],
    d.streams,
    { caption: 'Per stream: busy time and each idle gap by its cause (measured on the stream)' },
  );
}

export function renderOverview(panel, payload) {
  const o = payload.views.overview;
  panel.append(el('h1', null, 'Overview'));
  panel.append(
    el(
      'p',
      { class: 'note', id: 'overview-definition' },
      'Per device, the measured step split into parts that add up to its total. ',
      el('strong', null, 'Compute'),
      ' is the time at least one compute kernel ran; ',
      el('strong', null, 'communication'),
      ' the time a communication kernel ran and no compute kernel did (communication hidden under compute is counted as compute); ',
      el('strong', null, 'memory'),
      ' the time only copies or memsets ran. These three make the device’s busy time, the union of its work. ',
      el('strong', null, 'Idle'),
      ' is the rest of the device window (its first work’s start to its last work’s end), split by its gaps’ causes: host wait (the work that ended a gap was launched only after the device went idle), kernel wait (a gap under 30 µs) and other. ',
      el('strong', null, 'Host only'),
      ' is the time of the step outside the device window. Compute + communication + memory + idle + host only = total = the measured step, extended to the device window’s end when device work ran past the step.',
    ),
  );
  o.devices.forEach((d, i) => {
    const past = d.total_ns - o.step_ns;
    panel.append(
      section(
        deviceWithModel(d.device, d.gpu_model),
        el(
          'p',
          { class: 'totals', id: `overview-total-${i}` },
          `Total ${ms(d.total_ns)}: the measured step (${ms(o.step_ns)})`,
          past > 0 ? `, extended by ${ms(past)} of device work after its end` : '',
          `; device window ${ms(d.window_ns)}.`,
        ),
        stackedBar(d),
        el(
          'div',
          { class: 'stack-legend' },
          PARTS.map((p) =>
            el(
              'span',
              { class: 'legend-item' },
              el('span', { class: `swatch part-${p.cls}` }),
              p.label,
            ),
          ),
        ),
        partsTable(d, i),
        keyNumbers(d),
        streamsTable(d),
        d.streams_total > d.streams.length
          ? el(
              'p',
              { class: 'note' },
              `${formatInt(d.streams_total)} streams; the first ${formatInt(d.streams.length)} are listed.`,
            )
          : null,
      ),
    );
  });
  panel.append(
    section(
      'GPU findings',
      o.findings.length
        ? el(
            'ul',
            { id: 'overview-findings' },
            o.findings.map((f) => el('li', null, f)),
          )
        : el('p', { class: 'empty', id: 'overview-findings' }, 'No GPU finding: no rule fired.'),
    ),
  );
}
