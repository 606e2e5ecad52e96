// Timeline view: a flame chart of spans and ops on the time axis, like the TensorFlow
// trace viewer. Canvas drawing with level of detail: per row the items are sorted by start, the
// visible window is found by binary search, and items narrower than a pixel are merged into one
// bar per pixel, so 10^6 items draw in time proportional to the screen width × rows.
import { el, onWidthChange } from '../dom.js';
import { formatMs, formatNsAsMs } from '../format.js';
import { heatColor } from '../model.js';

const ROW = 20;

// Row per node: spans and top-level ops by their depth in the span tree; an op that another op
// encloses on its host thread (parent_op_id) one row below that op, so nested ops draw inside
// their parent, as in PyTorch's own trace view. Iterative: nesting chains can be long.
function timelineRows(nodes, index) {
  const row = new Map();
  for (const node of nodes) {
    const chain = [];
    let cur = node;
    while (
      cur &&
      !row.has(cur.id) &&
      cur.parent_op_id != null &&
      index.byId.has(cur.parent_op_id)
    ) {
      if (chain.length > nodes.length) break; // a malformed cycle cannot loop forever
      chain.push(cur);
      cur = index.byId.get(cur.parent_op_id);
    }
    let d = cur ? (row.get(cur.id) ?? index.depth.get(cur.id) ?? 0) : 0;
    if (cur && !row.has(cur.id)) row.set(cur.id, d);
    for (let i = chain.length - 1; i >= 0; i--) row.set(chain[i].id, ++d);
  }
  return row;
}

export function renderTimeline(panel, payload, index, inspector) {
  const nodes = payload.views.trace.nodes;
  const rows = [];
  let t0 = Infinity;
  let t1 = -Infinity;
  const rowOf = timelineRows(nodes, index);
  for (const node of nodes) {
    const d = rowOf.get(node.id);
    (rows[d] ||= []).push(node);
    if (node.start_ns < t0) t0 = node.start_ns;
    if (node.start_ns + node.total_time_ns > t1) t1 = node.start_ns + node.total_time_ns;
  }
  if (!Number.isFinite(t0)) {
    t0 = 0;
    t1 = 1;
  }
  if (t1 <= t0) t1 = t0 + 1;
  for (const row of rows) if (row) row.sort((a, b) => a.start_ns - b.start_ns);
  // Per row, the largest end seen so far: lets the binary search skip items that end before the view.
  const maxEnd = rows.map((row) => {
    const out = new Float64Array(row ? row.length : 0);
    let m = -Infinity;
    (row || []).forEach((n, i) => {
      m = Math.max(m, n.start_ns + n.total_time_ns);
      out[i] = m;
    });
    return out;
  });

  panel.append(el('h1', null, 'Timeline'));
  const help = el(
    'p',
    { class: 'note' },
    'Spans and ops on the time axis, one row per nesting level. Wheel or +/− to zoom, drag or ←/→ to pan, 0 to fit, click to inspect.',
  );
  const zoomIn = el('button', { type: 'button' }, 'Zoom in');
  const zoomOut = el('button', { type: 'button' }, 'Zoom out');
  const fit = el('button', { type: 'button' }, 'Fit');
  const range = el('span', { class: 'note', id: 'timeline-range', 'aria-live': 'polite' });
  const canvas = el('canvas', {
    class: 'flame',
    id: 'timeline-canvas',
    tabindex: '0',
    role: 'img',
    'aria-label': 'Flame chart of spans and ops over time',
  });
  const tip = el('div', { class: 'chart-tip', 'aria-hidden': 'true' });
  tip.hidden = true;
  panel.append(
    help,
    el('div', { class: 'graph-toolbar' }, fit, zoomIn, zoomOut, range),
    el('div', { class: 'chart-wrap' }, canvas, tip),
  );

  let viewStart = t0;
  let viewEnd = t1;
  let width = 800;
  const height = Math.max(rows.length, 1) * ROW + 24;
  const maxSelf = index.maxSelf || 1;

  const draw = () => {
    const css = getComputedStyle(document.documentElement);
    const ratio = window.devicePixelRatio || 1;
    width = Math.max(canvas.clientWidth, 320);
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    canvas.style.height = `${height}px`;
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const scale = width / (viewEnd - viewStart);
    ctx.font = '11px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    const fg = css.getPropertyValue('--on-bar').trim() || '#000';
    for (let d = 0; d < rows.length; d++) {
      const row = rows[d];
      if (!row) continue;
      const ends = maxEnd[d];
      // First item whose running max end reaches the view start.
      let lo = 0,
        hi = row.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (ends[mid] < viewStart) lo = mid + 1;
        else hi = mid;
      }
      const y = 24 + d * ROW;
      let mergedPixel = -1;
      for (let i = lo; i < row.length; i++) {
        const n = row[i];
        if (n.start_ns > viewEnd) break;
        const x0 = (n.start_ns - viewStart) * scale;
        const w = n.total_time_ns * scale;
        if (w < 1) {
          // Level of detail: one bar per pixel column for everything too narrow to see.
          const px = Math.floor(x0);
          if (px === mergedPixel) continue;
          mergedPixel = px;
          ctx.fillStyle = heatColor(n.self_time_ns / maxSelf);
          ctx.fillRect(px, y, 1, ROW - 2);
          continue;
        }
        ctx.fillStyle = heatColor(n.self_time_ns / maxSelf);
        const cx = Math.max(x0, -1);
        const cw = Math.min(x0 + w, width + 1) - cx;
        ctx.fillRect(cx, y, Math.max(cw - 0.5, 1), ROW - 2);
        if (n.id === inspector.selected) {
          ctx.strokeStyle = fg;
          ctx.lineWidth = 2;
          ctx.strokeRect(cx + 1, y + 1, Math.max(cw - 2, 1), ROW - 4);
        }
        if (cw > 40) {
          ctx.fillStyle = fg;
          ctx.save();
          ctx.beginPath();
          ctx.rect(cx, y, cw, ROW - 2);
          ctx.clip();
          ctx.fillText(n.short_label ?? n.label, cx + 3, y + ROW / 2 - 1);
          ctx.restore();
        }
      }
    }
    // Time axis.
    ctx.fillStyle = css.getPropertyValue('--fg-muted').trim() || '#666';
    ctx.textBaseline = 'top';
    for (let i = 0; i <= 5; i++) {
      const t = viewStart + ((viewEnd - viewStart) * i) / 5;
      const label = formatNsAsMs(t - t0);
      const x = Math.min((i * width) / 5, width - ctx.measureText(label).width - 2);
      ctx.fillText(label, Math.max(x, 2), 4);
    }
    range.textContent = `Showing ${formatNsAsMs(viewStart - t0)} – ${formatNsAsMs(viewEnd - t0)} of ${formatNsAsMs(t1 - t0)}`;
  };

  let frame = 0;
  const redraw = () => {
    if (!frame)
      frame = requestAnimationFrame(() => {
        frame = 0;
        draw();
      });
  };
  const zoom = (factor, anchorX = width / 2) => {
    const span = viewEnd - viewStart;
    const anchor = viewStart + (anchorX / width) * span;
    const next = Math.min(Math.max(span * factor, 100), (t1 - t0) * 1.05);
    viewStart = anchor - ((anchor - viewStart) / span) * next;
    viewEnd = viewStart + next;
    redraw();
  };
  const pan = (dx) => {
    const dt = (dx / width) * (viewEnd - viewStart);
    viewStart += dt;
    viewEnd += dt;
    redraw();
  };
  const hit = (x, y) => {
    const d = Math.floor((y - 24) / ROW);
    const row = rows[d];
    if (!row || y < 24) return null;
    const t = viewStart + (x / width) * (viewEnd - viewStart);
    const tolerance = (viewEnd - viewStart) / width; // one pixel
    let lo = 0,
      hi = row.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (maxEnd[d][mid] < t - tolerance) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < row.length && row[i].start_ns <= t + tolerance; i++) {
      const n = row[i];
      if (n.start_ns - tolerance <= t && t <= n.start_ns + n.total_time_ns + tolerance) return n;
    }
    return null;
  };
  fit.addEventListener('click', () => {
    viewStart = t0;
    viewEnd = t1;
    redraw();
  });
  zoomIn.addEventListener('click', () => zoom(0.5));
  zoomOut.addEventListener('click', () => zoom(2));
  canvas.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      zoom(event.deltaY > 0 ? 1.25 : 0.8, event.offsetX);
    },
    { passive: false },
  );
  let drag = null;
  canvas.addEventListener('mousedown', (event) => {
    drag = { x: event.clientX, moved: false };
  });
  window.addEventListener('mouseup', (event) => {
    if (drag && !drag.moved) {
      const n = hit(event.offsetX, event.offsetY);
      if (n && event.target === canvas) {
        inspector.select(n.id, 'timeline');
        redraw();
      }
    }
    drag = null;
  });
  canvas.addEventListener('mousemove', (event) => {
    if (drag) {
      const dx = event.clientX - drag.x;
      if (Math.abs(dx) > 2) drag.moved = true;
      drag.x = event.clientX;
      pan(-dx);
      return;
    }
    const n = hit(event.offsetX, event.offsetY);
    if (!n) {
      tip.hidden = true;
      return;
    }
    tip.textContent = `${n.label} (${n.kind}) · start ${formatNsAsMs(n.start_ns - t0)} · total ${formatMs(n.total_time_ms)} · self ${formatMs(n.self_time_ms)}`;
    tip.style.left = `${event.offsetX + 12}px`;
    tip.style.top = `${event.offsetY + 12}px`;
    tip.hidden = false;
  });
  canvas.addEventListener('mouseleave', () => {
    tip.hidden = true;
  });
  canvas.addEventListener('keydown', (event) => {
    const keys = {
      '+': () => zoom(0.5),
      '=': () => zoom(0.5),
      '-': () => zoom(2),
      0: () => fit.click(),
      ArrowLeft: () => pan(-width / 10),
      ArrowRight: () => pan(width / 10),
    };
    if (keys[event.key]) {
      event.preventDefault();
      keys[event.key]();
    }
  });
  inspector.onSelect(() => redraw());
  document.addEventListener('cg-theme-change', redraw);
  onWidthChange(canvas, redraw);
  draw();
}
