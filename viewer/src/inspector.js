// Right-hand inspector (trace6.md §12.2, labels of §17.13): shows the selected node and the allocations of
// the memory peak that were made in it.
import { clear, setText, table } from './dom.js';
import { formatBytes, formatMs, formatShape } from './format.js';

export function createInspector(payload, index) {
  const set = (id, text) => {
    setText(document.getElementById(id), text);
  };
  const listeners = [];
  const peakBySpan = new Map();
  for (const alloc of payload.views.memory.peak_breakdown || []) {
    let list = peakBySpan.get(alloc.span_id);
    if (!list) peakBySpan.set(alloc.span_id, (list = []));
    list.push(alloc);
  }
  let selected = null;
  return {
    get selected() {
      return selected;
    },
    onSelect(fn) {
      listeners.push(fn);
    },
    select(id, source) {
      const node = index.byId.get(id);
      if (!node) return;
      selected = id;
      set('insp-label', node.label);
      set('insp-kind', node.kind);
      set('insp-self', formatMs(node.self_time_ms));
      set('insp-total', formatMs(node.total_time_ms));
      set('insp-shape', formatShape(node.shape));
      set('insp-dtype', node.dtype ?? '–');
      set(
        'insp-storage',
        node.storage_bytes === null || node.storage_bytes === undefined
          ? '–'
          : formatBytes(node.storage_bytes),
      );
      set('insp-peak', formatBytes(node.peak_bytes));
      set('insp-bytes', formatBytes(node.bytes));
      const holder = clear(document.getElementById('inspector-peak-breakdown'));
      holder.append(
        table(
          [
            { label: 'Tensor', value: (a) => a.tensor_id },
            { label: 'Category', value: (a) => a.category },
            { label: 'Bytes', value: (a) => formatBytes(a.bytes), num: true },
          ],
          peakBySpan.get(id) || [],
          { empty: 'No allocation of this node was live at the peak.', limit: 50 },
        ),
      );
      for (const fn of listeners) fn(id, source);
    },
  };
}
