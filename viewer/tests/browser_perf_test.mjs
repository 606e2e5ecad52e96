// The 1 M-op target (the viewer of a 1 M-op trace opens and stays responsive), measured in a real browser: `candle-graph synth` writes a trace
// with ≥ 1,000,000 ops, `view` turns it into HTML; the HTML must be ≤ 50 MB, the first meaningful
// paint (Evidence view with its trust status) ≤ 3 s and every view switch ≤ 200 ms (medians).
// Prints the figures recorded in docs/performance.md (Viewer).
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  assert,
  candleGraph,
  createRunner,
  openViewer,
  parseArgs,
  withBrowser,
} from './harness.mjs';

const args = parseArgs(process.argv);
const run = createRunner();
const trace = join(args.out, 'synth-1m.jsonl');
const html = join(args.out, 'synth-1m.html');
// 111,112 layers × (4 forward + 4 backward ops) + 1 optimizer op per layer = 1,000,008 ops.
const t0 = Date.now();
candleGraph(args.binary, [
  'synth',
  '--layers',
  '111112',
  '--ops-per-span',
  '4',
  '--seed',
  '7',
  '-o',
  trace,
]);
const t1 = Date.now();
candleGraph(args.binary, ['view', trace, '-o', html]);
const t2 = Date.now();
const size = statSync(html).size;
console.log(
  `synth: ${((t1 - t0) / 1000).toFixed(1)} s, view: ${((t2 - t1) / 1000).toFixed(1)} s, trace ${(statSync(trace).size / 1e6).toFixed(1)} MB, HTML ${(size / 1e6).toFixed(1)} MB`,
);
// The 550 MB trace is only the input of `view`; it is not kept in the build tree of every run.
rmSync(trace);

await run.check('HTML of a 1 M-op trace is at most 50 MB', async () => {
  assert(size <= 50e6, `HTML is ${size} bytes`);
});

// The machine is shared and noisy (load 8-11 on 2 cores while others build): one page load
// can be 2-3x slower than the next. So the page is loaded LOADS times, each figure is the median
// over the loads (the same method as docs/performance.md (Viewer)), and the targets are checked on
// the medians. Each load starts from a fresh page, so every "first switch" is a real first one.
const LOADS = 3;
const SEQUENCE = [
  'trace',
  'timeline',
  'span_costs',
  'memory',
  'gpu',
  'evidence',
  'trace',
  'timeline',
];
const median = (values) => [...values].sort((x, y) => x - y)[values.length >> 1];

await withBrowser(async (context) => {
  const ready = [];
  const switches = SEQUENCE.map(() => []);
  const requests = [];
  const errors = [];
  let trusted = true;
  for (let load = 0; load < LOADS; load++) {
    const { page, log } = await openViewer(context, html);
    const paint = await page.evaluate(() => {
      const nav = performance.getEntriesByType('navigation')[0];
      const fcp = performance.getEntriesByName('first-contentful-paint')[0];
      // The viewer's own Performance API measures (main.js): parse, index, first view, and when
      // each other view was prepared in idle time — all in ms from the start of the script.
      const measures = performance
        .getEntriesByType('measure')
        .filter((m) => m.name.startsWith('cg:'))
        .map((m) => `${m.name.slice(3)} ${m.duration.toFixed(0)}`);
      return {
        domContentLoaded: nav.domContentLoadedEventEnd,
        fcp: fcp ? fcp.startTime : null,
        measures,
      };
    });
    console.log(
      `load ${load + 1}: ready at ${log.readyMs} ms (wall, goto → data-ready), domContentLoaded ${paint.domContentLoaded.toFixed(0)} ms, first-contentful-paint ${paint.fcp?.toFixed(0)} ms`,
    );
    console.log(`  in-page (ms after the script started): ${paint.measures.join(', ')}`);
    ready.push(log.readyMs);
    trusted &&= (await page.innerText('#trust-status')).includes('TRUSTED');
    const line = [];
    for (const [i, view] of SEQUENCE.entries()) {
      const ms = await page.evaluate(async (v) => {
        const start = performance.now();
        document.getElementById(`view-tab-${v}`).click();
        // Wait for the frame that shows the view to be produced.
        await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        return performance.now() - start;
      }, view);
      switches[i].push(ms);
      line.push(`${view} ${ms.toFixed(0)}`);
      if (load === 0) await page.screenshot({ path: join(args.out, `synth-1m-${view}.png`) });
    }
    console.log(`  switches (ms): ${line.join(', ')}`);
    requests.push(...log.requests);
    errors.push(...log.errors);
    await page.close();
  }
  await run.check(
    `first meaningful paint (Evidence with trust status) within 3 s, median of ${LOADS} loads`,
    async () => {
      assert(trusted, 'trust status shown');
      assert(
        median(ready) <= 3000,
        `ready after ${median(ready)} ms (median of ${ready.join(', ')})`,
      );
    },
  );
  for (const [i, view] of SEQUENCE.entries()) {
    const label = SEQUENCE.indexOf(view) === i ? view : `${view} again`;
    await run.check(`switch to ${label} within 200 ms, median of ${LOADS} loads`, async () => {
      const ms = median(switches[i]);
      console.log(
        `  switch to ${label}: median ${ms.toFixed(0)} ms of ${switches[i].map((v) => v.toFixed(0)).join(', ')}`,
      );
      assert(ms <= 200, `${label} took ${ms.toFixed(0)} ms (median)`);
    });
  }
  await run.check('no network request, no console error on the 1 M-op page', async () => {
    assert(requests.length === 0, `requests: ${requests.join(', ')}`);
    assert(errors.length === 0, `errors: ${errors.join(' | ')}`);
  });
});
run.finish();
