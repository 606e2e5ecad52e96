// Trace view (trace6.md §12.3): semantic call/data graph laid out left to right with dagre, nodes coloured
// by heat (self time or memory), pan/zoom/fit/reset, search, span tree, inspector, SVG export.
// Big graphs: dagre is super-linear, so at most MAX_NODES nodes are laid out at once — the top
// levels of the tree plus the neighbourhood of the selected node — and the note says so.
import { Graph, layout } from '@dagrejs/dagre';
import { el, svg, clear, setText } from '../dom.js';
import { formatBytes, formatMs } from '../format.js';
import { heat, heatColor } from '../model.js';
import { createSpanTree } from './span_tree.js';

const MAX_NODES = 160;
const NODE_W = 180;
const NODE_H = 44;

export function createTraceView(payload, index, inspector) {
  const canvas = document.getElementById('graph-canvas');
  const note = document.getElementById('graph-note');
  const tooltip = document.getElementById('graph-tooltip');
  const allEdges = payload.views.trace.edges;
  const total = payload.views.trace.nodes.length;
  let heatMode = 'time';
  let view = null; // {x, y, w, h} viewBox
  let bounds = null;
  let root = null;
  let shownFor = undefined;
  const tree = createSpanTree(payload, index, inspector);

  const visibleSet = (focus) => {
    const set = new Set();
    if (total <= MAX_NODES) {
      for (const node of payload.views.trace.nodes) set.add(node.id);
      return set;
    }
    // Whole levels from the roots while they fit in half the budget.
    let level = [...index.roots];
    while (level.length && set.size + level.length <= MAX_NODES / 2) {
      for (const n of level) set.add(n.id);
      level = level.flatMap((n) => index.children(n.id));
    }
    if (focus && index.byId.has(focus)) {
      let cur = index.byId.get(focus);
      const chain = [];
      while (cur && chain.length < 64) {
        chain.push(cur);
        cur = index.byId.get(cur.parent_id);
      }
      for (const n of chain) set.add(n.id);
      const parent = index.byId.get(focus).parent_id;
      const siblings = parent ? index.children(parent) : [];
      for (const n of siblings.slice(0, 20)) set.add(n.id);
      for (const n of index.children(focus).slice(0, MAX_NODES - set.size)) set.add(n.id);
    }
    return set;
  };

  const render = (focus) => {
    shownFor = focus;
    const ids = visibleSet(focus);
    const g = new Graph({ multigraph: false });
    g.setGraph({ rankdir: 'LR', nodesep: 14, ranksep: 60, marginx: 20, marginy: 20 });
    g.setDefaultEdgeLabel(() => ({}));
    for (const id of ids) g.setNode(id, { width: NODE_W, height: NODE_H });
    const edges = [];
    const showData = total <= MAX_NODES;
    for (const e of allEdges) {
      if (e.kind === 'data') {
        if (!showData) continue;
        for (const t of [e.from, e.to])
          if (!g.hasNode(t)) g.setNode(t, { width: 90, height: 28, tensor: true });
      } else if (!ids.has(e.from) || !ids.has(e.to)) continue;
      if (e.from === e.to || g.hasEdge(e.from, e.to)) continue;
      g.setEdge(e.from, e.to, { edge: e, width: 60, height: 14, labelpos: 'c' });
      edges.push(e);
    }
    layout(g);
    note.textContent =
      ids.size < total
        ? `Showing ${ids.size} of ${total.toLocaleString('en-US')} nodes (the top of the tree and the neighbourhood of the selection); pick a span in the tree or search to move around. Tensor data edges are shown for graphs up to ${MAX_NODES} nodes.`
        : `${total} nodes, ${edges.length} edges.`;

    const size = g.graph();
    root = svg('svg', {
      xmlns: 'http://www.w3.org/2000/svg',
      class: 'graph',
      role: 'img',
      'aria-label': 'Execution graph',
    });
    const defs = svg('defs');
    const marker = svg('marker', {
      id: 'arrow',
      viewBox: '0 0 10 10',
      refX: 10,
      refY: 5,
      markerWidth: 6,
      markerHeight: 6,
      orient: 'auto-start-reverse',
    });
    marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrow' }));
    defs.append(marker);
    root.append(defs);
    const edgeLayer = svg('g', { class: 'edges' });
    const nodeLayer = svg('g', { class: 'nodes' });
    root.append(edgeLayer, nodeLayer);
    for (const key of g.edges()) {
      const data = g.edge(key);
      const pts = data.points || [];
      if (!pts.length) continue;
      const d = pts.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
      const path = svg('path', {
        d,
        class: `edge edge-${data.edge.kind}`,
        'marker-end': 'url(#arrow)',
      });
      edgeLayer.append(path);
      if (data.x !== undefined) {
        const label = svg('text', {
          x: data.x,
          y: data.y,
          class: 'edge-label',
          'text-anchor': 'middle',
        });
        setText(label, data.edge.label);
        edgeLayer.append(label);
      }
    }
    for (const id of g.nodes()) {
      const box = g.node(id);
      const node = index.byId.get(id);
      const group = svg('g', {
        class: `node${box.tensor ? ' tensor' : ''}`,
        transform: `translate(${box.x - box.width / 2},${box.y - box.height / 2})`,
        'data-id': id,
      });
      const shape = box.tensor
        ? svg('ellipse', {
            cx: box.width / 2,
            cy: box.height / 2,
            rx: box.width / 2,
            ry: box.height / 2,
          })
        : svg('rect', { width: box.width, height: box.height, rx: 6 });
      if (node) shape.setAttribute('fill', heatColor(heat(node, heatMode, index)));
      group.append(shape);
      const title = svg('text', {
        x: box.tensor ? box.width / 2 : 8,
        y: box.tensor ? box.height / 2 + 4 : 17,
        'text-anchor': box.tensor ? 'middle' : 'start',
      });
      setText(title, clip(node ? displayName(node) : id, box.tensor ? 12 : 26));
      group.append(title);
      if (node) {
        const sub = svg('text', { x: 8, y: 34, class: 'sub' });
        sub.textContent =
          heatMode === 'memory'
            ? `peak ${formatBytes(node.peak_bytes).split(' (')[0]}`
            : `self ${formatMs(node.self_time_ms)}`;
        group.append(sub);
        if (id === inspector.selected) group.classList.add('selected');
      }
      nodeLayer.append(group);
    }
    bounds = { x: 0, y: 0, w: Math.max(size.width || 1, 1), h: Math.max(size.height || 1, 1) };
    clear(canvas).append(root);
    fitView();
  };

  const applyView = () =>
    root && root.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
  const fitView = () => {
    view = { ...bounds };
    applyView();
  };
  const resetView = () => {
    const w = canvas.clientWidth || 800;
    const h = canvas.clientHeight || 500;
    view = { x: 0, y: 0, w, h };
    applyView();
  };
  const zoom = (factor, cx = 0.5, cy = 0.5) => {
    const nw = view.w * factor;
    const nh = view.h * factor;
    view = { x: view.x + (view.w - nw) * cx, y: view.y + (view.h - nh) * cy, w: nw, h: nh };
    applyView();
  };

  canvas.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      const r = canvas.getBoundingClientRect();
      zoom(
        event.deltaY > 0 ? 1.2 : 1 / 1.2,
        (event.clientX - r.left) / r.width,
        (event.clientY - r.top) / r.height,
      );
    },
    { passive: false },
  );
  let drag = null;
  canvas.addEventListener('mousedown', (event) => {
    drag = { x: event.clientX, y: event.clientY, moved: false };
  });
  window.addEventListener('mouseup', () => {
    drag = null;
  });
  canvas.addEventListener('mousemove', (event) => {
    if (drag) {
      const r = canvas.getBoundingClientRect();
      const dx = ((event.clientX - drag.x) / r.width) * view.w;
      const dy = ((event.clientY - drag.y) / r.height) * view.h;
      if (Math.abs(dx) + Math.abs(dy) > 0) drag.moved = true;
      view.x -= dx;
      view.y -= dy;
      drag.x = event.clientX;
      drag.y = event.clientY;
      applyView();
      return;
    }
    const group = event.target.closest && event.target.closest('g.node');
    const node = group && index.byId.get(group.dataset.id);
    if (!node) {
      tooltip.hidden = true;
      return;
    }
    setText(
      tooltip,
      `${node.label} · ${node.kind} · self ${formatMs(node.self_time_ms)} · total ${formatMs(node.total_time_ms)} · peak ${formatBytes(node.peak_bytes)}`,
    );
    const r = canvas.getBoundingClientRect();
    tooltip.style.left = `${event.clientX - r.left + 14}px`;
    tooltip.style.top = `${event.clientY - r.top + canvas.offsetTop + 14}px`;
    tooltip.hidden = false;
  });
  canvas.addEventListener('mouseleave', () => {
    tooltip.hidden = true;
  });
  canvas.addEventListener('click', (event) => {
    const group = event.target.closest && event.target.closest('g.node');
    if (group && index.byId.has(group.dataset.id)) inspector.select(group.dataset.id, 'graph');
  });
  document.getElementById('graph-fit').addEventListener('click', fitView);
  document.getElementById('graph-reset').addEventListener('click', resetView);
  document.getElementById('graph-zoom-in').addEventListener('click', () => zoom(1 / 1.25));
  document.getElementById('graph-zoom-out').addEventListener('click', () => zoom(1.25));
  for (const radio of document.querySelectorAll('input[name="heat-mode"]')) {
    radio.addEventListener('change', () => {
      heatMode = radio.value;
      if (root) render(shownFor);
    });
  }
  document.getElementById('export-svg').addEventListener('click', () => {
    if (!root) return;
    const copy = root.cloneNode(true);
    copy.setAttribute('viewBox', `${bounds.x} ${bounds.y} ${bounds.w} ${bounds.h}`);
    copy.setAttribute('width', bounds.w);
    copy.setAttribute('height', bounds.h);
    const style = document.createElementNS('http://www.w3.org/2000/svg', 'style');
    style.textContent =
      'text{font:12px sans-serif;fill:#111}.sub{font-size:10px}.edge{fill:none;stroke:#777}.edge-data{stroke-dasharray:4 3;stroke:#b07aa1}.edge-label{font-size:9px;fill:#555}rect,ellipse{stroke:#333}';
    copy.prepend(style);
    const blob = new Blob([new XMLSerializer().serializeToString(copy)], { type: 'image/svg+xml' });
    const link = el('a', { href: URL.createObjectURL(blob), download: 'candle-graph-trace.svg' });
    document.body.append(link);
    link.click();
    link.remove();
  });

  inspector.onSelect((id, source) => {
    tree.reveal(id, source);
    if (!root) return;
    const inGraph = root.querySelector(`g.node[data-id="${CSS.escape(id)}"]`);
    if (!inGraph && source !== 'graph' && document.body.dataset.view === 'trace') render(id);
    for (const g of root.querySelectorAll('g.node.selected')) g.classList.remove('selected');
    root.querySelector(`g.node[data-id="${CSS.escape(id)}"]`)?.classList.add('selected');
  });

  return {
    /** Builds the span tree while the view is hidden (idle-time preparation in main.js). */
    prepare() {
      tree.ensure();
    },
    show() {
      tree.ensure();
      const want = inspector.selected;
      if (
        !root ||
        (want &&
          want !== shownFor &&
          total > MAX_NODES &&
          !root.querySelector(`g.node[data-id="${CSS.escape(want)}"]`))
      )
        render(want);
    },
  };
}

function clip(text, n) {
  const s = String(text);
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

// Path-like span names (`demo/update-1/forward`) show their last segment; the inspector has all.
function displayName(node) {
  const s = String(node.short_label ?? node.label);
  const i = s.lastIndexOf('/');
  return i >= 0 && i < s.length - 1 ? s.slice(i + 1) : s;
}
