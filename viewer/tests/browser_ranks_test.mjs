// Browser test of `candle-graph ranks --html` (docs/ranks.md): the page of the 8-rank DLRM run
// shows the numbers of the `-o` JSON written by the same run (read here, never from the page's
// own payload), in the JSON's order; hostile kernel and file names stay text; the page fits
// 1280×800 without horizontal scroll.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
const fixtures = args.fixtures;
const run = createRunner();

const dlrm = join(fixtures, 'pytorch-chrome-trace/ranks-param-dlrm-8rank-v100');
const ranks = (inputs, name, extra = []) => {
  const json = join(args.out, `${name}.json`);
  const html = join(args.out, `${name}.html`);
  candleGraph(args.binary, ['ranks', ...inputs, '-j', '2', '-o', json, '--html', html, ...extra]);
  return { doc: JSON.parse(readFileSync(json, 'utf8')), html };
};

// The same run with a hostile collective name (it reaches the collectives table and a finding)
// and a hostile file name (the per-rank table). The rank comes from distributedInfo, so the
// renamed file keeps its rank.
// No parentheses in the kernel name: the collective's name ends at its parameter list.
const HOSTILE_KERNEL = 'ncclKernel_<img src=x onerror=window.cgPwned=7>SendRecv';
const HOSTILE_FILE = '<img src=x onerror=alert(8)>.json';
// That rank's GPU model too (every deviceProperties name of its file): a second model, so the
// per-rank table names each rank's model.
const DLRM_MODEL = 'Tesla V100-SXM2-32GB';
const HOSTILE_MODEL = '<b id=cgModel>GPU</b>';
const hostileDir = join(args.out, 'ranks_hostile');
rmSync(hostileDir, { recursive: true, force: true });
mkdirSync(hostileDir, { recursive: true });
readdirSync(dlrm)
  .sort()
  .forEach((f, i) => {
    let text = readFileSync(join(dlrm, f), 'utf8').replaceAll(
      'ncclKernel_SendRecv',
      HOSTILE_KERNEL,
    );
    if (i === 3) text = text.replaceAll(DLRM_MODEL, HOSTILE_MODEL);
    writeFileSync(join(hostileDir, i === 3 ? HOSTILE_FILE : f), text);
  });

// Every numeric cell of a table row, by column index: the exact ns of data-value.
const rowsOf = (page, id) =>
  page.$$eval(`#${id} tbody tr`, (trs) =>
    trs.map((tr) => ({
      rank: tr.dataset.rank === undefined ? null : Number(tr.dataset.rank),
      text: [...tr.children].map((c) => c.textContent),
      file: tr.querySelector('td.file')?.dataset.file,
      values: [...tr.children].map((c) =>
        c.dataset.value === undefined ? null : Number(c.dataset.value),
      ),
    })),
  );
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

await withBrowser(async (context) => {
  const { doc, html } = ranks([dlrm], 'ranks_dlrm');
  const { page, log } = await openViewer(context, html);
  await page.setViewportSize({ width: 1280, height: 800 });

  await run.check(
    'the page is the Ranks view, alone, and loads offline without errors',
    async () => {
      const tabs = await page.locator('#view-tabs [role="tab"]').allInnerTexts();
      assert(same(tabs, ['Ranks']), `tabs ${tabs}`);
      assert(await page.isVisible('#view-panel-ranks'), 'Ranks panel shown');
      assert(!(await page.isVisible('#view-panel-evidence')), 'evidence panel hidden');
      assert(log.requests.length === 0, `requests: ${log.requests}`);
      assert(log.errors.length === 0, `errors: ${log.errors.join(' | ')}`);
      assert(doc.ranks.length === 8, `the fixture has 8 ranks, JSON ${doc.ranks.length}`);
    },
  );

  await run.check('static HTML: the viewer shell, its CSP, the JSON embedded', async () => {
    const text = readFileSync(html, 'utf8');
    assert(text.includes('data-viewer="candle-graph-evidence"'), 'the viewer shell');
    assert(
      /Content-Security-Policy" content="default-src 'none'[^"]*connect-src 'none'/.test(text),
      'CSP forbids connections',
    );
    assert(!text.includes('https://') && !/<script[^>]*\ssrc=/i.test(text), 'offline');
    assert(text.includes('"schema":"candle-graph/ranks/1"'), 'the ranks document is the payload');
  });

  await run.check('per-rank GPU time equals the -o JSON, rank by rank', async () => {
    const rows = await rowsOf(page, 'ranks-time');
    const caption = await page.innerText('#ranks-time caption');
    assert(caption.endsWith(`; every rank on ${doc.ranks[0].gpu_model}`), `caption ${caption}`);
    assert(
      same(
        rows.map((r) => r.rank),
        doc.ranks.map((r) => r.rank),
      ),
      `ranks ${rows.map((r) => r.rank)}`,
    );
    doc.ranks.forEach((r, i) => {
      const v = rows[i].values;
      const want = [
        null,
        null,
        null,
        r.compute_ns,
        r.exposed_communication_ns,
        r.busy_ns - r.compute_ns - r.exposed_communication_ns,
        r.idle_ns,
        r.busy_ns,
        r.communication_ns,
        r.communication_ns - r.exposed_communication_ns,
      ];
      assert(same(v, want), `rank ${r.rank}: page ${v}, JSON ${want}`);
      assert(rows[i].file === r.file, `rank ${r.rank} file ${rows[i].file}`);
      assert(r.file.endsWith(`/${rows[i].text[1]}`), `rank ${r.rank} shows ${rows[i].text[1]}`);
      // The JSON's device; its model, the same for every rank here, is in the caption.
      assert(
        r.device && r.gpu_model === doc.ranks[0].gpu_model && rows[i].text[2] === r.device,
        `rank ${r.rank} GPU ${rows[i].text[2]}`,
      );
    });
  });

  await run.check(
    'each bar stacks compute, exposed communication, memory alone and idle',
    async () => {
      // Cards are content-visibility: auto; a card off screen has no layout to measure.
      await page.locator('#ranks-bars').scrollIntoViewIfNeeded();
      const bars = await page.$$eval('#ranks-bars .rank-bar', (divs) =>
        divs.map((d) => ({
          rank: Number(d.dataset.rank),
          parts: [...d.querySelectorAll('.stack-part')].map((s) => [
            s.dataset.part,
            s.getBoundingClientRect().width,
          ]),
          width: d.querySelector('.stack').clientWidth,
        })),
      );
      const widest = Math.max(...doc.ranks.map((r) => r.busy_ns + r.idle_ns));
      doc.ranks.forEach((r, i) => {
        const b = bars[i];
        assert(b.rank === r.rank, `bar ${i} is rank ${b.rank}`);
        const want = {
          compute: r.compute_ns,
          exposed: r.exposed_communication_ns,
          memory: r.busy_ns - r.compute_ns - r.exposed_communication_ns,
          idle: r.idle_ns,
        };
        for (const [part, px] of b.parts) {
          const expected = (b.width * want[part]) / widest;
          assert(
            Math.abs(px - expected) <= 1.5,
            `rank ${r.rank} ${part}: ${px}px, want ${expected}`,
          );
        }
        const shown = b.parts.map((p) => p[0]);
        const nonzero = Object.keys(want).filter((k) => want[k] > 0);
        assert(same(shown, nonzero), `rank ${r.rank} parts ${shown}, want ${nonzero}`);
      });
      const note = await page.innerText('#ranks-definition');
      assert(note.includes('busy = compute + exposed communication + memory'), 'identity stated');
      assert(note.includes('hidden communication = communication − exposed'), 'hidden stated');
    },
  );

  await run.check('the heat map holds every rank × step wall time of the JSON', async () => {
    const cells = await page.$$eval('#ranks-heatmap tbody td', (tds) =>
      tds.map((td) => ({
        rank: Number(td.parentElement.dataset.rank),
        step: Number(td.dataset.step),
        value: td.dataset.value === undefined ? null : Number(td.dataset.value),
        bg: td.style.background,
      })),
    );
    const want = doc.ranks.flatMap((r) =>
      r.steps.map((s) => ({ rank: r.rank, step: s.step, value: s.wall_ns })),
    );
    const got = cells.filter((c) => c.value !== null);
    assert(got.length === want.length && want.length > 0, `${got.length} cells, ${want.length}`);
    for (const w of want)
      assert(
        got.some((c) => c.rank === w.rank && c.step === w.step && c.value === w.value && c.bg),
        `rank ${w.rank} step ${w.step} ${w.value} missing or uncoloured`,
      );
  });

  await run.check(
    'stragglers, collectives and clocks: the JSON rows in the JSON order',
    async () => {
      assert(doc.stragglers.length > 0, 'the fixture has a straggler');
      const s = await rowsOf(page, 'ranks-stragglers');
      const sWant = doc.stragglers.map((x) => [x.rank, x.times_last, x.imposed_wait_ns]);
      const sGot = s.map((r) => [Number(r.text[0]), r.values[1], r.values[2]]);
      assert(same(sGot, sWant), `stragglers ${JSON.stringify(sGot)} vs ${JSON.stringify(sWant)}`);
      const c = await rowsOf(page, 'ranks-collectives');
      const cWant = doc.collectives.map((x) => [
        x.name,
        x.process_group || '–',
        x.count,
        x.mean_skew_ns,
        x.max_skew_ns,
      ]);
      const cGot = c.map((r) => [r.text[0], r.text[1], r.values[2], r.values[3], r.values[4]]);
      assert(same(cGot, cWant), `collectives ${JSON.stringify(cGot)}`);
      const k = await rowsOf(page, 'ranks-clock');
      const kWant = doc.clock.map((x) => [x.rank, x.offset_ns, x.residual_ns]);
      const kGot = k.map((r) => [r.rank, r.values[1], r.values[2]]);
      assert(same(kGot, kWant), `clock ${JSON.stringify(kGot)}`);
    },
  );

  await run.check('findings and health are the JSON’s', async () => {
    const f = await page.locator('#ranks-findings li').allTextContents();
    assert(doc.findings.length > 0 && same(f, doc.findings), `findings ${f.length}`);
    const h = await page.locator('#ranks-health li').allTextContents();
    if (doc.health.length)
      assert(
        same(
          h,
          doc.health.map((x) => `${x.code} ${x.message}`),
        ),
        `health ${h}`,
      );
    else assert((await page.locator('#ranks-health.empty').count()) === 1, 'no health: a note');
  });

  await run.check('1280×800: no horizontal scroll of the page', async () => {
    const over = await page.evaluate(() => [
      document.documentElement.scrollWidth - document.documentElement.clientWidth,
      document.getElementById('main').scrollWidth - document.getElementById('main').clientWidth,
    ]);
    assert(over[0] <= 0 && over[1] <= 0, `overflow ${over}`);
    // Nor of a table inside its card (one step: the heat map is narrow too).
    const wraps = await page.$$eval('#view-panel-ranks .table-wrap', (ws) =>
      ws.map((w) => w.scrollWidth - w.clientWidth),
    );
    assert(wraps.length >= 5 && wraps.every((x) => x <= 0), `tables scrolling sideways: ${wraps}`);
  });
  await page.close();

  await run.check('a rank’s own page opens on demand at its Timeline', async () => {
    // Only rank 5's page is asked for: only its row links, to the page the JSON names, and
    // following the link opens that rank's viewer at the Timeline view.
    const pagesDir = join(args.out, 'ranks_pages_dir');
    rmSync(pagesDir, { recursive: true, force: true });
    const withPages = ranks([dlrm], 'ranks_pages', [
      '--rank-pages',
      pagesDir,
      '--rank-pages-for',
      '5',
    ]);
    assert(
      same(
        withPages.doc.rank_pages.map((x) => [x.rank, x.href]),
        [[5, 'ranks_pages_dir/rank-5.html']],
      ),
      `rank_pages ${JSON.stringify(withPages.doc.rank_pages)}`,
    );
    const { page: p, log: l } = await openViewer(context, withPages.html);
    const links = await p.$$eval('#ranks-time a[data-rank-page]', (as) =>
      as.map((a) => [Number(a.dataset.rankPage), a.getAttribute('href')]),
    );
    assert(same(links, [[5, 'ranks_pages_dir/rank-5.html#timeline']]), `links ${links}`);
    await Promise.all([p.waitForNavigation(), p.click('#ranks-time a[data-rank-page]')]);
    await p.waitForSelector('html[data-ready="true"]', { timeout: 60000 });
    const selected = await p.getAttribute('#view-tab-timeline', 'aria-selected');
    assert(selected === 'true', `Timeline tab selected: ${selected}`);
    assert(await p.isVisible('#view-panel-timeline'), 'Timeline panel shown');
    const status = await p.innerText('#status-line');
    assert(status.includes('worker5'), `the page is rank 5's trace: ${status}`);
    assert(l.errors.length === 0, `errors: ${l.errors.join(' | ')}`);
    await p.close();
  });

  await run.check('a hostile kernel name and file name stay text', async () => {
    const hostile = ranks([hostileDir], 'ranks_hostile');
    const { page: p, log: l } = await openViewer(context, hostile.html);
    await p.setViewportSize({ width: 1280, height: 800 });
    const findings = await p.locator('#ranks-findings li').allTextContents();
    assert(
      findings.some((t) => t.includes(HOSTILE_KERNEL)),
      `finding with the kernel name: ${findings}`,
    );
    const names = (await rowsOf(p, 'ranks-collectives')).map((r) => r.text[0]);
    assert(
      names.some((n) => n.includes(HOSTILE_KERNEL)),
      `collective names ${names}`,
    );
    const files = (await rowsOf(p, 'ranks-time')).map((r) => r.text[1]);
    assert(
      files.some((n) => n === HOSTILE_FILE),
      `file names ${files}`,
    );
    // Two models: each rank's GPU cell names its own, as the JSON has it.
    const gpus = (await rowsOf(p, 'ranks-time')).map((r) => r.text[2]);
    const want = hostile.doc.ranks.map((r) => `${r.device} (${r.gpu_model})`);
    assert(same(gpus, want), `GPU cells ${gpus}, JSON ${want}`);
    assert(
      hostile.doc.ranks.filter((r) => r.gpu_model === HOSTILE_MODEL).length === 1,
      'one rank on the second model',
    );
    assert((await p.locator('#cgModel').count()) === 0, 'no element from the model name');
    assert((await p.locator('img').count()) === 0, 'no <img> element');
    await p.evaluate(() => new Promise((done) => setTimeout(done, 200)));
    assert(l.dialogs.length === 0, `alert ran: ${l.dialogs}`);
    assert((await p.evaluate(() => window.cgPwned)) === undefined, 'onerror ran');
    assert(l.errors.length === 0, `errors: ${l.errors.join(' | ')}`);
    const over = await p.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    assert(over <= 0, `overflow ${over}`);
    await p.close();
  });

  await run.check('a rank whose trace is untrusted is marked, with the reason', async () => {
    // Ranks 0 and 1 concatenated into one file (two processes: health says processes_merged),
    // beside ranks 2..7 as they are.
    const dir = join(args.out, 'ranks_untrusted');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const files = readdirSync(dlrm).sort();
    const [a, b] = files.slice(0, 2).map((f) => JSON.parse(readFileSync(join(dlrm, f), 'utf8')));
    a.traceEvents.push(...b.traceEvents);
    writeFileSync(join(dir, files[0]), JSON.stringify(a));
    for (const f of files.slice(2)) writeFileSync(join(dir, f), readFileSync(join(dlrm, f)));
    const { doc, html } = ranks([dir], 'ranks_untrusted');
    const want = doc.ranks
      .filter((r) => r.untrusted)
      .map((r) => [r.rank, `untrusted: ${r.untrusted}`]);
    assert(
      same(
        want.map((w) => w[0]),
        [0],
      ),
      `the JSON's untrusted ranks ${JSON.stringify(want)}`,
    );
    const { page: p, log: l } = await openViewer(context, html);
    const marked = await p.$$eval('#ranks-time th[data-untrusted]', (ths) =>
      ths.map((th) => [Number(th.parentElement.dataset.rank), th.title]),
    );
    assert(same(marked, want), `marked ${JSON.stringify(marked)}`);
    const health = await p.locator('#ranks-health li').allTextContents();
    assert(
      health.some((t) => t.includes('rank_untrusted') && t.includes('processes_merged')),
      `health ${health}`,
    );
    assert(l.errors.length === 0, `errors: ${l.errors.join(' | ')}`);
    await p.close();
  });

  await run.check('a last step cut short is shown uncoloured, out of the scale', async () => {
    // The MI250 trace's second step is the 49 µs the profiler ran after its last step began;
    // two copies of it make a run of two ranks (the rank from the file name).
    const dir = join(args.out, 'ranks_cut_short');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const mi250 = join(fixtures, 'pytorch-chrome-trace/hta-minitoy-train-mi250-rocm6.2.json');
    for (const r of [0, 1]) writeFileSync(join(dir, `rank-${r}.json`), readFileSync(mi250));
    const { doc, html } = ranks([dir], 'ranks_cut_short');
    const cut = doc.ranks.flatMap((r) =>
      r.steps.filter((s) => s.cut_short).map((s) => [r.rank, s.step, s.wall_ns]),
    );
    assert(cut.length === 2, `the JSON's cut-short steps ${JSON.stringify(cut)}`);
    const { page: p, log: l } = await openViewer(context, html);
    const cells = await p.$$eval('#ranks-heatmap tbody td[data-cut-short]', (tds) =>
      tds.map((td) => [
        Number(td.parentElement.dataset.rank),
        Number(td.dataset.step),
        Number(td.dataset.value),
        td.style.background,
      ]),
    );
    assert(
      same(
        cells,
        cut.map((c) => [...c, '']),
      ),
      `cells ${JSON.stringify(cells)}`,
    );
    const legend = await p.innerText('#ranks-heatmap-legend');
    assert(legend.includes('cut short'), `legend ${legend}`);
    assert(l.errors.length === 0, `errors: ${l.errors.join(' | ')}`);
    await p.close();
  });
});
run.finish();
