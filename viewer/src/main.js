// Entry point: reads the embedded candle-graph/viewer/4 payload, wires tabs, theme and the
// inspector, and renders the first view at once (trace6.md §12.2, §12.3). The other views are prepared one
// by one in idle time after the first paint, so a later tab switch only reveals DOM that already
// exists (docs/performance.md (Viewer): switching views ≤ 200 ms on a 1 M-op trace). A view that is
// asked for before its turn is rendered on demand, as before.
import { el, clear } from './dom.js';
import { formatInt } from './format.js';
import { renderEvidence } from './views/evidence.js';
import { createTraceView } from './views/trace.js';
import { renderTimeline } from './views/timeline.js';
import { renderSpanCosts } from './views/span_costs.js';
import { renderMemory } from './views/memory.js';
import { renderGpu } from './views/gpu.js';
import { hasKernels, hasOperators, renderKernels, renderOperators } from './views/tables.js';
import { hasOverview, renderOverview } from './views/overview.js';
import { createInspector } from './inspector.js';
import { buildIndex } from './model.js';
import { renderRanks } from './views/ranks.js';

// `candle-graph ranks --html` embeds its candle-graph/ranks/1 document in this same page shell
// (one CSP, theme and asset bundle for every page the tool writes); it gets the Ranks view only.
const RANKS_SCHEMA = 'candle-graph/ranks/1';

// `when`: views that only make sense for some traces. Operators needs host ops, Kernels and
// Overview device work: a trace without any gets no tab rather than an empty table
// (docs/compatibility.md). Overview comes first, as in the TensorBoard profiler plugin.
const ALL_VIEWS = [
  { id: 'overview', label: 'Overview', when: hasOverview },
  { id: 'evidence', label: 'Evidence' },
  { id: 'trace', label: 'Trace' },
  { id: 'timeline', label: 'Timeline' },
  { id: 'operators', label: 'Operators', when: hasOperators },
  { id: 'kernels', label: 'Kernels', when: hasKernels },
  { id: 'span_costs', label: 'Span costs' },
  { id: 'memory', label: 'Memory' },
  { id: 'gpu', label: 'GPU' },
];
// Trace-only controls (trace6.md §12.3: hidden outside the Trace view); the inspector also serves Span costs
// and Timeline, where selecting a row shows its details.
const INSPECTOR_VIEWS = new Set(['trace', 'span_costs', 'timeline']);

function readPayload() {
  const script = document.getElementById('cg-payload');
  const payload = JSON.parse(script.textContent);
  if (!payload || (payload.schema !== 'candle-graph/viewer/4' && payload.schema !== RANKS_SCHEMA)) {
    throw new Error(`unsupported payload schema ${payload && payload.schema}`);
  }
  return payload;
}

function setupTheme() {
  const button = document.getElementById('theme-toggle');
  let stored = null;
  try {
    stored = localStorage.getItem('cg-theme');
  } catch {
    stored = null; // storage can be disabled for file:// pages; the toggle still works.
  }
  const prefersDark =
    window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
  const apply = (theme) => {
    document.documentElement.dataset.theme = theme;
    button.setAttribute('aria-pressed', String(theme === 'dark'));
    button.textContent = theme === 'dark' ? 'Light theme' : 'Dark theme';
    document.dispatchEvent(new CustomEvent('cg-theme-change'));
  };
  apply(stored === 'dark' || stored === 'light' ? stored : prefersDark ? 'dark' : 'light');
  button.addEventListener('click', () => {
    const next = document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark';
    try {
      localStorage.setItem('cg-theme', next);
    } catch {
      /* not persisted; still applied */
    }
    apply(next);
  });
}

function main() {
  let payload;
  performance.mark('cg:start');
  try {
    payload = readPayload();
    performance.measure('cg:parse', 'cg:start');
  } catch (error) {
    const panel = document.getElementById('view-panel-evidence');
    clear(panel).append(
      el('p', { class: 'error' }, `This viewer file is damaged: ${error.message}`),
    );
    return;
  }
  setupTheme();
  if (payload.schema === RANKS_SCHEMA) {
    showRanks(payload);
    return;
  }
  const VIEWS = ALL_VIEWS.filter((v) => !v.when || v.when(payload));
  const index = buildIndex(payload);
  performance.measure('cg:index', 'cg:start');
  const inspector = createInspector(payload, index);
  const trace = createTraceView(payload, index, inspector);
  const renderers = {
    evidence: (panel) => renderEvidence(panel, payload),
    trace: () => trace.show(),
    timeline: (panel) => renderTimeline(panel, payload, index, inspector),
    span_costs: (panel) => renderSpanCosts(panel, payload, index, inspector),
    memory: (panel) => renderMemory(panel, payload),
    gpu: (panel) => renderGpu(panel, payload),
    operators: (panel) => renderOperators(panel, payload),
    kernels: (panel) => renderKernels(panel, payload),
    overview: (panel) => renderOverview(panel, payload),
  };
  const rendered = new Set();

  const health = payload.views.evidence.health;
  const coverage = health.coverage || {};
  const status = document.getElementById('status-line');
  status.dataset.coverage = JSON.stringify(coverage);
  status.textContent =
    `${health.trusted ? 'TRUSTED' : 'UNTRUSTED'} · ${payload.summary.entrypoint} · ` +
    `${formatInt(coverage.spans)} spans · ${formatInt(coverage.operations)} ops · ` +
    `${formatInt(coverage.memory_events)} memory events`;

  const tablist = document.getElementById('view-tabs');
  const tabs = VIEWS.map((view) =>
    el(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `view-tab-${view.id}`,
        'aria-controls': `view-panel-${view.id}`,
        'aria-selected': 'false',
        tabindex: '-1',
        'data-view': view.id,
      },
      view.label,
    ),
  );
  tablist.append(...tabs);

  let current = null;
  const show = (viewId, focus) => {
    if (current === viewId) return;
    current = viewId;
    for (const tab of tabs) {
      const selected = tab.dataset.view === viewId;
      tab.setAttribute('aria-selected', String(selected));
      tab.tabIndex = selected ? 0 : -1;
      if (selected && focus) tab.focus();
    }
    for (const view of VIEWS) {
      document.getElementById(`view-panel-${view.id}`).hidden = view.id !== viewId;
    }
    for (const node of document.querySelectorAll('.trace-only')) node.hidden = viewId !== 'trace';
    document.getElementById('inspector').hidden = !INSPECTOR_VIEWS.has(viewId);
    document.body.dataset.view = viewId;
    const panel = document.getElementById(`view-panel-${viewId}`);
    if (!rendered.has(viewId) || viewId === 'trace') {
      rendered.add(viewId);
      renderers[viewId](panel);
    }
    document.dispatchEvent(new CustomEvent('cg-view-shown', { detail: viewId }));
  };

  tablist.addEventListener('click', (event) => {
    const tab = event.target.closest('[role="tab"]');
    if (tab) show(tab.dataset.view, true);
  });
  // trace6.md §12.3: ArrowLeft/ArrowRight (and Up/Down for the vertical list), Home, End move between tabs.
  tablist.addEventListener('keydown', (event) => {
    const i = tabs.findIndex((t) => t.dataset.view === current);
    let next = null;
    if (event.key === 'ArrowRight' || event.key === 'ArrowDown') next = (i + 1) % tabs.length;
    else if (event.key === 'ArrowLeft' || event.key === 'ArrowUp')
      next = (i - 1 + tabs.length) % tabs.length;
    else if (event.key === 'Home') next = 0;
    else if (event.key === 'End') next = tabs.length - 1;
    if (next === null) return;
    event.preventDefault();
    show(tabs[next].dataset.view, true);
  });
  document.addEventListener('cg-show-view', (event) => show(event.detail, false));

  // A link may name the view to open (`viewer.html#timeline`, as the Ranks page links a rank's own
  // page); otherwise the payload's default.
  const linked = window.location.hash.slice(1);
  const initial = VIEWS.some((v) => v.id === linked)
    ? linked
    : VIEWS.some((v) => v.id === payload.default_view)
      ? payload.default_view
      : 'evidence';
  show(initial, false);
  performance.measure('cg:first-view', 'cg:start');
  document.documentElement.dataset.ready = 'true';
  prepareInIdleTime(
    VIEWS.map((v) => v.id).filter((id) => id !== initial),
    (viewId) => {
      // The Trace view lays its graph out for the visible canvas size, so only its span tree is
      // prepared hidden; the graph itself is cheap (≤ MAX_NODES nodes) and drawn on show.
      if (rendered.has(viewId)) return;
      if (viewId === 'trace') {
        trace.prepare();
        return;
      }
      rendered.add(viewId);
      renderers[viewId](document.getElementById(`view-panel-${viewId}`));
      performance.measure(`cg:prepared-${viewId}`, 'cg:start');
    },
  );
}

// The ranks page: one tab, one panel; the evidence panels of the shell stay hidden and empty.
function showRanks(doc) {
  document.title = 'candle-graph ranks';
  const ranks = doc.ranks || [];
  const world = [...new Set(ranks.map((r) => r.world_size).filter((w) => w !== null))];
  document.getElementById('status-line').textContent =
    `${formatInt(ranks.length)} ranks · world size ${world.length ? world.join(', ') : 'unknown'} · ` +
    `${formatInt((doc.collectives || []).length)} collectives matched · ` +
    `${formatInt((doc.health || []).length)} health entries`;
  document.getElementById('view-tabs').append(
    el(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: 'view-tab-ranks',
        'aria-controls': 'view-panel-ranks',
        'aria-selected': 'true',
        tabindex: '0',
        'data-view': 'ranks',
      },
      'Ranks',
    ),
  );
  for (const panel of document.querySelectorAll('[role="tabpanel"]')) panel.hidden = true;
  const panel = document.getElementById('view-panel-ranks');
  panel.hidden = false;
  document.body.dataset.view = 'ranks';
  renderRanks(panel, doc);
  document.documentElement.dataset.ready = 'true';
}

// Runs one preparation step per idle period (one view each), after the first frame was painted.
// requestIdleCallback yields to input, so a click during preparation is handled between steps.
function prepareInIdleTime(queue, step) {
  const idle = window.requestIdleCallback
    ? (fn) => window.requestIdleCallback(fn, { timeout: 1000 })
    : (fn) => setTimeout(fn, 16);
  const next = () => {
    const viewId = queue.shift();
    if (viewId === undefined) return;
    step(viewId);
    idle(next);
  };
  // Two frames: the first view must reach the screen before any preparation starts.
  requestAnimationFrame(() => requestAnimationFrame(() => idle(next)));
}

main();
