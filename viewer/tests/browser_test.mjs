// Browser tests of the viewer: real chromium opens HTML files written by
// `candle-graph view` from disk. Expected values come from trace6.md §8.3/§9.6 for the §4.11 trace
// (e.g. the memory peak 10,240 B, four findings, the span names), not from the code under test.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  assert,
  candleGraph,
  createRunner,
  openViewer,
  parseArgs,
  withBrowser,
} from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = parseArgs(process.argv);
const run = createRunner();
const fixturePayload = join(here, 'fixtures/spec_example.viewer.json');

// XSS fixture: untrusted names in every place the views print them.
const EVIL = [
  '</script><script>window.__cg_xss=1</script>',
  '<img src=x onerror="window.__cg_xss=2">',
  '"quoted" & \'single\'',
  'line\u2028separator\u2029para',
  'rtl \u202Egnp.exe\u202C end',
];
function xssPayload() {
  const p = JSON.parse(readFileSync(fixturePayload, 'utf8'));
  const nodes = p.views.trace.nodes;
  EVIL.forEach((name, i) => {
    nodes[i].label = name;
    nodes[i].short_label = name;
  });
  for (const item of p.views.span_costs.items) {
    const n = nodes.find((x) => x.id === item.id);
    item.name = n.label;
  }
  for (const row of p.span_tree) row.name = nodes.find((x) => x.id === row.id).label;
  p.views.evidence.findings.push(...EVIL);
  p.views.evidence.gaps.push(EVIL[1]);
  p.views.evidence.provenance.tags = { [EVIL[0]]: EVIL[1] };
  p.views.memory.peak_breakdown[0].tensor_id = EVIL[1];
  p.views.gpu.reason = EVIL[0];
  p.views.operators.items[0].name = EVIL[1];
  p.views.operators.items[1].name = EVIL[0];
  // A device row, so the Kernels view (absent for this trace) is shown with hostile names too.
  p.views.kernels.items.push({
    calls: 1,
    device: EVIL[2],
    kind: 'kernel',
    max_ns: 1,
    min_ns: 1,
    name: EVIL[1],
    raw_name: EVIL[0],
    total_ns: 1,
  });
  p.views.kernels.device_ns = 1;
  p.summary.entrypoint = EVIL[1];
  return p;
}

const specHtml = join(args.out, 'spec_example.html');
const xssHtml = join(args.out, 'xss.html');
const xssJson = join(args.out, 'xss.viewer.json');
candleGraph(args.binary, ['view', '--payload', fixturePayload, '-o', specHtml]);
writeFileSync(xssJson, JSON.stringify(xssPayload()));
candleGraph(args.binary, ['view', '--payload', xssJson, '-o', xssHtml]);

const traceHtml = join(args.out, 'spec_example_from_trace.html');
const specTrace = join(here, '../../tests/fixtures/spec_example.jsonl');
candleGraph(args.binary, ['view', specTrace, '-o', traceHtml]);

await run.check(
  'view TRACE projects the trace6.md §4.11 trace to the hand-made viewer/4 payload',
  async () => {
    const html = readFileSync(traceHtml, 'utf8');
    const m = html.match(/id="cg-payload" type="application\/json">([\s\S]*?)<\/script>/);
    assert(m, 'payload element');
    const got = JSON.parse(m[1]);
    const want = JSON.parse(readFileSync(fixturePayload, 'utf8'));
    delete got.payload_limits; // added field, not in trace6.md §12.1
    const canon = (v) =>
      JSON.stringify(v, (k, x) =>
        x && typeof x === 'object' && !Array.isArray(x)
          ? Object.fromEntries(Object.entries(x).sort())
          : x,
      );
    assert(
      canon(got) === canon(want),
      'payload differs from the fixture derived from trace6.md §8.3/§9.6',
    );
    const keys = Object.keys(JSON.parse(m[1]));
    assert(keys.join() === [...keys].sort().join(), 'top-level keys sorted (trace6.md §17.1)');
  },
);

const VIEWS = ['evidence', 'trace', 'timeline', 'operators', 'span_costs', 'memory', 'gpu'];

await withBrowser(async (context) => {
  const { page, log } = await openViewer(context, specHtml);
  // Cards are `content-visibility: auto`: until a frame has laid a panel out, innerText skips
  // their contents (a CI run once read the Memory panel without its device card). Two frames:
  // the one that lays out, and the next, after which the text is what a user sees.
  const settle = () =>
    page.evaluate(
      () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
    );
  const panelText = async (view) => {
    await settle();
    return page.locator(`#view-panel-${view}`).innerText();
  };
  const show = async (view) => {
    await page.click(`#view-tab-${view}`);
    await page.waitForSelector(`#view-panel-${view}:not([hidden])`);
    await settle();
  };

  await run.check(
    'static HTML: markers of trace6.md §14, CSP, no URL, no external script',
    async () => {
      const html = readFileSync(specHtml, 'utf8');
      assert(html.startsWith('<!DOCTYPE html>'), 'doctype');
      for (const m of [
        'data-viewer="candle-graph-evidence"',
        'view-panel-evidence',
        'view-panel-gpu',
        'span-tree',
        'peak-breakdown',
        'heat-mode',
        'cg-payload',
      ])
        assert(html.includes(m), `marker ${m}`);
      assert(!html.includes('https://'), 'no https:// anywhere');
      // The only http:// text allowed is the SVG/XML namespace name, which is never fetched.
      assert(
        !html.replaceAll('http://www.w3.org/2000/svg', '').includes('http://'),
        'no other http:// URL',
      );
      assert(!/<script[^>]*\ssrc=/i.test(html), 'no script src');
      assert(
        /Content-Security-Policy" content="default-src 'none'[^"]*connect-src 'none'/.test(html),
        'CSP forbids connections',
      );
    },
  );

  await run.check('opens on Evidence with trust status, findings and the memory peak', async () => {
    const text = await panelText('evidence');
    assert(text.includes('TRUSTED'), 'trust status');
    assert(text.includes('demo/update-000000000001/backward: 5.00 ms self time'), 'first finding');
    assert(text.includes('10,240 B'), 'peak 10,240 B');
    assert(text.includes('Nsight capture was not requested'), 'gap');
    assert(text.includes('encoder.weight'), 'gradient row');
    assert(
      (await page.getAttribute('#view-tab-evidence', 'aria-selected')) === 'true',
      'evidence tab selected',
    );
    await page.screenshot({ path: join(args.out, 'view-evidence.png'), fullPage: true });
  });

  await run.check(
    'navigation: Operators for a trace with ops, no Kernels without device work',
    async () => {
      // tests/fixtures/spec_example.jsonl has two CPU ops and no kernel, memcpy or memset.
      const tabs = await page.locator('#view-tabs [role="tab"]').allInnerTexts();
      assert(
        JSON.stringify(tabs) ===
          JSON.stringify([
            'Evidence',
            'Trace',
            'Timeline',
            'Operators',
            'Span costs',
            'Memory',
            'GPU',
          ]),
        `tabs ${JSON.stringify(tabs)}`,
      );
      await show('operators');
      const rows = await page
        .locator('#operators-table tbody tr')
        .evaluateAll((trs) => trs.map((tr) => tr.cells[0].textContent));
      assert(JSON.stringify(rows) === '["matmul","sgd_update"]', `rows ${JSON.stringify(rows)}`);
      assert(
        (await page.innerText('#operators-totals')).includes('No device work'),
        'no device work stated',
      );
    },
  );

  await run.check('Trace: graph nodes, span tree, inspector labels, heat mode', async () => {
    await show('trace');
    await page.waitForSelector('#graph-canvas svg g.node');
    const labels = await page.locator('#graph-canvas svg g.node').count();
    assert(labels === 7 + 3, `7 graph nodes + 3 tensor nodes (x, w, h), got ${labels}`);
    const edgeLabels = await page
      .locator('#graph-canvas text.edge-label')
      .evaluateAll((ns) => ns.map((n) => n.textContent));
    assert(edgeLabels.length === 8, `8 edges (trace6.md §8.3), got ${edgeLabels.length}`);
    assert(
      edgeLabels.every((l) => l.includes('ms')),
      'every edge label has ms',
    );
    assert(await page.isVisible('#span-tree [role="treeitem"]'), 'span tree visible');
    await page.click('#graph-canvas g.node[data-id="s4"]');
    assert(
      (await page.innerText('#insp-label')) === 'demo/update-000000000001/backward',
      'inspector label',
    );
    assert((await page.innerText('#insp-self')) === '5.00 ms', 'inspector self time');
    assert(
      (await page.innerText('#insp-peak')).startsWith('8,192 B'),
      'inspector peak (fixed roll-up)',
    );
    const insp = await page.innerText('#inspector');
    for (const label of [
      'Label',
      'Kind',
      'Self time',
      'Total time',
      'Shape',
      'Dtype',
      'Storage',
      'Peak live',
      'Requested',
    ])
      assert(insp.includes(label), `inspector label ${label}`);
    await page.check('input[name="heat-mode"][value="memory"]');
    await page.waitForSelector('#graph-canvas g.node text.sub');
    assert(
      (await page.locator('#graph-canvas g.node text.sub').first().textContent()).startsWith(
        'peak',
      ),
      'memory heat labels',
    );
    assert(await page.isVisible('#export-svg'), 'Export SVG visible on Trace');
    const download = page.waitForEvent('download');
    await page.click('#export-svg');
    const file = await download;
    assert(file.suggestedFilename() === 'candle-graph-trace.svg', 'svg export');
    await page.screenshot({ path: join(args.out, 'view-trace.png'), fullPage: true });
  });

  await run.check('Trace: search selects a span', async () => {
    await page.fill('#span-search', 'optimizer');
    await page.waitForSelector('#search-result:has-text("1 matching")');
    await page.press('#span-search', 'Enter');
    assert(
      (await page.innerText('#insp-label')) === 'demo/update-000000000001/optimizer',
      'search selection',
    );
  });

  await run.check('Timeline: canvas drawn, hover names a span', async () => {
    await show('timeline');
    assert(!(await page.isVisible('#export-svg')), 'Export SVG hidden outside Trace');
    const box = await page.locator('#timeline-canvas').boundingBox();
    assert(box && box.width > 300, 'canvas laid out');
    // Row 0 (the root, 24 px axis + 10 px) spans the whole time axis.
    await page.mouse.move(box.x + box.width / 2, box.y + 24 + 10);
    const tip = await page.locator('#view-panel-timeline .chart-tip').innerText();
    assert(tip.includes('demo::train::update'), `hover shows the root, got ${tip}`);
    assert((await page.innerText('#timeline-range')).includes('of 15.00 ms'), 'time range 15 ms');
    await page.screenshot({ path: join(args.out, 'view-timeline.png'), fullPage: true });
  });

  await run.check('Span costs: sorted by total, sortable by self', async () => {
    await show('span_costs');
    const first = await page.locator('#span-costs-table tbody tr').first().innerText();
    assert(first.includes('demo::train::update'), 'root first by total');
    await page.click('#span-costs-table th[data-key="self_time_ns"] button');
    const top = await page.locator('#span-costs-table tbody tr').first().innerText();
    assert(
      top.includes('backward') || top.includes('5.00 ms'),
      `self sort puts 5 ms first, got ${top}`,
    );
    assert(
      (await page.getAttribute('#span-costs-table th[data-key="self_time_ns"]', 'aria-sort')) ===
        'descending',
      'aria-sort',
    );
    await page.screenshot({ path: join(args.out, 'view-span_costs.png'), fullPage: true });
  });

  await run.check('Memory: peak, capacity, breakdown', async () => {
    await show('memory');
    const text = await panelText('memory');
    assert(text.includes('10,240 B'), 'peak bytes');
    assert(text.includes('8,388,608 B'), 'capacity from device_memory');
    const rows = await page.locator('#peak-breakdown tbody tr').count();
    assert(rows === 2, `two allocations live at the peak, got ${rows}`);
    assert(
      (await page.locator('#peak-breakdown tbody tr').first().innerText()).includes('g_w'),
      'largest first',
    );
    await page.screenshot({ path: join(args.out, 'view-memory.png'), fullPage: true });
  });

  await run.check(
    'Memory legend: one item per label, none touching another (was "peakcapacity")',
    async () => {
      await show('memory');
      // The trace6.md §4.11 trace: categories activation and gradient, the peak line, and a capacity of
      // 8 MiB far above the 10 KiB peak, so it is named in the legend instead of drawn.
      const legend = page.locator('#view-panel-memory .chart-legend').first();
      const items = await legend.locator('.legend-item').allInnerTexts();
      const want = ['activation', 'gradient', 'peak', 'capacity 8.0 MiB (above the chart)'];
      assert(
        JSON.stringify(items.map((t) => t.trim())) === JSON.stringify(want),
        `legend items ${JSON.stringify(items)}`,
      );
      const text = (await legend.innerText()).replace(/\s+/g, ' ').trim();
      assert(text === want.join(' '), `legend reads "${text}"`);
      for (const size of [
        { width: 1280, height: 800 },
        { width: 1920, height: 1080 },
      ]) {
        await page.setViewportSize(size);
        await settle();
        const boxes = await legend
          .locator('.legend-item')
          .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()));
        for (let i = 0; i < boxes.length; i++) {
          for (let j = i + 1; j < boxes.length; j++) {
            const a = boxes[i],
              b = boxes[j];
            const apart =
              a.right + 4 <= b.left ||
              b.right + 4 <= a.left ||
              a.bottom <= b.top ||
              b.bottom <= a.top;
            assert(
              apart,
              `legend items ${want[i]} and ${want[j]} touch at ${size.width}x${size.height}`,
            );
          }
        }
      }
      await page.setViewportSize({ width: 1400, height: 900 });
    },
  );

  await run.check(
    'Span costs at 1280x800 and 1920x1080: no number, kind or header is clipped',
    async () => {
      // Names may be clipped (at their start, full name in the tooltip); every other cell fits.
      for (const size of [
        { width: 1280, height: 800 },
        { width: 1920, height: 1080 },
      ]) {
        await page.setViewportSize(size);
        await show('span_costs');
        const clipped = await page.evaluate(() =>
          [
            ...document.querySelectorAll(
              '#span-costs-table td:not(.name-cell), #span-costs-table th',
            ),
          ]
            .filter((e) => e.scrollWidth > e.clientWidth + 1)
            .map((e) => e.textContent),
        );
        assert(
          clipped.length === 0,
          `clipped at ${size.width}x${size.height}: ${JSON.stringify(clipped)}`,
        );
      }
      await page.setViewportSize({ width: 1400, height: 900 });
    },
  );

  await run.check('GPU: unavailable with the reason', async () => {
    await show('gpu');
    const text = await panelText('gpu');
    assert(
      text.includes('unavailable') && text.includes('Nsight capture was not requested'),
      'reason',
    );
    assert(text.includes('clocks are separate'), 'clock note');
    await page.screenshot({ path: join(args.out, 'view-gpu.png'), fullPage: true });
  });

  await run.check('keyboard: arrows, Home and End move between tabs', async () => {
    await page.focus('#view-tab-gpu');
    await page.keyboard.press('Home');
    assert(
      (await page.getAttribute('#view-tab-evidence', 'aria-selected')) === 'true',
      'Home → Evidence',
    );
    await page.keyboard.press('ArrowDown');
    assert(
      (await page.getAttribute('#view-tab-trace', 'aria-selected')) === 'true',
      'Down → Trace',
    );
    await page.keyboard.press('ArrowRight');
    assert(
      (await page.evaluate(() => document.activeElement.id)) === 'view-tab-timeline',
      'focus follows',
    );
    await page.keyboard.press('End');
    assert(await page.isVisible('#view-panel-gpu'), 'End → GPU');
    await page.keyboard.press('ArrowLeft');
    assert(await page.isVisible('#view-panel-memory'), 'Left → Memory');
  });

  await run.check('span tree keyboard: Right expands, Down moves, Enter selects', async () => {
    await show('trace');
    await page.focus('#span-search');
    await page.fill('#span-search', '');
    await page.waitForTimeout(200);
    await page.focus('#span-tree [role="treeitem"]');
    await page.keyboard.press('ArrowRight'); // root is expanded: enter its first child (s2)
    await page.keyboard.press('ArrowRight'); // expand s2
    await page.keyboard.press('ArrowDown'); // s3
    await page.keyboard.press('Enter');
    assert(
      (await page.innerText('#insp-label')) === 'demo/update-000000000001/forward',
      'tree keyboard selection',
    );
  });

  await run.check('dark theme toggles and persists', async () => {
    await page.click('#theme-toggle');
    const theme = await page.evaluate(() => document.documentElement.dataset.theme);
    assert(theme === 'dark', 'dark');
    await show('memory');
    await page.screenshot({ path: join(args.out, 'view-memory-dark.png'), fullPage: true });
    await page.reload();
    await page.waitForSelector('html[data-ready="true"]');
    assert(
      (await page.evaluate(() => document.documentElement.dataset.theme)) === 'dark',
      'persisted in localStorage',
    );
    await page.click('#theme-toggle');
  });

  await run.check('no network request, no console error', async () => {
    assert(log.requests.length === 0, `requests: ${log.requests.join(', ')}`);
    assert(log.errors.length === 0, `errors: ${log.errors.join(' | ')}`);
  });

  await run.check('XSS fixture renders as text and executes nothing', async () => {
    const { page: xss, log: xlog } = await openViewer(context, xssHtml);
    for (const view of VIEWS) {
      await xss.click(`#view-tab-${view}`);
      await xss.waitForTimeout(50);
    }
    await xss.click('#view-tab-evidence');
    const flag = await xss.evaluate(() => window.__cg_xss);
    assert(flag === undefined, `script ran: ${flag}`);
    assert((await xss.locator('img').count()) === 0, 'no injected <img>');
    // Views are prepared in idle time; on a loaded machine the panel may still be filling in.
    await xss
      .waitForFunction(
        (needle) =>
          (document.querySelector('#view-panel-evidence')?.innerText || '').includes(needle),
        EVIL[0],
        { timeout: 10000 },
      )
      .catch(() => {});
    const evidence = await xss.locator('#view-panel-evidence').innerText();
    assert(
      evidence.includes('</script><script>window.__cg_xss=1</script>'),
      'closing tag shown as text',
    );
    assert(evidence.includes('<img src=x onerror="window.__cg_xss=2">'), 'img shown as text');
    const names = await xss.evaluate(() =>
      [...document.querySelectorAll('#view-panel-evidence li')].map((li) => li.textContent),
    );
    assert(names.includes('line\u2028separator\u2029para'), 'U+2028/2029 survive the embedding');
    // The override and its pop are shown as the Markdown report writes them (the override would
    // show the name as `rtl exe.png end`); the page's payload keeps the name exact.
    assert(names.includes('rtl \\u202egnp.exe\\u202c end'), `RTL override escaped: ${names}`);
    const payload = await xss.evaluate(() =>
      JSON.stringify(JSON.parse(document.getElementById('cg-payload').textContent)),
    );
    assert(payload.includes('rtl \u202Egnp.exe\u202C end'), 'RTL override exact in the payload');
    for (const id of ['operators', 'kernels']) {
      await xss.click(`#view-tab-${id}`);
      await xss.waitForSelector(`#${id}-table tbody tr`);
      const text = await xss.locator(`#view-panel-${id}`).innerText();
      assert(text.includes(EVIL[1]), `${id}: img shown as text`);
    }
    assert(
      (await xss.getAttribute('#kernels-table tbody td', 'title')).includes(EVIL[0]),
      'raw name in the tooltip, as text',
    );
    assert((await xss.locator('img').count()) === 0, 'no <img> from the tables');
    assert((await xss.evaluate(() => window.__cg_xss)) === undefined, 'no script from the tables');
    await xss.click('#view-tab-span_costs');
    assert(
      (await xss.locator('#view-panel-span_costs').innerText()).includes('"quoted" & \'single\''),
      'quotes as text',
    );
    const html = readFileSync(xssHtml, 'utf8');
    const payloadStart = html.indexOf('id="cg-payload"');
    const payloadEnd = html.indexOf('</script>', payloadStart);
    assert(!html.slice(payloadStart, payloadEnd).includes('<'), 'payload has no raw <');
    assert(xlog.requests.length === 0, `requests: ${xlog.requests.join(', ')}`);
    assert(xlog.errors.length === 0, `errors: ${xlog.errors.join(' | ')}`);
    await xss.screenshot({ path: join(args.out, 'xss-evidence.png'), fullPage: true });
  });
});
run.finish();
