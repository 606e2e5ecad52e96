// Browser tests of the Operators and Kernels views on real Kineto traces and on constructed
// trace/6 files. Expected values never come from the payload under test: they are read by
// running `candle-graph query --kind ops|kernels` (the evidence stage's writer, an independent
// path from the viewer payload and its front end), or worked out by hand for the constructed
// trace (tests/fixtures/device_work.jsonl, numbers in the comments below).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  assert,
  candleGraph,
  createRunner,
  openViewer,
  parseArgs,
  queryResult,
  withBrowser,
} from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = parseArgs(process.argv);
const fixtures = args.fixtures;
const run = createRunner();
const CAP = 2000; // PayloadLimits::table_rows (src/viewer/payload_bounds.hpp)

const a100 = join(fixtures, 'pytorch-chrome-trace/hta-tracediff-control-a100-nccl-6steps.json.gz');
const mi250 = join(fixtures, 'pytorch-chrome-trace/hta-minitoy-train-mi250-rocm6.2.json');
const query = (trace, kind) => queryResult(args.binary, trace, kind);
const view = (trace, name) => {
  const out = join(args.out, name);
  candleGraph(args.binary, ['view', trace, '-o', out]);
  return out;
};

// The hostile names of the constructed trace: an op and a kernel name that are HTML; the op's
// also holds a right-to-left override and a BEL.
const HOSTILE_OP = '<img src=x onerror=alert(1)>\u202Egnp.exe\u0007';
// The op's name as the viewer shows it, written by hand: its controls as escapes, as the
// Markdown report writes them (the override would show the name as `…exe.png`).
const HOSTILE_OP_SHOWN = '<img src=x onerror=alert(1)>\\u202egnp.exe\\x07';
const HOSTILE_KERNEL = '<img src=x onerror=alert(2)>';
const deviceWork = readFileSync(join(here, '../../tests/fixtures/device_work.jsonl'), 'utf8');
const hostileTrace = join(args.out, 'tables_hostile.jsonl');
writeFileSync(
  hostileTrace,
  deviceWork
    .replace('"op_name":"aten::mm"', `"op_name":${JSON.stringify(HOSTILE_OP)}`)
    .replace('"op_name":"_Z4gemmv"', `"op_name":${JSON.stringify(HOSTILE_KERNEL)}`),
);
const synthTrace = join(args.out, 'tables_synth.jsonl');
candleGraph(args.binary, ['synth', '--layers', '3', '-o', synthTrace]);

const settle = (page) =>
  page.evaluate(
    () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
  );
async function show(page, id) {
  await page.click(`#view-tab-${id}`);
  await page.waitForSelector(`#view-panel-${id}:not([hidden])`);
  await settle(page);
}
/** The rendered rows of a table: name (first cell) and every numeric cell's exact value by key. */
async function rows(page, table) {
  return page.locator(`#${table}`).evaluate((t) => {
    const keys = [...t.tHead.rows[t.tHead.rows.length - 1].cells].map((th) => th.dataset.key);
    return [...t.tBodies[0].rows].map((tr) => {
      const row = { name: tr.cells[0].textContent, title: tr.cells[0].title };
      [...tr.cells].forEach((td, i) => {
        if (td.dataset.value !== undefined) row[keys[i]] = Number(td.dataset.value);
        else if (i > 0) row[keys[i]] = td.textContent;
      });
      return row;
    });
  });
}
const rowCount = async (page, table) =>
  Number(await page.getAttribute(`#${table}`, 'aria-rowcount')) - 1;
async function sortBy(page, table, key) {
  await page.click(`#${table} th[data-key="${key}"] button`);
  await settle(page);
}
async function filter(page, table, text) {
  await page.fill(`#${table}-filter`, text);
  await settle(page);
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

await withBrowser(async (context) => {
  const html = view(a100, 'tables_a100.html');
  const ops = query(a100, 'ops');
  const kernels = query(a100, 'kernels');
  const { page, log } = await openViewer(context, html);
  await page.setViewportSize({ width: 1280, height: 800 });

  await run.check(
    'Operators: the default sort is host self time, as query --kind ops',
    async () => {
      await show(page, 'operators');
      assert(
        (await page.getAttribute('#operators-table th[data-key="host_self_ns"]', 'aria-sort')) ===
          'descending',
        'host self descending by default',
      );
      assert(
        (await rowCount(page, 'operators-table')) === Math.min(ops.total_items, CAP),
        'one row per op name',
      );
      const [first] = await rows(page, 'operators-table');
      const want = ops.items[0];
      assert(first.name === want.name, `first row ${first.name}, query says ${want.name}`);
      for (const key of [
        'calls',
        'host_self_ns',
        'host_total_ns',
        'device_self_ns',
        'device_total_ns',
      ])
        assert(first[key] === want[key], `${key}: ${first[key]} vs ${want[key]}`);
      // Means and shares, worked out here from the query's numbers.
      assert(first.host_mean_ns === want.host_total_ns / want.calls, 'host mean = total / calls');
      const hostAll = ops.items.reduce((s, r) => s + r.host_self_ns, 0);
      assert(
        first.host_self_share === want.host_self_ns,
        'the share column sorts by host self time',
      );
      const shareText = await page
        .locator('#operators-table tbody tr')
        .first()
        .locator('td')
        .nth(3)
        .innerText();
      assert(
        shareText === `${((100 * want.host_self_ns) / hostAll).toFixed(1)}%`,
        `host share ${shareText} of all host self time`,
      );
    },
  );

  await run.check('Operators: the totals line states device and unattributed time', async () => {
    const text = await page.innerText('#operators-totals');
    // Both are between 1 ms and 1 s in this trace (1.27 ms and 87.6 ms), so three significant
    // digits in ms is what the line must say.
    const ms = (ns) => `${(ns / 1e6).toPrecision(3)} ms`;
    assert(ops.device_ns >= 1e6 && ops.unattributed_device_ns >= 1e6, 'fixture has both');
    assert(text.includes(`Device time: ${ms(ops.device_ns)}`), `device total in "${text}"`);
    assert(
      text.includes(`of which ${ms(ops.unattributed_device_ns)}`) && text.includes('unattributed'),
      `unattributed in "${text}"`,
    );
  });

  await run.check('Operators: sorting by a column reorders rows by it', async () => {
    // The top rows by calls, from the query's items sorted here.
    const top = ops.items
      .map((r) => r.calls)
      .sort((a, b) => b - a)
      .slice(0, 15);
    const before = (await rows(page, 'operators-table')).slice(0, 15).map((r) => r.calls);
    assert(!same(before, top), 'the default order is not already by calls (the test could pass)');
    await sortBy(page, 'operators-table', 'calls');
    const after = (await rows(page, 'operators-table')).slice(0, 15).map((r) => r.calls);
    assert(same(after, top), `by calls: ${after} vs ${top}`);
    await sortBy(page, 'operators-table', 'calls');
    const up = (await rows(page, 'operators-table')).slice(0, 15).map((r) => r.calls);
    const bottom = ops.items
      .map((r) => r.calls)
      .sort((a, b) => a - b)
      .slice(0, 15);
    assert(same(up, bottom), `ascending: ${up} vs ${bottom}`);
    for (const key of ['device_total_ns', 'host_total_ns', 'device_self_ns']) {
      await sortBy(page, 'operators-table', key);
      const got = (await rows(page, 'operators-table')).slice(0, 10).map((r) => r[key]);
      const want = ops.items
        .map((r) => r[key])
        .sort((a, b) => b - a)
        .slice(0, 10);
      assert(same(got, want), `${key}: ${got} vs ${want}`);
    }
    await sortBy(page, 'operators-table', 'name');
    const names = (await rows(page, 'operators-table')).slice(0, 10).map((r) => r.name);
    const sorted = ops.items
      .map((r) => r.name)
      .sort()
      .slice(0, 10);
    assert(same(names, sorted), `by name: ${names}`);
    await page.screenshot({ path: join(args.out, 'view-operators-by-name.png') });
    await sortBy(page, 'operators-table', 'host_self_ns'); // back to the default
  });

  await run.check('Operators: the filter keeps exactly the names containing the text', async () => {
    const needle = 'mm';
    const want = ops.items.filter((r) => r.name.toLowerCase().includes(needle));
    assert(want.length > 0 && want.length < ops.items.length, 'the filter narrows this trace');
    await filter(page, 'operators-table', 'MM'); // case does not matter
    assert(
      (await rowCount(page, 'operators-table')) === want.length,
      `${await rowCount(page, 'operators-table')} rows, query has ${want.length}`,
    );
    const got = await rows(page, 'operators-table');
    assert(
      got.every((r) => r.name.toLowerCase().includes(needle)),
      'every row contains the text',
    );
    assert(got[0].name === want[0].name, 'still in host self order');
    assert(
      (await page.innerText('#operators-table-count')) ===
        `${want.length} of ${ops.items.length} rows`,
      'count line',
    );
    await filter(page, 'operators-table', '');
    assert(
      (await rowCount(page, 'operators-table')) === ops.items.length,
      'clearing the filter restores every row',
    );
    await page.screenshot({ path: join(args.out, 'view-operators.png') });
  });

  await run.check('Kernels: one row per name and device, as query --kind kernels', async () => {
    await show(page, 'kernels');
    const want = Math.min(kernels.total_items, CAP);
    assert((await rowCount(page, 'kernels-table')) === want, 'row count');
    const [first] = await rows(page, 'kernels-table');
    const k = kernels.items[0];
    assert(first.name === k.name && first.device === k.device, `first ${first.name}`);
    assert(first.total_ns === k.total_ns && first.calls === k.calls, 'total and calls');
    assert(first.min_ns === k.min_ns && first.max_ns === k.max_ns, 'min and max');
    // Every row is reachable: scroll to the end and the last row is row `want`.
    await page.locator('#view-panel-kernels .vscroll').evaluate((s) => {
      s.scrollTop = s.scrollHeight;
    });
    await settle(page);
    await page.waitForTimeout(100);
    const last = await page.locator('#kernels-table tbody tr').last().getAttribute('aria-rowindex');
    assert(Number(last) === want + 1, `last row index ${last}, want ${want + 1}`);
    // A mangled name shows demangled, the raw one in the tooltip.
    const mangled = kernels.items.find((r) => r.raw_name !== r.name);
    if (mangled) {
      await filter(page, 'kernels-table', mangled.name.slice(0, 40));
      const shown = await rows(page, 'kernels-table');
      const row = shown.find((r) => r.title.startsWith(mangled.name));
      assert(row && row.title.includes(`raw name: ${mangled.raw_name}`), 'raw name in tooltip');
      await filter(page, 'kernels-table', '');
    }
  });

  await run.check('Kernels: sort and filter', async () => {
    await sortBy(page, 'kernels-table', 'max_ns');
    const got = (await rows(page, 'kernels-table')).slice(0, 10).map((r) => r.max_ns);
    const want = kernels.items
      .map((r) => r.max_ns)
      .sort((a, b) => b - a)
      .slice(0, 10);
    assert(same(got, want), `by max: ${got} vs ${want}`);
    await filter(page, 'kernels-table', 'nccl');
    const expect = kernels.items.filter((r) => r.name.toLowerCase().includes('nccl')).length;
    assert(expect > 0 && expect < kernels.items.length, 'the filter narrows this trace');
    assert((await rowCount(page, 'kernels-table')) === expect, 'nccl rows');
    await filter(page, 'kernels-table', '');
    await sortBy(page, 'kernels-table', 'total_ns');
  });

  await run.check(
    'Kernels at 1280x800: long names are cut by an ellipsis, not wrapped',
    async () => {
      await page.screenshot({ path: join(args.out, 'view-kernels.png') });
      const layout = await page.evaluate(() => {
        const wrap = document.querySelector('#view-panel-kernels .vscroll');
        const cells = [...document.querySelectorAll('#kernels-table tbody td:first-child')];
        return {
          overflowX: wrap.scrollWidth - wrap.clientWidth,
          rowHeights: [...new Set(cells.map((td) => td.parentElement.offsetHeight))],
          cut: cells.filter((td) => td.scrollWidth > td.clientWidth).length,
          ellipsis: getComputedStyle(cells[0]).textOverflow,
          numbersClipped: [...document.querySelectorAll('#kernels-table td.num, #kernels-table th')]
            .filter((e) => e.scrollWidth > e.clientWidth + 1)
            .map((e) => e.textContent),
        };
      });
      assert(layout.overflowX <= 0, `no horizontal scroll (${layout.overflowX} px)`);
      assert(same(layout.rowHeights, [28]), `one row height: ${layout.rowHeights}`);
      assert(layout.cut > 0, 'this trace has names longer than the column');
      assert(layout.ellipsis === 'ellipsis', 'cut with an ellipsis');
      assert(layout.numbersClipped.length === 0, `clipped: ${layout.numbersClipped}`);
    },
  );

  await run.check('no network request, no console error', async () => {
    assert(log.requests.length === 0, `requests: ${log.requests.join(', ')}`);
    assert(log.errors.length === 0, `errors: ${log.errors.join(' | ')}`);
  });

  await run.check('a second real trace (ROCm): first rows as the query', async () => {
    const mhtml = view(mi250, 'tables_mi250.html');
    const mops = query(mi250, 'ops');
    const mk = query(mi250, 'kernels');
    const { page: p, log: l } = await openViewer(context, mhtml);
    await show(p, 'operators');
    assert((await rows(p, 'operators-table'))[0].name === mops.items[0].name, 'first op');
    assert((await rowCount(p, 'operators-table')) === mops.total_items, 'op rows');
    const totals = await p.innerText('#operators-totals');
    assert(
      mops.unattributed_device_ns === 0
        ? totals.includes('all of it attributed')
        : totals.includes('unattributed'),
      `unattributed ${mops.unattributed_device_ns} ns, line "${totals}"`,
    );
    await show(p, 'kernels');
    assert((await rows(p, 'kernels-table'))[0].name === mk.items[0].name, 'first kernel');
    assert((await rowCount(p, 'kernels-table')) === mk.total_items, 'kernel rows');
    assert(l.errors.length === 0, `errors: ${l.errors.join(' | ')}`);
    await p.close();
  });

  await run.check('hostile op and kernel names render as text', async () => {
    const { page: p, log: l } = await openViewer(
      context,
      view(hostileTrace, 'tables_hostile.html'),
    );
    await show(p, 'operators');
    // tests/fixtures/device_work.jsonl by hand: aten::linear (self 2 ms, total 4 ms) encloses
    // the renamed aten::mm (self 1.9 ms, total 2 ms), which encloses cudaLaunchKernel (0.1 ms),
    // the launch of the 1 ms kernel; a 0.5 ms memcpy has no launch. Host self 4 ms in all;
    // device 1.5 ms, 0.5 ms of it unattributed.
    const got = await rows(p, 'operators-table');
    assert(
      same(
        got.map((r) => [r.name, r.host_self_ns, r.host_total_ns, r.device_self_ns]),
        [
          ['aten::linear', 2e6, 4e6, 0],
          [HOSTILE_OP_SHOWN, 1.9e6, 2e6, 1e6],
          ['cudaLaunchKernel', 1e5, 1e5, 0],
        ],
      ),
      `rows ${JSON.stringify(got)}`,
    );
    assert(got[0].device_total_ns === 1e6, 'linear: its child’s kernel in its device total');
    assert(got[1].title === HOSTILE_OP_SHOWN, `tooltip ${JSON.stringify(got[1].title)}`);
    // The evidence keeps the name exact; only its display escapes the controls.
    assert(
      query(hostileTrace, 'ops').items.some((op) => op.name === HOSTILE_OP),
      'the exact name in the query JSON',
    );
    const totals = await p.innerText('#operators-totals');
    assert(
      totals.includes('Host self time of all ops: 4.00 ms') &&
        totals.includes('Device time: 1.50 ms, of which 500 µs (33.3%) unattributed'),
      totals,
    );
    await show(p, 'kernels');
    const k = await rows(p, 'kernels-table');
    assert(
      same(
        k.map((r) => [r.name, r.kind, r.total_ns]),
        [
          [HOSTILE_KERNEL, 'kernel', 1e6],
          ['Memcpy HtoD (Pageable -> Device)', 'memcpy', 5e5],
        ],
      ),
      `kernels ${JSON.stringify(k)}`,
    );
    await show(p, 'operators');
    await p.screenshot({ path: join(args.out, 'view-operators-hostile.png') });
    assert((await p.locator('img').count()) === 0, 'no <img> element');
    assert(l.dialogs.length === 0, `alert ran: ${l.dialogs}`);
    assert(l.errors.length === 0, `errors: ${l.errors.join(' | ')}`);
    await p.close();
  });

  await run.check(
    'a synthetic trace/6 without device work has Operators but no Kernels',
    async () => {
      const { page: p } = await openViewer(context, view(synthTrace, 'tables_synth.html'));
      const tabs = await p.locator('#view-tabs [role="tab"]').allInnerTexts();
      assert(tabs.includes('Operators'), `tabs ${tabs}`);
      assert(!tabs.includes('Kernels'), `no Kernels tab: ${tabs}`);
      await show(p, 'operators');
      const synthOps = query(synthTrace, 'ops');
      assert((await rows(p, 'operators-table'))[0].name === synthOps.items[0].name, 'first op');
      assert((await p.innerText('#operators-totals')).includes('No device work'), 'says so');
      await p.close();
    },
  );
});
run.finish();
