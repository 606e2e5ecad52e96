// DOM helpers. Trace strings are untrusted (§12.2 security): every piece of text goes through
// textContent or an attribute setter, never through innerHTML.

/** el('td', {class: 'num', title: t}, 'text', child) — children are strings (as text) or nodes. */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  if (attrs) {
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  if (attrs) for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
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
 * A simple table: columns = [{label, value: row => text|node, num: bool}].
 * Rendered rows are capped so a huge list never freezes the page; the cap is stated.
 */
export function table(columns, rows, { caption, id, limit = 200, empty = 'None.' } = {}) {
  if (!rows || rows.length === 0) return el('p', { class: 'empty' }, empty);
  const head = el('tr', null, columns.map((c) => el('th', { scope: 'col', class: c.num ? 'num' : null }, c.label)));
  const body = el('tbody');
  const shown = Math.min(rows.length, limit);
  for (let i = 0; i < shown; i++) {
    body.append(el('tr', null, columns.map((c) => el('td', { class: c.num ? 'num' : null }, c.value(rows[i])))));
  }
  const t = el('table', { id }, caption ? el('caption', null, caption) : null, el('thead', null, head), body);
  const wrap = el('div', { class: 'table-wrap' }, t);
  if (rows.length > shown) wrap.append(el('p', { class: 'note' }, `Showing ${shown} of ${rows.length} rows.`));
  return wrap;
}

/** Definition list from [label, value] pairs. */
export function fields(pairs) {
  return el('dl', { class: 'fields' }, pairs.flatMap(([k, v]) => [el('dt', null, k), el('dd', null, v)]));
}
