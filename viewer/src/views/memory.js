// Memory view (trace6.md §12.3): live bytes over time stacked by category on a canvas, peak
// marker, device capacity line, peak breakdown table, one chart per device.
import { el, section, table, fields, onWidthChange } from '../dom.js';
import { formatBytes, formatInt, formatNsAsMs, formatShape, shortBytes } from '../format.js';

const CATEGORY_COLORS = {
  activation: '#4e79a7',
  gradient: '#e15759',
  optimizer: '#f28e2b',
  parameter: '#59a14f',
  workspace: '#b07aa1',
  other: '#9c755f',
};
const fallbackColors = ['#76b7b2', '#edc948', '#ff9da7', '#bab0ac'];

export function renderMemory(panel, payload) {
  const mem = payload.views.memory;
  const summary = mem.summary;
  panel.append(el('h1', null, 'Memory'));
  if (!mem.timeline || mem.timeline.length === 0) {
    panel.append(
      el(
        'p',
        { class: 'empty', id: 'memory-empty' },
        'No explicit allocation events were captured, so no memory lifetimes are shown (none are invented from ops or tensors).',
      ),
    );
  }
  panel.append(
    el(
      'div',
      { class: 'kpis' },
      kpi('Peak live', formatBytes(summary.peak_bytes), 'memory-peak'),
      kpi('Peak at', `${formatNsAsMs(summary.peak_timestamp_ns)} on ${summary.peak_device || '–'}`),
      kpi(
        'Allocations',
        `${formatInt(summary.alloc_count)} allocs / ${formatInt(summary.free_count)} frees`,
      ),
      kpi('Retained for autograd', formatBytes(summary.autograd_retained_bytes)),
    ),
  );
  if (payload.payload_limits && payload.payload_limits.memory_points_dropped) {
    panel.append(
      el(
        'p',
        { class: 'note' },
        `The timeline keeps ${formatInt(mem.timeline.length)} points (minimum and maximum per time bucket, always the peak) of ${formatInt(payload.payload_limits.memory_points_total)}.`,
      ),
    );
  }
  for (const device of mem.by_device || []) {
    const points = mem.timeline.filter((p) => p.device === device.device);
    panel.append(
      section(
        `Device ${device.device}`,
        fields([
          [
            'Peak',
            `${formatBytes(device.peak_bytes)} at ${formatNsAsMs(device.peak_timestamp_ns)}`,
          ],
          [
            'Capacity',
            device.capacity_bytes
              ? formatBytes(device.capacity_bytes)
              : 'unknown (no device_memory samples)',
          ],
        ]),
        chart(points, device),
      ),
    );
  }
  const byCategory = Object.entries(summary.peak_by_category || {});
  panel.append(
    section(
      'Live at the peak, by category',
      table(
        [
          { label: 'Category', value: ([k]) => k },
          { label: 'Bytes', value: ([, v]) => formatBytes(v), num: true },
        ],
        byCategory,
        { empty: 'Nothing was live.' },
      ),
    ),
  );
  panel.append(
    section(
      'Peak breakdown',
      table(
        [
          { label: 'Tensor', value: (a) => el('code', null, a.tensor_id) },
          { label: 'Span', value: (a) => a.span_id },
          { label: 'Op', value: (a) => a.op_name ?? '–' },
          { label: 'Category', value: (a) => a.category },
          { label: 'Shape', value: (a) => formatShape(a.shape) },
          { label: 'Dtype', value: (a) => a.dtype },
          { label: 'Device', value: (a) => a.device },
          { label: 'Bytes', value: (a) => formatBytes(a.bytes), num: true },
        ],
        mem.peak_breakdown,
        {
          id: 'peak-breakdown',
          caption: 'Allocations live at the memory peak, largest first',
          empty: 'No allocation was live at the peak.',
        },
      ),
    ),
  );
}

// Width of a chart canvas while its view is hidden: the content width of a card in the view on
// screen (all views share the main column), minus the canvas border; 0 if there is none.
function predictedWidth() {
  const card = document.querySelector('[role="tabpanel"]:not([hidden]) .card');
  if (!card || card.clientWidth === 0) return 0;
  const style = getComputedStyle(card);
  return Math.round(
    card.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 2,
  );
}

function kpi(label, value, id) {
  return el(
    'div',
    { class: 'kpi', id },
    el('span', { class: 'kpi-label' }, label),
    el('span', { class: 'kpi-value' }, value),
  );
}

function chart(points, device) {
  const canvas = el('canvas', {
    class: 'memory-chart',
    role: 'img',
    'aria-label': `Live bytes over time on ${device.device}, peak ${device.peak_bytes} bytes`,
  });
  const tip = el('div', { class: 'chart-tip', 'aria-hidden': 'true' });
  const legend = el('div', { class: 'chart-legend' });
  const wrap = el('div', { class: 'chart-wrap' }, canvas, tip);
  const categories = [];
  for (const p of points)
    for (const k of Object.keys(p.by_category || {}))
      if (!categories.includes(k)) categories.push(k);
  categories.sort();
  const colorOf = (k, i) => CATEGORY_COLORS[k] || fallbackColors[i % fallbackColors.length];
  // One item per entry (swatch + label), with a space between items: labels never run into each
  // other, neither on screen nor in the text a screen reader or innerText reads.
  const item = (swatch, label) => {
    if (legend.childNodes.length) legend.append(' ');
    legend.append(
      swatch
        ? el('span', { class: 'legend-item' }, swatch, label)
        : el('span', { class: 'legend-item' }, label),
    );
  };
  categories.forEach((k, i) => {
    // CSSOM, not a style attribute: the page's CSP forbids inline style attributes.
    const swatch = el('span', { class: 'swatch' });
    swatch.style.setProperty('--c', colorOf(k, i));
    item(swatch, k);
  });
  item(el('span', { class: 'swatch line-peak' }), 'peak');
  if (device.capacity_bytes > 0 && device.capacity_bytes <= device.peak_bytes * 4)
    item(el('span', { class: 'swatch line-cap' }), 'capacity');
  else if (device.capacity_bytes > 0)
    item(null, `capacity ${shortBytes(device.capacity_bytes)} (above the chart)`);
  if (points.length === 0)
    return el('p', { class: 'empty' }, 'No allocation events on this device.');
  const t0 = points[0].timestamp_ns;
  const t1 = Math.max(points[points.length - 1].timestamp_ns, t0 + 1);
  // A capacity far above the peak would flatten the curve: then the axis follows the peak and the
  // capacity is stated in the legend instead of drawn.
  const capacityOnScale =
    device.capacity_bytes > 0 && device.capacity_bytes <= device.peak_bytes * 4;
  // Derived once, as typed arrays: live bytes per point and, per category, bytes per point.
  const live = Float64Array.from(points, (p) => p.live_bytes || 0);
  const byCategory = categories.map((k) =>
    Float64Array.from(points, (p) => (p.by_category || {})[k] || 0),
  );
  const yMax = Math.max(capacityOnScale ? device.capacity_bytes : 0, device.peak_bytes, 1) * 1.08;

  const draw = () => {
    const css = getComputedStyle(document.documentElement);
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(canvas.clientWidth || predictedWidth(), 320);
    const height = 260;
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    canvas.style.height = `${height}px`;
    const ctx = canvas.getContext('2d');
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    const left = 70,
      right = 10,
      top = 10,
      bottom = 24;
    const x = (t) => left + ((t - t0) / (t1 - t0)) * (width - left - right);
    const y = (b) => height - bottom - (b / yMax) * (height - top - bottom);
    ctx.strokeStyle = css.getPropertyValue('--grid').trim() || '#ccc';
    ctx.fillStyle = css.getPropertyValue('--fg-muted').trim() || '#666';
    ctx.font = '11px system-ui, sans-serif';
    for (let i = 0; i <= 4; i++) {
      const b = (yMax / 4) * i;
      ctx.beginPath();
      ctx.moveTo(left, y(b));
      ctx.lineTo(width - right, y(b));
      ctx.stroke();
      ctx.fillText(shortBytes(b), 4, y(b) + 4);
    }
    ctx.fillText(formatNsAsMs(t0), left, height - 6);
    const endLabel = formatNsAsMs(t1);
    ctx.fillText(endLabel, width - right - ctx.measureText(endLabel).width, height - 6);
    // Level of detail: per pixel column only the first point and the point with the most live
    // bytes are drawn, so the cost follows the chart width, not the number of points, and no
    // peak is lost. The hover text below still reads every point.
    const keep = [];
    let column = -Infinity;
    let best = -1;
    for (let i = 0; i < points.length; i++) {
      const c = Math.floor(x(points[i].timestamp_ns));
      if (c !== column) {
        if (best >= 0 && best !== keep[keep.length - 1]) keep.push(best);
        keep.push(i);
        column = c;
        best = i;
      } else if (live[i] > live[best]) best = i;
    }
    if (best >= 0 && best !== keep[keep.length - 1]) keep.push(best);
    // Stacked step areas: live bytes stay constant between two events.
    const base = new Float64Array(keep.length);
    const tops = new Float64Array(keep.length);
    categories.forEach((k, ci) => {
      const values = byCategory[ci];
      ctx.fillStyle = colorOf(k, ci);
      ctx.beginPath();
      ctx.moveTo(x(points[keep[0]].timestamp_ns), y(base[0]));
      for (let j = 0; j < keep.length; j++) tops[j] = base[j] + values[keep[j]];
      for (let j = 0; j < keep.length; j++) {
        const nextT = j + 1 < keep.length ? points[keep[j + 1]].timestamp_ns : t1;
        ctx.lineTo(x(points[keep[j]].timestamp_ns), y(tops[j]));
        ctx.lineTo(x(nextT), y(tops[j]));
      }
      for (let j = keep.length - 1; j >= 0; j--) {
        const nextT = j + 1 < keep.length ? points[keep[j + 1]].timestamp_ns : t1;
        ctx.lineTo(x(nextT), y(base[j]));
        ctx.lineTo(x(points[keep[j]].timestamp_ns), y(base[j]));
      }
      ctx.closePath();
      ctx.fill();
      base.set(tops);
    });
    if (capacityOnScale) {
      ctx.strokeStyle = css.getPropertyValue('--cap').trim() || '#333';
      ctx.setLineDash([6, 4]);
      ctx.beginPath();
      ctx.moveTo(left, y(device.capacity_bytes));
      ctx.lineTo(width - right, y(device.capacity_bytes));
      ctx.stroke();
      ctx.setLineDash([]);
    }
    const px = x(device.peak_timestamp_ns);
    const py = y(device.peak_bytes);
    ctx.strokeStyle = css.getPropertyValue('--peak').trim() || '#c00';
    ctx.beginPath();
    ctx.moveTo(px, top);
    ctx.lineTo(px, height - bottom);
    ctx.stroke();
    ctx.fillStyle = ctx.strokeStyle;
    ctx.beginPath();
    ctx.arc(px, py, 4, 0, Math.PI * 2);
    ctx.fill();
    ctx.fillText(
      `peak ${shortBytes(device.peak_bytes)}`,
      Math.min(px + 6, width - 90),
      Math.max(py - 6, 12),
    );
    canvas._toTime = (cx) => t0 + ((cx - left) / (width - left - right)) * (t1 - t0);
  };
  canvas.addEventListener('mousemove', (event) => {
    if (!canvas._toTime) return;
    const t = canvas._toTime(event.offsetX);
    let lo = 0,
      hi = points.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (points[mid].timestamp_ns <= t) lo = mid;
      else hi = mid - 1;
    }
    const p = points[lo];
    tip.textContent =
      `${formatNsAsMs(p.timestamp_ns)}: ${formatBytes(p.live_bytes)} live` +
      Object.entries(p.by_category || {})
        .map(([k, v]) => ` · ${k} ${shortBytes(v)}`)
        .join('');
    tip.style.left = `${event.offsetX + 12}px`;
    tip.style.top = `${event.offsetY + 12}px`;
    tip.hidden = false;
  });
  canvas.addEventListener('mouseleave', () => {
    tip.hidden = true;
  });
  tip.hidden = true;
  // Drawn when displayed (a hidden, pre-rendered view has no width yet) and again only when the
  // width or the theme changes; switching tabs back and forth does not redraw.
  const resize = onWidthChange(canvas, draw);
  // Prepared while hidden (main.js idle preparation): draw now at the width the chart will have,
  // so the first switch to Memory only reveals it. A wrong guess just means one redraw on show.
  if (canvas.clientWidth === 0 && predictedWidth() > 0) {
    draw();
    resize.drewAt(predictedWidth());
  }
  document.addEventListener('cg-theme-change', () => {
    if (canvas.clientWidth > 0) draw();
    else resize.invalidate();
  });
  return el('div', null, legend, wrap);
}
