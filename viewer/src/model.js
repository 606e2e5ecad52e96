// Index over the payload nodes shared by the views: id → node, children lists, depth.
// Built once in O(n); the views never scan the node list per interaction.

export function buildIndex(payload) {
  const nodes = payload.views.trace.nodes;
  const byId = new Map();
  const children = new Map();
  for (const node of nodes) byId.set(node.id, node);
  const roots = [];
  for (const node of nodes) {
    const parent = node.parent_id;
    if (parent !== null && parent !== undefined && byId.has(parent)) {
      let list = children.get(parent);
      if (!list) children.set(parent, (list = []));
      list.push(node);
    } else {
      roots.push(node);
    }
  }
  // Depth by an explicit stack (trees can be deep: no recursion).
  const depth = new Map();
  const stack = roots.map((r) => [r, 0]);
  let maxDepth = 0;
  while (stack.length) {
    const [node, d] = stack.pop();
    if (depth.has(node.id)) continue; // a malformed cycle cannot loop forever
    depth.set(node.id, d);
    if (d > maxDepth) maxDepth = d;
    for (const child of children.get(node.id) || []) stack.push([child, d + 1]);
  }
  let maxSelf = 0;
  let maxPeak = 0;
  for (const node of nodes) {
    if (node.self_time_ns > maxSelf) maxSelf = node.self_time_ns;
    if (node.peak_bytes > maxPeak) maxPeak = node.peak_bytes;
  }
  return {
    byId,
    roots,
    depth,
    maxDepth,
    maxSelf,
    maxPeak,
    children: (id) => children.get(id) || [],
  };
}

/** Heat in [0, 1] for a node: self time relative to the slowest node, or the memory ratio. */
export function heat(node, mode, index) {
  if (mode === 'memory') return node.memory_ratio || 0;
  return index.maxSelf > 0 ? node.self_time_ns / index.maxSelf : 0;
}

/** Colour for a heat value: cool blue-green → hot red, readable in both themes. */
export function heatColor(h) {
  const hue = 200 - 200 * Math.max(0, Math.min(1, h));
  return `hsl(${hue.toFixed(0)} 70% 55%)`;
}
