// Span hierarchy (trace6.md §12.2 `span-tree`, role="tree") with search. Children are rendered only when a
// row is expanded, so a tree of 10^5 spans costs nothing until it is opened. Keyboard per trace6.md §12.3:
// Up/Down/Home/End move, Right expands or enters, Left collapses or goes to the parent,
// Enter/Space select.
import { el, clear } from '../dom.js';
import { formatMs } from '../format.js';

export function createSpanTree(payload, index, inspector) {
  const container = document.getElementById('span-tree');
  const search = document.getElementById('span-search');
  const result = document.getElementById('search-result');
  const rows = payload.span_tree;
  const childrenOf = new Map();
  const rowById = new Map();
  const roots = [];
  for (const row of rows) rowById.set(row.id, row);
  for (const row of rows) {
    if (row.parent_id != null && rowById.has(row.parent_id)) {
      let list = childrenOf.get(row.parent_id);
      if (!list) childrenOf.set(row.parent_id, (list = []));
      list.push(row);
    } else roots.push(row);
  }
  const LIMIT = 500; // children shown per parent; more are listed as a count
  let built = false;

  const item = (row, level) => {
    const kids = childrenOf.get(row.id) || [];
    const li = el('li', {
      role: 'treeitem',
      'aria-level': level,
      'aria-selected': String(inspector.selected === row.id),
      tabindex: '-1',
      'data-id': row.id,
    });
    if (kids.length) li.setAttribute('aria-expanded', 'false');
    li.append(
      el(
        'span',
        { class: 'tree-label' },
        el('span', { class: 'twisty', 'aria-hidden': 'true' }, kids.length ? '▸' : ' '),
        el('span', { class: 'tree-name' }, row.name),
        el('span', { class: 'tree-ms' }, formatMs(row.total_ms)),
      ),
    );
    return li;
  };
  const expand = (li, open) => {
    if (!li.hasAttribute('aria-expanded')) return;
    li.setAttribute('aria-expanded', String(open));
    li.querySelector('.twisty').textContent = open ? '▾' : '▸';
    let group = li.querySelector(':scope > ul');
    if (open && !group) {
      const level = Number(li.getAttribute('aria-level')) + 1;
      const kids = childrenOf.get(li.dataset.id) || [];
      group = el(
        'ul',
        { role: 'group' },
        kids.slice(0, LIMIT).map((r) => item(r, level)),
      );
      if (kids.length > LIMIT)
        group.append(
          el('li', { role: 'none', class: 'note' }, `… ${kids.length - LIMIT} more (use search)`),
        );
      li.append(group);
    }
    if (group) group.hidden = !open;
  };
  const visibleItems = () =>
    [...container.querySelectorAll('[role="treeitem"]')].filter((n) => n.offsetParent !== null);
  const focusItem = (li) => {
    for (const n of container.querySelectorAll('[role="treeitem"][tabindex="0"]')) n.tabIndex = -1;
    li.tabIndex = 0;
    li.focus();
  };
  const build = (list) => {
    clear(container);
    const ul = el(
      'ul',
      { role: 'none' },
      list.map((r) => item(r, 1)),
    );
    container.append(ul);
    const first = container.querySelector('[role="treeitem"]');
    if (first) first.tabIndex = 0;
    if (list === roots && first) expand(first, true);
  };

  container.addEventListener('click', (event) => {
    const li = event.target.closest('[role="treeitem"]');
    if (!li) return;
    if (event.target.closest('.twisty')) expand(li, li.getAttribute('aria-expanded') !== 'true');
    else inspector.select(li.dataset.id, 'tree');
    focusItem(li);
  });
  container.addEventListener('keydown', (event) => {
    const li = event.target.closest('[role="treeitem"]');
    if (!li) return;
    const items = visibleItems();
    const i = items.indexOf(li);
    const expanded = li.getAttribute('aria-expanded');
    let handled = true;
    switch (event.key) {
      case 'ArrowDown':
        if (items[i + 1]) focusItem(items[i + 1]);
        break;
      case 'ArrowUp':
        if (items[i - 1]) focusItem(items[i - 1]);
        break;
      case 'Home':
        focusItem(items[0]);
        break;
      case 'End':
        focusItem(items[items.length - 1]);
        break;
      case 'ArrowRight':
        if (expanded === 'false') expand(li, true);
        else if (expanded === 'true') {
          const child = li.querySelector('[role="treeitem"]');
          if (child) focusItem(child);
        }
        break;
      case 'ArrowLeft':
        if (expanded === 'true') expand(li, false);
        else {
          const parent = li.parentElement.closest('[role="treeitem"]');
          if (parent) focusItem(parent);
        }
        break;
      case 'Enter':
      case ' ':
        inspector.select(li.dataset.id, 'tree');
        break;
      default:
        handled = false;
    }
    if (handled) event.preventDefault();
  });

  let searchTimer = 0;
  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      const q = search.value.trim().toLowerCase();
      if (!q) {
        result.textContent = '';
        build(roots);
        return;
      }
      const hits = [];
      let count = 0;
      for (const row of rows) {
        if (row.name.toLowerCase().includes(q) || row.id.toLowerCase() === q) {
          count++;
          if (hits.length < 200) hits.push(row);
        }
      }
      result.textContent = count
        ? `${count} matching spans${count > hits.length ? ` (first ${hits.length} listed)` : ''}; Enter selects the first.`
        : 'No matching span.';
      build(hits);
    }, 120);
  });
  search.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    const first = container.querySelector('[role="treeitem"]');
    if (first) {
      inspector.select(first.dataset.id, 'search');
      focusItem(first);
    }
  });

  return {
    ensure() {
      if (!built) {
        built = true;
        build(roots);
      }
    },
    reveal(id) {
      if (!built) return;
      for (const n of container.querySelectorAll('[aria-selected="true"]'))
        n.setAttribute('aria-selected', 'false');
      // Expand the ancestors (span rows only; an op selects its span's row).
      let target = rowById.get(id) || rowById.get(index.byId.get(id)?.parent_id);
      if (!target) return;
      const chain = [];
      for (let r = target; r; r = rowById.get(r.parent_id)) chain.unshift(r.id);
      for (const cid of chain.slice(0, -1)) {
        const li = container.querySelector(`[role="treeitem"][data-id="${CSS.escape(cid)}"]`);
        if (li) expand(li, true);
      }
      const li = container.querySelector(`[role="treeitem"][data-id="${CSS.escape(target.id)}"]`);
      if (li) {
        li.setAttribute('aria-selected', 'true');
        li.scrollIntoView({ block: 'nearest' });
      }
    },
  };
}
