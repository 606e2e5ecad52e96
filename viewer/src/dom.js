// DOM helpers. Trace strings are untrusted (trace6.md §12.2 security): every piece of text goes through
// textContent or an attribute setter, never through innerHTML, and text is shown with its control
// characters as escapes (visibleText), so that a bidirectional control cannot make a name read as
// another. Attributes are set as given: a tooltip of trace text is built with visibleText.
import { visibleText } from './format.js';

/** el('td', {class: 'num', title: t}, 'text', child) — children are strings (as text) or nodes. */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key.startsWith('on') && typeof value === 'function')
        node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(visibleText(child)));
  }
  return node;
}

/** Sets a node's text (a tooltip, a label) as append() shows text. */
export function setText(node, text) {
  node.textContent = visibleText(text);
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  if (attrs)
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

export function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

/** A titled section with an optional note. */
export function section(title, ...children) {
  return el('section', { class: 'card' }, el('h2', null, title), ...children);
}

/**
 * A simple table: columns = [{label, value: row => text|node, num: bool}]. Up to VIRTUAL_FROM
 * rows are rendered as a plain table; longer lists become a virtualised scrolling table with all
 * rows reachable but only the visible ones in the DOM (docs/performance.md (Viewer)).
 */
export const VIRTUAL_FROM = 60;
export function table(columns, rows, { caption, id, empty = 'None.' } = {}) {
  if (!rows || rows.length === 0) return el('p', { class: 'empty' }, empty);
  const head = el(
    'tr',
    null,
    columns.map((c) => el('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)),
  );
  const body = el('tbody');
  const t = el(
    'table',
    { id },
    caption ? el('caption', null, caption) : null,
    el('thead', null, head),
    body,
  );
  const cells = (row) =>
    columns.map((c) => el('td', { class: c.num ? 'num' : null }, c.value(row)));
  if (rows.length <= VIRTUAL_FROM) {
    for (const row of rows) body.append(el('tr', null, cells(row)));
    return el('div', { class: 'table-wrap' }, t);
  }
  t.className = 'vtable';
  // Fixed layout: numeric columns get a fixed width and the text columns share the rest, so a
  // long name is not clipped to an equal share while the numbers have room to spare.
  t.insertBefore(
    el(
      'colgroup',
      null,
      columns.map((c) => el('col', { class: c.num ? 'col-num' : null })),
    ),
    t.querySelector('thead'),
  );
  t.setAttribute('aria-rowcount', String(rows.length + 1));
  const wrap = el('div', { class: 'table-wrap vscroll vscroll-short' }, t);
  virtualRows(
    wrap,
    t,
    head,
    body,
    () => rows.length,
    (i) => {
      const tr = el('tr', { 'aria-rowindex': i + 2 }, cells(rows[i]));
      // Clipped cells keep their full text as a tooltip.
      for (const td of tr.children) td.title = td.textContent;
      return tr;
    },
  );
  return wrap;
}

export const ROW_H = 28; // keep equal to `.vtable tbody tr` height in style.css
const OVERSCAN = 10; // rows rendered beyond each edge so fast scrolling shows no gaps
// Rows rendered while the table is hidden (no viewport height yet): enough for a full window.
const HIDDEN_WINDOW = Math.ceil(window.innerHeight / ROW_H);

/**
 * Virtual scrolling for a table inside `scroller`: only rows around the visible window exist;
 * rows have the fixed height ROW_H, the tbody is moved onto the window with a transform (no
 * layout change) and a sizer after the table gives the scroll area the height of all rows.
 * Returns {draw(force), scrollToRow(i)}.
 */
export function virtualRows(scroller, tableEl, headRow, body, count, renderRow) {
  const sizer = el('div', { class: 'vsizer', 'aria-hidden': 'true' });
  tableEl.after(sizer);
  let first = -1;
  let last = -1;
  const draw = (force) => {
    const n = count();
    const top = Math.max(0, scroller.scrollTop - tableEl.tHead.offsetTop - headRow.offsetHeight);
    const viewport = scroller.clientHeight;
    const wanted = viewport > 0 ? Math.ceil(viewport / ROW_H) : HIDDEN_WINDOW;
    const visibleFrom = Math.floor(top / ROW_H);
    const visibleTo = Math.min(n, visibleFrom + wanted);
    // Rows already in the DOM cover the window (the overscan absorbs small scrolls, and a table
    // prepared hidden usually covers the window it is first shown with): nothing to do.
    if (!force && first >= 0 && first <= visibleFrom && last >= visibleTo) return;
    const from = Math.max(0, visibleFrom - OVERSCAN);
    const to = Math.min(n, visibleTo + OVERSCAN);
    first = from;
    last = to;
    const frag = document.createDocumentFragment();
    for (let i = from; i < to; i++) frag.append(renderRow(i));
    clear(body).append(frag);
    body.style.transform = `translateY(${from * ROW_H}px)`;
    sizer.style.height = `${Math.max(0, n - (to - from)) * ROW_H}px`;
  };
  let frame = 0;
  scroller.addEventListener('scroll', () => {
    if (!frame)
      frame = requestAnimationFrame(() => {
        frame = 0;
        draw(false);
      });
  });
  // Becoming visible gives the scroller its real height: fill the window then.
  new ResizeObserver(() => draw(false)).observe(scroller);
  draw(true);
  return {
    draw,
    /** Scrolls the least needed to show row i, and renders it. */
    scrollToRow(i) {
      const head = tableEl.tHead.offsetTop + headRow.offsetHeight;
      const rowTop = head + i * ROW_H;
      if (rowTop < scroller.scrollTop + head) scroller.scrollTop = rowTop - head;
      else if (rowTop + ROW_H > scroller.scrollTop + scroller.clientHeight)
        scroller.scrollTop = rowTop + ROW_H - scroller.clientHeight;
      draw(false);
    },
  };
}

/** Definition list from [label, value] pairs. */
export function fields(pairs) {
  return el(
    'dl',
    { class: 'fields' },
    pairs.flatMap(([k, v]) => [el('dt', null, k), el('dd', null, v)]),
  );
}

/**
 * Calls fn(width) when the element's width changes while it is displayed. Hiding a view (width
 * 0) and showing it again at the same width do not call it, so a canvas is not redrawn for
 * nothing when the user switches tabs.
 */
export function onWidthChange(node, fn) {
  let last = -1;
  new ResizeObserver(() => {
    const width = node.clientWidth;
    if (width === 0 || width === last) return;
    last = width;
    fn(width);
  }).observe(node);
  // invalidate(): the next time the element is displayed, fn runs even at the same width.
  // drewAt(w): fn's work was already done for width w (drawn while hidden at a predicted width).
  return {
    invalidate: () => {
      last = -1;
    },
    drewAt: (w) => {
      last = w;
    },
  };
}
