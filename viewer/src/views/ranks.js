// Ranks view: the candle-graph/ranks/1 document of `candle-graph ranks --html` (docs/ranks.md),
// the ranks of one distributed run side by side. Every number is the document's own; the view
// only subtracts (the parts of the stacked bars) and scales (bar widths, heat colours), so the
// page says what `ranks -o` says. Numeric cells keep the exact ns in data-value and the tooltip.
import { el, section } from '../dom.js';
import { deviceWithModel, formatDuration, formatInt, formatShare, visibleText } from '../format.js';
import { heatColor } from '../model.js';

// The parts of a rank's device window, in stacking order. busy = compute + exposed communication
// + memory alone, because busy is the union of all device work and compute, communication and
// memory are its classes; window = busy + idle. `cls` reuses the Overview's colours.
const PARTS = [
  { key: 'compute', cls: 'compute', label: 'Compute' },
  { key: 'exposed', cls: 'communication', label: 'Exposed communication' },
  { key: 'memory', cls: 'memory', label: 'Memory copies/sets alone' },
  { key: 'idle', cls: 'idle-other', label: 'Idle' },
];

const partsOf = (r) => ({
  compute: r.compute_ns,
  exposed: r.exposed_communication_ns,
  // Clamped: a document from another writer must not draw a negative segment.
  memory: Math.max(0, r.busy_ns - r.compute_ns - r.exposed_communication_ns),
  idle: r.idle_ns,
});

/** A numeric cell: formatted text, exact ns in data-value and in the tooltip. */
const nsCell = (ns) =>
  el('td', { class: 'num', 'data-value': ns, title: `${formatInt(ns)} ns` }, formatDuration(ns));

// columns: [{label, num, cell: row => td}]; rows carry data-rank when they are one rank's.
function dataTable(id, caption, columns, rows, rowAttrs = () => null) {
  if (!rows.length) return el('p', { class: 'empty', id }, 'None.');
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'table',
      { id },
      el('caption', null, caption),
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          columns.map((c) => el('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)),
        ),
      ),
      el(
        'tbody',
        null,
        rows.map((row) =>
          el(
            'tr',
            rowAttrs(row),
            columns.map((c) => c.cell(row)),
          ),
        ),
      ),
    ),
  );
}

// Rank × step: the step wall time of each rank, coloured from the fastest (cool) to the slowest
// (hot) cell of the whole run, so one slow rank or one slow step stands out as a row or a column.
// A last step cut short by the profiler's stop is shown uncoloured and out of the scale: its wall
// time says when the profiler stopped.
function heatMap(ranks) {
  const steps = [...new Set(ranks.flatMap((r) => r.steps.map((s) => s.step)))].sort(
    (a, b) => a - b,
  );
  const walls = ranks.flatMap((r) => r.steps.filter((s) => !s.cut_short).map((s) => s.wall_ns));
  const cutShort = ranks.some((r) => r.steps.some((s) => s.cut_short));
  if (!steps.length) return el('p', { class: 'empty', id: 'ranks-heatmap' }, 'No profiler step.');
  const lo = walls.length ? Math.min(...walls) : 0;
  const hi = walls.length ? Math.max(...walls) : 0;
  const cell = (r, step) => {
    const s = r.steps.find((x) => x.step === step);
    if (!s) return el('td', { class: 'num heat-cell', 'data-step': step }, '–');
    const cut = s.cut_short ? ", cut short by the profiler's stop (not coloured)" : '';
    const td = el(
      'td',
      {
        class: s.cut_short ? 'num heat-cell cut-short' : 'num heat-cell',
        'data-step': step,
        'data-value': s.wall_ns,
        ...(s.cut_short ? { 'data-cut-short': '' } : {}),
        title: `rank ${r.rank}, step ${step}: ${formatInt(s.wall_ns)} ns${cut}`,
      },
      s.cut_short ? `${formatDuration(s.wall_ns)} (cut short)` : formatDuration(s.wall_ns),
    );
    // Through the CSSOM: the page's CSP allows no style attributes in markup.
    if (!s.cut_short) td.style.background = heatColor(hi > lo ? (s.wall_ns - lo) / (hi - lo) : 0);
    return td;
  };
  // The legend is a paragraph, not a caption: a caption is as narrow as this auto-width table.
  return el(
    'div',
    { class: 'table-wrap' },
    el(
      'p',
      { class: 'note', id: 'ranks-heatmap-legend' },
      `Step wall time per rank and profiler step; colour from ${formatDuration(lo)} (blue) to ${formatDuration(hi)} (red)${cutShort ? '; a last step cut short by the profiler’s stop is left uncoloured' : ''}.`,
    ),
    el(
      'table',
      { id: 'ranks-heatmap', class: 'heatmap' },
      el(
        'thead',
        null,
        el(
          'tr',
          null,
          el('th', { scope: 'col' }, 'Rank'),
          steps.map((s) => el('th', { scope: 'col', class: 'num' }, `Step ${s}`)),
        ),
      ),
      el(
        'tbody',
        null,
        ranks.map((r) =>
          el(
            'tr',
            { 'data-rank': r.rank },
            el('th', { scope: 'row' }, String(r.rank)),
            steps.map((s) => cell(r, s)),
          ),
        ),
      ),
    ),
  );
}

// One bar per rank, all on one scale (the longest device window), so lengths compare across ranks.
function timeBars(ranks) {
  const windowOf = (r) => r.busy_ns + r.idle_ns;
  const widest = Math.max(1, ...ranks.map(windowOf));
  return el(
    'div',
    { class: 'rank-bars', id: 'ranks-bars' },
    ranks.map((r) => {
      const parts = partsOf(r);
      const bar = el('div', {
        class: 'stack rank-stack',
        role: 'img',
        'aria-label': `rank ${r.rank}: ${PARTS.map((p) => `${p.label} ${formatDuration(parts[p.key])}`).join(', ')}`,
      });
      for (const p of PARTS) {
        if (!parts[p.key]) continue;
        const seg = el('span', {
          class: `stack-part part-${p.cls}`,
          'data-part': p.key,
          title: `rank ${r.rank} ${p.label}: ${formatDuration(parts[p.key])} (${formatShare(parts[p.key], windowOf(r))} of its device window)`,
        });
        seg.style.width = `${(100 * parts[p.key]) / widest}%`;
        bar.append(seg);
      }
      return el(
        'div',
        { class: 'rank-bar', 'data-rank': r.rank },
        el('span', { class: 'rank-label' }, `rank ${r.rank}`),
        bar,
      );
    }),
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
  );
}

// The rank's own viewer page (`ranks --rank-pages`), opened at its Timeline view; a plain link,
// so the page is loaded only when asked for.
function pageCell(page, rank) {
  if (!page || !page.href) return el('td', { class: 'rank-page' }, '–');
  return el(
    'td',
    { class: 'rank-page' },
    el(
      'a',
      { href: `${page.href}#timeline`, title: visibleText(page.file), 'data-rank-page': rank },
      'timeline',
    ),
  );
}

// A rank whose trace health does not trust is marked, with the reason in its tooltip: its
// numbers in every table here may be that wrong (ranks.md, `rank_untrusted`).
function rankCell(r) {
  if (!r.untrusted) return el('th', { scope: 'row' }, String(r.rank));
  return el(
    'th',
    {
      scope: 'row',
      class: 'untrusted',
      title: `untrusted: ${visibleText(r.untrusted)}`,
      'data-untrusted': '',
    },
    `${r.rank} (untrusted)`,
  );
}

// The device, with its GPU's model unless every rank names the same one (the caption says it).
function gpuText(r, oneModel) {
  if (!r.device) return '—';
  return deviceWithModel(r.device, oneModel ? null : r.gpu_model);
}

function timeTable(ranks, pages) {
  const ns = (label, value) => ({ label, num: true, cell: (r) => nsCell(value(r)) });
  const pageOf = new Map(pages.map((p) => [p.rank, p]));
  const models = new Set(ranks.map((r) => r.gpu_model));
  const oneModel = models.size === 1 && !models.has(null) && !models.has(undefined);
  return dataTable(
    'ranks-time',
    'GPU time of the measured region per rank (summed over its devices)' +
      (oneModel ? `; every rank on ${ranks[0].gpu_model}` : ''),
    [
      { label: 'Rank', cell: rankCell },
      // The base name: full paths of one run share a long directory that would squeeze the
      // numbers; the path stays in the tooltip and data-file.
      {
        label: 'File',
        cell: (r) =>
          el(
            'td',
            { class: 'file', title: visibleText(r.file), 'data-file': r.file },
            r.file.split('/').pop(),
          ),
      },
      // The device, and its GPU's model where the trace names it: ranks on a slower model
      // straggle for the hardware's sake (ranks.md, findings).
      { label: 'GPU', cell: (r) => el('td', { class: 'gpu' }, gpuText(r, oneModel)) },
      ns('Compute', (r) => r.compute_ns),
      ns('Exposed comm.', (r) => r.exposed_communication_ns),
      ns('Memory alone', (r) => partsOf(r).memory),
      ns('Idle', (r) => r.idle_ns),
      ns('Busy', (r) => r.busy_ns),
      ns('Communication', (r) => r.communication_ns),
      ns('Hidden comm.', (r) => r.communication_ns - r.exposed_communication_ns),
      ...(pages.length
        ? [{ label: 'Own page', cell: (r) => pageCell(pageOf.get(r.rank), r.rank) }]
        : []),
    ],
    ranks,
    (r) => ({ 'data-rank': r.rank }),
  );
}

function listOr(id, items, text, none) {
  return items.length
    ? el(
        'ul',
        { id },
        items.map((x) => el('li', null, text(x))),
      )
    : el('p', { class: 'empty', id }, none);
}

export function renderRanks(panel, doc) {
  const ranks = doc.ranks || [];
  panel.append(el('h1', null, 'Ranks'));
  panel.append(
    el(
      'p',
      { class: 'note', id: 'ranks-definition' },
      'Per rank, the measured region’s device window (first device work to last) split into parts that add up to it: ',
      el('strong', null, 'busy = compute + exposed communication + memory copies/sets alone'),
      ' (busy is the union of all device work) and ',
      el('strong', null, 'window = busy + idle'),
      '. Exposed communication is the communication no compute kernel hides; ',
      el('strong', null, 'hidden communication = communication − exposed communication'),
      ' ran under compute and is counted in compute. Clocks are aligned on the ends of matched collectives before any cross-rank number (docs/ranks.md).',
    ),
  );
  panel.append(section('Step wall time', heatMap(ranks)));
  panel.append(
    section(
      'Where each rank’s GPU time went',
      timeBars(ranks),
      timeTable(ranks, doc.rank_pages || []),
    ),
  );
  panel.append(
    section(
      'Stragglers',
      dataTable(
        'ranks-stragglers',
        'Ranks that arrived last at a matched collective: by times last, then the wait they imposed on the others',
        [
          { label: 'Rank', cell: (s) => el('th', { scope: 'row' }, String(s.rank)) },
          {
            label: 'Times last',
            num: true,
            cell: (s) =>
              el('td', { class: 'num', 'data-value': s.times_last }, formatInt(s.times_last)),
          },
          { label: 'Imposed wait', num: true, cell: (s) => nsCell(s.imposed_wait_ns) },
        ],
        doc.stragglers || [],
        (s) => ({ 'data-rank': s.rank }),
      ),
    ),
  );
  panel.append(
    section(
      'Collectives',
      dataTable(
        'ranks-collectives',
        'Arrival skew per matched collective (latest − earliest aligned start)',
        [
          { label: 'Name', cell: (c) => el('td', { class: 'name' }, c.name) },
          {
            label: 'Process group',
            cell: (c) => el('td', { class: 'name' }, c.process_group || '–'),
          },
          {
            label: 'Count',
            num: true,
            cell: (c) => el('td', { class: 'num', 'data-value': c.count }, formatInt(c.count)),
          },
          { label: 'Mean skew', num: true, cell: (c) => nsCell(c.mean_skew_ns) },
          { label: 'Max skew', num: true, cell: (c) => nsCell(c.max_skew_ns) },
        ],
        doc.collectives || [],
      ),
    ),
  );
  panel.append(
    section(
      'Clocks',
      dataTable(
        'ranks-clock',
        'Offset of each rank’s clock from the reference rank, and what disagreement is left after it',
        [
          { label: 'Rank', cell: (c) => el('th', { scope: 'row' }, String(c.rank)) },
          { label: 'Offset', num: true, cell: (c) => nsCell(c.offset_ns) },
          { label: 'Residual', num: true, cell: (c) => nsCell(c.residual_ns) },
        ],
        doc.clock || [],
        (c) => ({ 'data-rank': c.rank }),
      ),
    ),
  );
  panel.append(
    section(
      'Findings',
      listOr('ranks-findings', doc.findings || [], (f) => f, 'No finding: no rule fired.'),
    ),
  );
  panel.append(
    section(
      'Health',
      listOr(
        'ranks-health',
        doc.health || [],
        (h) => [el('code', null, h.code), ' ', h.message],
        'No health entry: every rank was read and matched.',
      ),
    ),
  );
}
