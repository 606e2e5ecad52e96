// Span costs view (§12.3): every node sorted by total time; any column sorts. Only the first
// ROWS rows of the current order are put in the DOM so 10^5 nodes stay responsive.
import { el, clear } from '../dom.js';
import { formatBytes, formatMs } from '../format.js';

const ROWS = 300;
const COLUMNS = [
  { key: 'name', label: 'Name', text: (r) => r.name, cmp: (a, b) => a.name.localeCompare(b.name) },
  { key: 'kind', label: 'Kind', text: (r) => r.kind, cmp: (a, b) => a.kind.localeCompare(b.kind) },
  { key: 'self_time_ns', label: 'Self', num: true, text: (r) => formatMs(r.self_ms) },
  { key: 'total_time_ns', label: 'Total', num: true, text: (r) => formatMs(r.total_ms) },
  { key: 'bytes', label: 'Requested', num: true, text: (r) => formatBytes(r.bytes) },
  { key: 'peak_bytes', label: 'Peak live', num: true, text: (r) => formatBytes(r.peak_bytes) },
  { key: 'storage_bytes', label: 'Storage', num: true, text: (r) => (r.storage_bytes == null ? '–' : formatBytes(r.storage_bytes)) },
];

export function renderSpanCosts(panel, payload, index, inspector) {
  const items = payload.views.span_costs.items;
  let sortKey = 'total_time_ns';
  let descending = true;
  let order = items; // the payload is already sorted by total time, descending
  panel.append(el('h1', null, 'Span costs'));
  panel.append(el('p', { class: 'note' }, `${items.length.toLocaleString('en-US')} nodes. Select a header to sort; select a row to inspect it.`));
  const headRow = el('tr');
  const body = el('tbody');
  const note = el('p', { class: 'note' });
  const tableEl = el('table', { id: 'span-costs-table', class: 'sortable' }, el('thead', null, headRow), body);
  panel.append(el('div', { class: 'table-wrap' }, tableEl), note);

  const headers = COLUMNS.map((col) => {
    const button = el('button', { type: 'button', class: 'sort' }, col.label);
    const th = el('th', { scope: 'col', class: col.num ? 'num' : null, 'data-key': col.key }, button);
    button.addEventListener('click', () => {
      if (sortKey === col.key) descending = !descending;
      else {
        sortKey = col.key;
        descending = !!col.num;
      }
      const cmp = col.cmp || ((a, b) => (a[col.key] ?? -1) - (b[col.key] ?? -1));
      order = [...items].sort((a, b) => (descending ? cmp(b, a) : cmp(a, b)) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      draw();
    });
    headRow.append(th);
    return th;
  });

  function draw() {
    for (const th of headers) {
      th.setAttribute('aria-sort', th.dataset.key === sortKey ? (descending ? 'descending' : 'ascending') : 'none');
    }
    clear(body);
    const shown = Math.min(order.length, ROWS);
    const frag = document.createDocumentFragment();
    for (let i = 0; i < shown; i++) {
      const row = order[i];
      const tr = el('tr', { tabindex: '0', 'data-id': row.id }, COLUMNS.map((c) => el('td', { class: c.num ? 'num' : null }, c.text(row))));
      if (inspector.selected === row.id) tr.classList.add('selected');
      frag.append(tr);
    }
    body.append(frag);
    note.textContent = order.length > shown ? `Showing the first ${shown} of ${order.length} rows in this order.` : '';
  }
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
      const tr = event.target.closest('tr');
      const next = event.key === 'ArrowDown' ? tr?.nextElementSibling : tr?.previousElementSibling;
      next?.focus();
    }
  });
  draw();
}
