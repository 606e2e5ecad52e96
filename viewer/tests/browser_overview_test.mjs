// Browser tests of the Overview view and the timeline's stream lanes on real Kineto traces and on
// constructed trace/6 files. Expected values never come from the payload under test: they are
// computed here from `candle-graph query --kind gpu|steps|kernels` and `candle-graph import` (the
// evidence stage's writers, an independent path from the viewer payload and its front end), from
// the fixture file itself (read with node's zlib), or worked out by hand in the comments.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
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

const a100 = join(fixtures, 'pytorch-chrome-trace/hta-tracediff-control-a100-nccl-6steps.json.gz');
const alexnet = join(fixtures, 'pytorch-chrome-trace/hta-alexnet-a100-2streams.json.gz');
const query = (trace, kind) => queryResult(args.binary, trace, kind);
const view = (trace, name) => {
  const out = join(args.out, name);
  candleGraph(args.binary, ['view', trace, '-o', out]);
  return out;
};

const HOSTILE_KERNEL = '<img src=x onerror=alert(3)>';
const HOSTILE_MODEL = '<img src=x onerror=alert(4)> A100';
const deviceWork = readFileSync(join(here, '../../tests/fixtures/device_work.jsonl'), 'utf8');
const hostileTrace = join(args.out, 'overview_hostile.jsonl');
writeFileSync(
  hostileTrace,
  deviceWork
    .replace('"op_name":"_Z4gemmv"', `"op_name":${JSON.stringify(HOSTILE_KERNEL)}`)
    .replace('"tags":{}', `"tags":{"source.device_name":${JSON.stringify(HOSTILE_MODEL)}}`),
);
const synthTrace = join(args.out, 'overview_synth.jsonl');
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
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
// A stream lane's name as the Chrome export gives it (chrome.md): Kineto's stream -1, written as
// the 32-bit 4294967295, is the device-wide lane.
const laneName = (device, stream) =>
  `${device} ${stream === 4294967295 ? 'device-wide' : `stream ${stream}`}`;

/**
 * The Overview's parts of one device of `query --kind gpu`, by the definitions of
 * docs/compatibility.md (Viewer): kernel-type segments without COMPUTATION split the rest of busy
 * time; idle by the causes `query --kind gpu` gives the device's own gaps (their sum is checked
 * against idle_ns); host only = step − window, which holds when the device window lies inside the
 * step (asserted by the caller).
 */
function expectedParts(d, stepNs) {
  const seg = (pred) => d.kernel_types.filter((t) => pred(t.type)).reduce((s, t) => s + t.ns, 0);
  const has = (t, w) => t.split(' overlapping ').includes(w);
  assert(
    d.idle_host_wait_ns + d.idle_kernel_wait_ns + d.idle_other_ns === d.idle_ns,
    'the idle causes add up to idle_ns',
  );
  return {
    compute_ns: d.compute_ns,
    communication_exposed_ns: seg((t) => has(t, 'COMMUNICATION') && !has(t, 'COMPUTATION')),
    memory_exposed_ns: seg((t) => t === 'MEMORY'),
    idle_host_wait_ns: d.idle_host_wait_ns,
    idle_kernel_wait_ns: d.idle_kernel_wait_ns,
    idle_other_ns: d.idle_other_ns,
    host_only_ns: stepNs - d.window_ns,
  };
}

/** The parts table of device i: {part key: exact ns}. */
const shownParts = (page, i) =>
  page
    .locator(`#overview-parts-${i}`)
    .evaluate((t) =>
      Object.fromEntries(
        [...t.querySelectorAll('tr[data-part]')].map((tr) => [
          tr.dataset.part,
          Number(tr.querySelector('td').dataset.value),
        ]),
      ),
    );

/** The heading of device i's card. */
const deviceHeading = (page, i) =>
  page
    .locator(`#overview-total-${i}`)
    .evaluate((p) => p.closest('section').querySelector('h2').textContent);

/** What the timeline's last frame drew per lane (canvas data-lanes, written by the view). */
const laneStats = async (page) =>
  JSON.parse((await page.getAttribute('#timeline-canvas', 'data-lanes')) || '[]');

await withBrowser(async (context) => {
  const html = view(a100, 'overview_a100.html');
  const gpu = query(a100, 'gpu');
  const steps = query(a100, 'steps');
  const stepNs = steps.steps.find((s) => s.step === steps.chosen).wall_ns;
  const { page, log } = await openViewer(context, html);
  await page.setViewportSize({ width: 1280, height: 800 });

  await run.check('Overview is the first tab and the page opens on it', async () => {
    const tabs = await page.locator('#view-tabs [role="tab"]').allInnerTexts();
    assert(tabs[0] === 'Overview', `tabs ${tabs}`);
    assert(
      (await page.getAttribute('#view-tab-overview', 'aria-selected')) === 'true',
      'selected at load',
    );
  });

  await run.check('Overview: the parts are query --kind gpu’s numbers', async () => {
    await settle(page);
    assert(gpu.devices.length > 0, 'the fixture has device work');
    for (let i = 0; i < gpu.devices.length; i++) {
      const d = gpu.devices[i];
      const got = await shownParts(page, i);
      const want = expectedParts(d, stepNs);
      for (const [key, ns] of Object.entries(want))
        assert(got[key] === ns, `${d.device} ${key}: page ${got[key]}, query ${ns}`);
      // The identity, on the query's numbers: the three busy parts partition busy time, busy and
      // idle the window, the window and host only the step.
      const busy = want.compute_ns + want.communication_exposed_ns + want.memory_exposed_ns;
      assert(busy === d.busy_ns, `busy ${busy} vs ${d.busy_ns}`);
      assert(busy + d.idle_ns === d.window_ns, 'busy + idle = window');
      const parts = Object.values(got)
        .slice(0, 7)
        .reduce((s, x) => s + x, 0);
      assert(parts === got.total && got.total === stepNs, `Σ parts ${parts}, total ${got.total}`);
      assert(got.busy === d.busy_ns && got.window === d.window_ns, 'footer rows');
      // The bar: one segment per non-zero part, widths in the parts' proportions.
      const seg = await page
        .locator('#view-panel-overview .stack')
        .nth(i)
        .evaluate((bar) => ({
          width: bar.clientWidth,
          parts: [...bar.children].map((s) => [s.dataset.part, s.getBoundingClientRect().width]),
        }));
      for (const [key, w] of seg.parts) {
        const wantW = (seg.width * got[key]) / got.total;
        assert(Math.abs(w - Math.max(wantW, 1)) < 1, `${key}: ${w} px vs ${wantW}`);
      }
    }
  });

  await run.check('Overview: the run’s GPU is named by its model', async () => {
    // The fixture read with zlib: the device index its kernels ran on, and the model that
    // deviceProperties gives for that index. Other devices (none in this trace) have no model.
    const trace = JSON.parse(gunzipSync(readFileSync(a100)));
    const index = trace.traceEvents.find((e) => e.cat === 'kernel').args.device;
    const model = trace.deviceProperties.find((p) => p.id === index).name;
    assert(model.length > 0, 'the fixture names its GPUs');
    for (let i = 0; i < gpu.devices.length; i++) {
      const device = gpu.devices[i].device;
      const want = device === `cuda:${index}` ? `${device} (${model})` : device;
      const got = await deviceHeading(page, i);
      assert(got === want, `heading "${got}", want "${want}"`);
    }
    assert(
      gpu.devices.some((d) => d.device === `cuda:${index}`),
      'the run’s device has work',
    );
  });

  await run.check('Overview: key numbers and the GPU findings of the packet', async () => {
    const d = gpu.devices[0];
    const text = await page.innerText('#view-panel-overview');
    const l = d.launches;
    assert(text.includes(`${l.count.toLocaleString('en-US')} · launch-to-start delay`), 'count');
    // p50 563 µs and p95 10.6 ms in this trace: three significant digits.
    assert(l.p50_delay_ns === 563000 && l.p95_delay_ns === 10629000, 'the fixture as known');
    assert(text.includes('p50 563 µs, p95 10.6 ms'), 'delay percentiles');
    assert(
      text.includes(`${((100 * d.busy_ns) / d.window_ns).toFixed(1)}% of the device window`),
      'busy share of the window',
    );
    for (const s of d.sync_stalls) assert(text.includes(s.call), `sync stall ${s.call}`);
    const packet = JSON.parse(candleGraph(args.binary, ['import', a100]));
    const want = packet.findings.filter(
      (f) => f.startsWith('GPU ') || f.includes('the host was blocked'),
    );
    assert(want.length > 0, 'the fixture has GPU findings');
    const got = await page.locator('#overview-findings li').allInnerTexts();
    assert(same(got, want), `findings ${JSON.stringify(got)}`);
    await page.screenshot({ path: join(args.out, 'view-overview.png'), fullPage: true });
  });

  await run.check('Timeline: one lane per stream query --kind gpu lists', async () => {
    await show(page, 'timeline');
    const lanes = await laneStats(page);
    const want = gpu.devices.flatMap((d) => d.streams.map((s) => laneName(d.device, s.stream)));
    assert(same(lanes.map((l) => l.lane).sort(), want.sort()), `lanes ${lanes.map((l) => l.lane)}`);
  });

  await run.check('Timeline: every device item of the region is drawn or merged', async () => {
    const kernels = query(a100, 'kernels');
    const calls = kernels.items.reduce((s, r) => s + r.calls, 0);
    assert(kernels.total_items === kernels.items.length, 'every kernel row queried');
    const lanes = await laneStats(page);
    const inView = lanes.reduce((s, l) => s + l.inView - l.syncs, 0);
    assert(inView === calls, `${inView} items in the lanes, query has ${calls}`);
    for (const l of lanes) {
      assert(l.drawn + l.merged === l.inView, `${l.lane}: drawn ${l.drawn} + merged ${l.merged}`);
      assert(l.pixels <= l.merged && (l.merged === 0) === (l.pixels === 0), `${l.lane} pixels`);
    }
    // Zoomed out, the launch links are too many to draw and the status line says so.
    const links = JSON.parse(await page.getAttribute('#timeline-canvas', 'data-links'));
    assert(links.inView > 300 && links.drawn === 0, `links ${JSON.stringify(links)}`);
    assert((await page.innerText('#timeline-range')).includes('zoom in'), 'asks to zoom in');
    await page.screenshot({ path: join(args.out, 'view-timeline-lanes.png') });
  });

  await run.check(
    'Timeline: zoomed in, launch links are drawn and items still add up',
    async () => {
      const canvas = page.locator('#timeline-canvas');
      for (let i = 0; i < 6; i++)
        await page.click('#view-panel-timeline button:has-text("Zoom in")');
      await settle(page);
      const links = JSON.parse(await canvas.getAttribute('data-links'));
      assert(links.inView > 0 && links.inView <= 300, `links in view ${links.inView}`);
      assert(links.drawn === links.inView, `every launch in view linked: ${JSON.stringify(links)}`);
      const lanes = await laneStats(page);
      for (const l of lanes) assert(l.drawn + l.merged === l.inView, `${l.lane} at zoom`);
      await page.screenshot({ path: join(args.out, 'view-timeline-links.png') });
      await canvas.focus();
      await page.keyboard.press('0'); // fit again
    },
  );

  await run.check('no network request, no console error', async () => {
    assert(log.requests.length === 0, `requests: ${log.requests.join(', ')}`);
    assert(log.errors.length === 0, `errors: ${log.errors.join(' | ')}`);
  });

  await run.check(
    'AlexNet: syncs get lanes of their own kind, kernels match the query',
    async () => {
      const { page: p, log: l } = await openViewer(context, view(alexnet, 'overview_alexnet.html'));
      await show(p, 'timeline');
      const lanes = await laneStats(p);
      // The fixture read with zlib: its cuda_sync events, all inside this trace's one region
      // (it has no ProfilerStep, so the whole window is measured).
      const events = JSON.parse(gunzipSync(readFileSync(alexnet))).traceEvents;
      const syncs = events.filter((e) => e.cat === 'cuda_sync').length;
      assert(syncs > 0, 'the fixture has syncs');
      assert(lanes.reduce((s, x) => s + x.syncs, 0) === syncs, `syncs ${JSON.stringify(lanes)}`);
      const calls = query(alexnet, 'kernels').items.reduce((s, r) => s + r.calls, 0);
      assert(lanes.reduce((s, x) => s + x.inView - x.syncs, 0) === calls, 'work items');
      // Every stream the query lists has its lane; a stream with only waits has one too.
      const want = query(alexnet, 'gpu').devices.flatMap((d) =>
        d.streams.map((s) => laneName(d.device, s.stream)),
      );
      const names = lanes.map((x) => x.lane);
      assert(
        want.every((w) => names.includes(w)),
        `lanes ${names}, query ${want}`,
      );
      for (const x of lanes.filter((x) => !want.includes(x.lane)))
        assert(x.syncs === x.inView, `${x.lane} holds only waits`);
      // The fixture's work on Kineto's stream -1 (a context sync) is on a device-wide lane.
      assert(
        events.some((e) => e.args?.stream === 4294967295),
        'the fixture has stream -1',
      );
      assert(
        names.some((n) => n.endsWith(' device-wide')),
        `a device-wide lane: ${names}`,
      );
      assert(!names.some((n) => n.includes('4294967295')), `no raw -1 stream: ${names}`);
      assert(l.errors.length === 0, `errors: ${l.errors.join(' | ')}`);
      await p.close();
    },
  );

  await run.check('a trace/6 without device work: no Overview, no lanes', async () => {
    const { page: p } = await openViewer(context, view(synthTrace, 'overview_synth.html'));
    const tabs = await p.locator('#view-tabs [role="tab"]').allInnerTexts();
    assert(!tabs.includes('Overview'), `no Overview tab: ${tabs}`);
    assert(
      (await p.getAttribute('#view-tab-evidence', 'aria-selected')) === 'true',
      'opens on Evidence',
    );
    await show(p, 'timeline');
    assert((await laneStats(p)).length === 0, 'no lanes');
    assert(!(await p.innerText('#view-panel-timeline')).includes('stream'), 'no lane text');
    await p.close();
  });

  await run.check(
    'a hostile kernel name and GPU model stay text, on the lane, its tooltip and the heading',
    async () => {
      const { page: p, log: l } = await openViewer(
        context,
        view(hostileTrace, 'overview_hostile.html'),
      );
      // tests/fixtures/device_work.jsonl by hand: the step is [0, 10) ms; on cuda:0 stream 7 the
      // kernel runs [2.2, 3.2) ms and the memcpy [6, 6.5) ms. Busy 1.5 ms (compute 1, memory 0.5),
      // window [2.2, 6.5) = 4.3 ms, so 2.8 ms idle; the memcpy has no launch call and its 2.8 ms
      // gap is over 30 µs: other. Host only = 10 − 4.3 = 5.7 ms.
      assert(
        same(await shownParts(p, 0), {
          compute_ns: 1e6,
          communication_exposed_ns: 0,
          memory_exposed_ns: 5e5,
          idle_host_wait_ns: 0,
          idle_kernel_wait_ns: 0,
          idle_other_ns: 2.8e6,
          host_only_ns: 5.7e6,
          busy: 1.5e6,
          window: 4.3e6,
          total: 1e7,
        }),
        JSON.stringify(await shownParts(p, 0)),
      );
      // The model from the trace's tag is text in the heading, not markup.
      const heading = await deviceHeading(p, 0);
      assert(heading === `cuda:0 (${HOSTILE_MODEL})`, `heading "${heading}"`);
      await show(p, 'timeline');
      const lanes = await laneStats(p);
      assert(
        same(
          lanes.map((x) => x.lane),
          ['cuda:0 stream 7'],
        ),
        `lanes ${lanes.map((x) => x.lane)}`,
      );
      // Hover the kernel: its x from the range line's 0 – 10 ms fitted view of the canvas width.
      const box = await p.locator('#timeline-canvas').boundingBox();
      const rows = await p.evaluate(() => document.getElementById('timeline-canvas').height);
      assert(rows > 0, 'canvas drawn');
      const laneY = box.height - 4 - 20 / 2; // the only lane's bar: the last ROW of the canvas
      await p.mouse.move(box.x + box.width * (2.7 / 10), box.y + laneY);
      const tip = await p.locator('#view-panel-timeline .chart-tip').innerText();
      assert(tip.startsWith(`${HOSTILE_KERNEL} (kernel) · cuda:0 stream 7`), `tip "${tip}"`);
      assert(tip.includes('launched by cudaLaunchKernel'), `launch in "${tip}"`);
      // A click on the kernel inspects the runtime call that launched it.
      await p.mouse.click(box.x + box.width * (2.7 / 10), box.y + laneY);
      await settle(p);
      assert(
        (await p.innerText('#insp-label')) === 'cudaLaunchKernel',
        'inspector shows the launch',
      );
      assert((await p.locator('img').count()) === 0, 'no <img> element');
      assert(l.dialogs.length === 0, `alert ran: ${l.dialogs}`);
      assert(l.errors.length === 0, `errors: ${l.errors.join(' | ')}`);
      await p.close();
    },
  );
});
run.finish();
