// Timeline view: a flame chart of spans and ops on the time axis, like the TensorFlow
// trace viewer, with one lane per device stream below the host rows, as in Perfetto. Canvas
// drawing with level of detail: per row and lane the items are sorted by start, the visible
// window is found by binary search, and items narrower than a pixel are merged into one bar per
// pixel, so 10^6 items draw in time proportional to the screen width × rows.
import { el, onWidthChange, setText } from '../dom.js';
import { formatDuration, formatMs, formatNsAsMs, streamName, visibleText } from '../format.js';
import { heatColor } from '../model.js';

const ROW = 20;
const LANE_GAP = 10; // between the host rows and the first stream lane
// A lane is its label line above its bar: a label drawn over the bar would hide the work at the
// left edge, where a step's first kernels are.
const LANE_LABEL = 13;
const LANE = LANE_LABEL + ROW;
// Launch links (runtime call → its device work) drawn per frame at most: each is a line across
// the canvas, and a zoomed-out 10^5-kernel step would otherwise draw 10^5 of them.
// Beyond it none are drawn (a random subset would suggest a pattern that is not there) and the
// status line asks to zoom in.
const MAX_LINKS = 300;
// Lane colours by payload kind (views.device_work.kinds), the Overview's part colours.
const KIND_COLOR = {
  communication: '--part-communication',
  kernel: '--part-compute',
  memcpy: '--part-memory',
  memset: '--part-memory',
  sync: '--part-sync',
};

// Stream lanes from the columnar views.device_work: per lane typed arrays of its items sorted by
// start (the payload already orders them; sorting again costs little and trusts nothing), with
// the running maximum end for the binary search.
function deviceLanes(work) {
  if (!work || !work.lanes) return [];
  const { items, kinds, names } = work;
  const byLane = work.lanes.map(() => []);
  for (let i = 0; i < items.lane.length; i++) byLane[items.lane[i]]?.push(i);
  return work.lanes.map((lane, l) => {
    const idx = byLane[l].sort((a, b) => items.start_ns[a] - items.start_ns[b] || a - b);
    const n = idx.length;
    const out = {
      label: `${lane.device} ${streamName(lane.stream)}`,
      device: lane.device,
      stream: lane.stream,
      total: lane.total,
      start: new Float64Array(n),
      dur: new Float64Array(n),
      maxEnd: new Float64Array(n),
      kind: new Array(n),
      name: new Array(n),
      launch: new Int32Array(n),
    };
    let m = -Infinity;
    idx.forEach((k, j) => {
      out.start[j] = items.start_ns[k];
      out.dur[j] = items.duration_ns[k];
      m = Math.max(m, out.start[j] + out.dur[j]);
      out.maxEnd[j] = m;
      out.kind[j] = kinds[items.kind[k]] ?? 'kernel';
      out.name[j] = names[items.name[k]] ?? '';
      out.launch[j] = items.launch[k];
    });
    return out;
  });
}

// First index whose running max end reaches t.
function firstReaching(maxEnd, t) {
  let lo = 0;
  let hi = maxEnd.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (maxEnd[mid] < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

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
  const lanes = deviceLanes(payload.views.device_work);
  for (const lane of lanes) {
    if (!lane.start.length) continue;
    t0 = Math.min(t0, lane.start[0]);
    t1 = Math.max(t1, lane.maxEnd[lane.maxEnd.length - 1]);
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
    lanes.length
      ? 'Spans and ops on the time axis, one row per nesting level; below them one lane per device stream with its kernels (blue, communication orange), copies and memsets (green) at their device time, and stream/event waits as thin grey bars. Lines join a runtime call to the work it launched. Wheel or +/− to zoom, drag or ←/→ to pan, 0 to fit, click to inspect.'
      : 'Spans and ops on the time axis, one row per nesting level. Wheel or +/− to zoom, drag or ←/→ to pan, 0 to fit, click to inspect.',
  );
  const kept = payload.payload_limits?.device_work_kept;
  const total = payload.payload_limits?.device_work_total;
  const capNote =
    lanes.length && kept < total
      ? el(
          'p',
          { class: 'note', id: 'timeline-device-cap' },
          `The lanes show the ${kept.toLocaleString('en-US')} longest of ${total.toLocaleString('en-US')} device items; shorter ones are left out of this file.`,
        )
      : null;
  const zoomIn = el('button', { type: 'button' }, 'Zoom in');
  const zoomOut = el('button', { type: 'button' }, 'Zoom out');
  const fit = el('button', { type: 'button' }, 'Fit');
  const range = el('span', { class: 'note', id: 'timeline-range', 'aria-live': 'polite' });
  const canvas = el('canvas', {
    class: 'flame',
    id: 'timeline-canvas',
    tabindex: '0',
    role: 'img',
    'aria-label': lanes.length
      ? 'Flame chart of spans and ops over time, with one lane per device stream'
      : 'Flame chart of spans and ops over time',
  });
  const tip = el('div', { class: 'chart-tip', 'aria-hidden': 'true' });
  tip.hidden = true;
  panel.append(
    help,
    capNote || '',
    el('div', { class: 'graph-toolbar' }, fit, zoomIn, zoomOut, range),
    el('div', { class: 'chart-wrap' }, canvas, tip),
  );

  let viewStart = t0;
  let viewEnd = t1;
  let width = 800;
  const lanesTop = 24 + Math.max(rows.length, 1) * ROW + (lanes.length ? LANE_GAP : 0);
  const height = lanesTop + lanes.length * LANE + (lanes.length ? 4 : 0);
  // The row of each host node, for the launch links' upper ends.
  const payloadNodes = payload.views.trace.nodes;
  const maxSelf = index.maxSelf || 1;

  // Per lane what the last frame drew, for tests and for the status line: items in view, drawn
  // one by one, merged into one-pixel bars (and how many bars), and the launch links.
  let laneStats = [];
  let linkNote = '';
  const drawLanes = (ctx, css, scale, fg) => {
    if (!lanes.length) return;
    const colors = {};
    for (const [kind, v] of Object.entries(KIND_COLOR))
      colors[kind] = css.getPropertyValue(v).trim() || '#888';
    ctx.fillStyle = css.getPropertyValue('--border').trim() || '#ccc';
    ctx.fillRect(0, lanesTop - LANE_GAP / 2, width, 1);
    const links = [];
    let linksInView = 0;
    laneStats = lanes.map((lane, l) => {
      const y = lanesTop + l * LANE + LANE_LABEL;
      const stat = { lane: lane.label, inView: 0, drawn: 0, merged: 0, pixels: 0, syncs: 0 };
      let mergedPixel = -1;
      for (let i = firstReaching(lane.maxEnd, viewStart); i < lane.start.length; i++) {
        const start = lane.start[i];
        if (start > viewEnd) break;
        if (start + lane.dur[i] < viewStart) continue; // before the view, under a long item
        stat.inView++;
        const kind = lane.kind[i];
        const sync = kind === 'sync';
        if (sync) stat.syncs++;
        const x0 = (start - viewStart) * scale;
        const w = lane.dur[i] * scale;
        // Waits are thin bars in the lane's middle: they take time but are not work.
        const top = sync ? y + ROW / 2 - 4 : y;
        const h = sync ? 6 : ROW - 2;
        ctx.fillStyle = colors[kind] || colors.kernel;
        if (w < 1) {
          const px = Math.floor(x0);
          stat.merged++;
          if (px === mergedPixel) continue;
          mergedPixel = px;
          stat.pixels++;
          ctx.fillRect(px, top, 1, h);
        } else {
          stat.drawn++;
          const cx = Math.max(x0, -1);
          const cw = Math.min(x0 + w, width + 1) - cx;
          ctx.fillRect(cx, top, Math.max(cw - 0.5, 1), h);
          if (!sync && cw > 40) {
            ctx.fillStyle = fg;
            ctx.save();
            ctx.beginPath();
            ctx.rect(cx, y, cw, ROW - 2);
            ctx.clip();
            ctx.fillText(visibleText(lane.name[i]), cx + 3, y + ROW / 2 - 1);
            ctx.restore();
          }
        }
        if (lane.launch[i] >= 0) {
          linksInView++;
          if (links.length <= MAX_LINKS) links.push([lane.launch[i], x0, y]);
        }
      }
      return stat;
    });
    // Launch links: from the runtime call's slice (its start, the bottom of its row) to the start
    // of the work it launched, so a launch-bound stream shows long slanted lines.
    ctx.strokeStyle = css.getPropertyValue('--link').trim() || 'rgba(0,0,0,0.4)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    let drawnLinks = 0;
    for (const [launch, x1, y1] of linksInView > MAX_LINKS ? [] : links) {
      const node = payloadNodes[launch];
      const row = node && rowOf.get(node.id);
      if (row === undefined) continue;
      ctx.moveTo((node.start_ns - viewStart) * scale, 24 + row * ROW + ROW - 2);
      ctx.lineTo(x1, y1);
      drawnLinks++;
    }
    ctx.stroke();
    ctx.font = '10px system-ui, sans-serif';
    ctx.fillStyle = css.getPropertyValue('--fg-muted').trim() || '#666';
    lanes.forEach((lane, l) => {
      const text =
        lane.total > lane.start.length
          ? `${lane.label} (${lane.start.length} of ${lane.total} items)`
          : lane.label;
      ctx.fillText(visibleText(text), 4, lanesTop + l * LANE + LANE_LABEL / 2);
    });
    ctx.font = '11px system-ui, sans-serif';
    linkNote =
      linksInView > MAX_LINKS
        ? ` · ${linksInView.toLocaleString('en-US')} launches in view: zoom in to see their links`
        : '';
    canvas.dataset.lanes = JSON.stringify(laneStats);
    canvas.dataset.links = JSON.stringify({ inView: linksInView, drawn: drawnLinks });
  };

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
          ctx.fillText(visibleText(n.short_label ?? n.label), cx + 3, y + ROW / 2 - 1);
          ctx.restore();
        }
      }
    }
    drawLanes(ctx, css, scale, fg);
    // Time axis.
    ctx.fillStyle = css.getPropertyValue('--fg-muted').trim() || '#666';
    ctx.textBaseline = 'top';
    for (let i = 0; i <= 5; i++) {
      const t = viewStart + ((viewEnd - viewStart) * i) / 5;
      const label = formatNsAsMs(t - t0);
      const x = Math.min((i * width) / 5, width - ctx.measureText(label).width - 2);
      ctx.fillText(label, Math.max(x, 2), 4);
    }
    range.textContent = `Showing ${formatNsAsMs(viewStart - t0)} – ${formatNsAsMs(viewEnd - t0)} of ${formatNsAsMs(t1 - t0)}${linkNote}`;
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
  // The lane item under (x, y), or null: {lane, i}.
  const hitLane = (x, y) => {
    const lane = lanes[Math.floor((y - lanesTop) / LANE)];
    if (!lane || y < lanesTop || (y - lanesTop) % LANE < LANE_LABEL) return null;
    const t = viewStart + (x / width) * (viewEnd - viewStart);
    const tolerance = (viewEnd - viewStart) / width;
    let best = -1;
    for (
      let i = firstReaching(lane.maxEnd, t - tolerance);
      i < lane.start.length && lane.start[i] <= t + tolerance;
      i++
    ) {
      // The shortest item under the pointer: the long one it sits on is reachable beside it.
      if (lane.start[i] - tolerance <= t && t <= lane.start[i] + lane.dur[i] + tolerance)
        if (best < 0 || lane.dur[i] < lane.dur[best]) best = i;
    }
    return best < 0 ? null : { lane, i: best };
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
    if (drag && !drag.moved && event.target === canvas) {
      // A lane item selects the runtime call that launched it, when the payload has it.
      const item = hitLane(event.offsetX, event.offsetY);
      const launch = item && payloadNodes[item.lane.launch[item.i]];
      if (launch) {
        inspector.select(launch.id, 'timeline');
        redraw();
      }
    }
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
    const item = hitLane(event.offsetX, event.offsetY);
    if (item) {
      const { lane, i } = item;
      const launch = payloadNodes[lane.launch[i]];
      setText(
        tip,
        `${lane.name[i]} (${lane.kind[i]}) · ${lane.label} · start ${formatNsAsMs(lane.start[i] - t0)} · device time ${formatDuration(lane.dur[i])}${launch ? ` · launched by ${launch.label}` : ''}`,
      );
      tip.style.left = `${event.offsetX + 12}px`;
      tip.style.top = `${event.offsetY + 12}px`;
      tip.hidden = false;
      return;
    }
    const n = hit(event.offsetX, event.offsetY);
    if (!n) {
      tip.hidden = true;
      return;
    }
    setText(
      tip,
      `${n.label} (${n.kind}) · start ${formatNsAsMs(n.start_ns - t0)} · total ${formatMs(n.total_time_ms)} · self ${formatMs(n.self_time_ms)}`,
    );
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
