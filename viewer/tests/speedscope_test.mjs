// A third-party reader loads `candle-graph export --format chrome` output:
// the npm `speedscope` app (its own dist/release build, pinned in package.json) served on
// 127.0.0.1 with the exported file, opened in Debian chromium with `#profileURL=`. speedscope
// rebuilds a call stack per thread from the X events and logs every misnested event on the
// console ("Tried to end … when … was on the top of the stack").
//
// Checks:
// - a real Kineto trace from ../shared/fixtures does produce such lines (so the check can fail);
// - our exports (a synth trace, and a hand-written trace with overlapping siblings and a child
//   outside its parent) produce none, and the Sandwich table lists exactly the span and op names
//   of the trace, as many times as the trace has them. Expected names are read from the trace
//   JSONL here with JSON.parse, independently of the exporter;
// - when `candle-graph convert` is available, the export of a converted Kineto trace loads with
//   no such line either.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { candleGraph, createRunner, parseArgs, withBrowser } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = parseArgs(process.argv);
const run = createRunner();
const DIST = join(here, '..', 'node_modules', 'speedscope', 'dist', 'release');
const KINETO = join(here, '..', '..', '..', 'shared', 'fixtures', 'pytorch-chrome-trace');
const fixturesArg = process.argv.indexOf('--fixtures');
const kinetoFixture = join(
  fixturesArg > 0 ? join(process.argv[fixturesArg + 1], 'pytorch-chrome-trace') : KINETO,
  'hta-simple_add-a100.json',
);

function assert(cond, message) {
  if (!cond) throw new Error(message);
}
if (!existsSync(join(DIST, 'index.html')))
  throw new Error(
    `${DIST}/index.html is missing: run npm ci in viewer/ (./run does it; speedscope is pinned in package.json)`,
  );

// A static server for speedscope's files and the profiles under test; nothing else is reachable.
const profiles = new Map(); // URL path -> file
const TYPES = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
};
const server = createServer((req, res) => {
  const path = new URL(req.url, 'http://127.0.0.1').pathname;
  const file = profiles.get(path) ?? join(DIST, normalize(path).replace(/^(\.\.[/\\])+/, ''));
  if ((!file.startsWith(DIST) && !profiles.has(path)) || !existsSync(file)) {
    res.writeHead(404);
    res.end();
    return;
  }
  res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
  res.end(readFileSync(file));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

/** Opens `file` in speedscope; returns the console lines and the frames of the Sandwich view. */
async function openInSpeedscope(context, name, file) {
  profiles.set(`/profiles/${name}`, file);
  const page = await context.newPage();
  await page.setViewportSize({ width: 1000, height: 900 }); // the Sandwich rows of these small traces all fit
  const consoleLines = [];
  page.on('console', (m) => consoleLines.push(m.text()));
  page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e}`));
  await page.goto(
    `${origin}/index.html#profileURL=${encodeURIComponent(`${origin}/profiles/${name}`)}`,
  );
  // speedscope logs `import: … ms` (console.timeEnd) when the import finished, or fails loudly.
  const deadline = Date.now() + 60000;
  while (
    !consoleLines.some((l) => /^import: /.test(l) || /pageerror|Error/.test(l)) &&
    Date.now() < deadline
  )
    await page.waitForTimeout(100);
  const imported = consoleLines.some((l) => /^import: /.test(l));
  let frames = [];
  if (imported) {
    await page.getByText('Sandwich').click();
    await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), null, {
      timeout: 20000,
    });
    const text = await page.evaluate(() => document.body.innerText);
    // Each of our frames is shown as `NAME {"span_id":…}` (speedscope appends the args).
    frames = [...text.matchAll(/^\t?(.*?) \{"span_id":"/gm)].map((m) => m[1]);
  }
  const header = await page.evaluate(() =>
    document.body.innerText.split('\n').slice(0, 3).join(' | '),
  );
  await page.close();
  return {
    consoleLines,
    frames,
    imported,
    header,
    misnest: consoleLines.filter((l) => l.includes('Tried to end')),
  };
}

function countBy(list) {
  const m = new Map();
  for (const x of list) m.set(x, (m.get(x) ?? 0) + 1);
  return [...m.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** Span and op names of a trace/6 JSONL file (all of them, or those on the main track's spans). */
function traceNames(path) {
  const names = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const e = JSON.parse(line);
    if (e.kind === 'span_start') names.push(e.name);
    if (e.kind === 'op') names.push(e.op_name);
  }
  return names;
}

const synthTrace = join(args.out, 'speedscope-synth.jsonl');
const synthChrome = join(args.out, 'speedscope-synth.chrome.json');
candleGraph(args.binary, [
  'synth',
  '--layers',
  '2',
  '--ops-per-span',
  '2',
  '--seed',
  '5',
  '-o',
  synthTrace,
]);
candleGraph(args.binary, ['export', synthTrace, '--format', 'chrome', '-o', synthChrome]);

// Overlapping siblings (B starts inside A), an op running past its span's end, hostile names.
const awkwardTrace = join(args.out, 'speedscope-awkward.jsonl');
const awkwardChrome = join(args.out, 'speedscope-awkward.chrome.json');
// Epoch-ns timestamps (1.7e18: sub-µs digits do not survive a double), written as text.
const T = (offset) => (1_700_000_000_000_000_000n + BigInt(offset)).toString();
writeFileSync(
  awkwardTrace,
  [
    '{"kind":"meta","schema":"candle-graph/trace/6","run_id":"awkward","correlation_id":"c","entrypoint":"e","phase":"infer","timestamp":"t","capture_step":0,"warmup_steps":0,"device":"cpu","measured_region_device_synchronized":false,"timing_mode":"host","tags":{}}',
    `{"kind":"span_start","id":"root","name":"root","start_ns":${T(1)},"span_kind":"function","measured":true}`,
    `{"kind":"span_start","id":"a","parent_id":"root","name":"A \\"quoted\\"","start_ns":${T(1000)},"span_kind":"function","measured":false}`,
    `{"kind":"span_start","id":"b","parent_id":"root","name":"B","start_ns":${T(3000)},"span_kind":"function","measured":false}`,
    `{"kind":"op","span_id":"a","op_name":"late_op","inputs":[],"output":"t1","shape":[2],"dtype":"f32","device":"cpu","duration_ns":2000,"timestamp_ns":${T(4000)}}`,
    `{"kind":"op","span_id":"b","op_name":"consumer","inputs":["t1"],"output":"t2","shape":[2],"dtype":"f32","device":"cpu","duration_ns":1000,"timestamp_ns":${T(6000)}}`,
    '{"kind":"span_end","id":"a","duration_ns":4000}',
    '{"kind":"span_end","id":"b","duration_ns":5000}',
    '{"kind":"span_end","id":"root","duration_ns":9999}',
    '',
  ].join('\n'),
);
candleGraph(args.binary, ['export', awkwardTrace, '--format', 'chrome', '-o', awkwardChrome]);

await withBrowser(async (context) => {
  await run.check(
    'a real Kineto trace makes speedscope log "Tried to end" (the check can fail)',
    async () => {
      assert(existsSync(kinetoFixture), `Kineto fixture not found: ${kinetoFixture}`);
      const r = await openInSpeedscope(context, 'kineto.json', kinetoFixture);
      assert(
        r.misnest.length > 0,
        `expected misnest lines, console: ${r.consoleLines.slice(0, 8).join(' / ')}`,
      );
      console.log(
        `     kineto fixture: ${r.misnest.length} "Tried to end" line(s), e.g. ${r.misnest[0].slice(0, 160)}`,
      );
    },
  );

  await run.check(
    "synth export: no misnest line, Sandwich frames = the trace's span and op names",
    async () => {
      const r = await openInSpeedscope(context, 'synth.json', synthChrome);
      assert(r.imported, `speedscope did not import: ${r.consoleLines.slice(0, 8).join(' / ')}`);
      assert(r.misnest.length === 0, `misnest lines: ${r.misnest.slice(0, 3).join(' / ')}`);
      assert(r.header.includes('spans and ops (tid 1)'), `profile name: ${r.header}`);
      const want = JSON.stringify(countBy(traceNames(synthTrace)));
      const got = JSON.stringify(countBy(r.frames));
      assert(got === want, `frames\n got  ${got}\n want ${want}`);
    },
  );

  await run.check(
    'overlapping siblings: no misnest line; the main track holds root, A and its clamped op',
    async () => {
      const r = await openInSpeedscope(context, 'awkward.json', awkwardChrome);
      assert(r.imported, `speedscope did not import: ${r.consoleLines.slice(0, 8).join(' / ')}`);
      assert(r.misnest.length === 0, `misnest lines: ${r.misnest.slice(0, 3).join(' / ')}`);
      // B overlaps A, so B and its op are on track 2 (the second profile); speedscope shows tid 1.
      const got = JSON.stringify(countBy(r.frames));
      const want = JSON.stringify(countBy(['root', 'A "quoted"', 'late_op']));
      assert(got === want, `frames\n got  ${got}\n want ${want}`);
    },
  );

  await run.check(
    'the export of a converted Kineto trace loads with no misnest line (when convert exists)',
    async () => {
      const converted = join(args.out, 'speedscope-kineto.jsonl');
      try {
        execFileSync(args.binary, ['convert', kinetoFixture, '-o', converted], { stdio: 'ignore' });
      } catch {
        console.log('     skipped: `candle-graph convert` is not available in this build');
        return;
      }
      const chrome = join(args.out, 'speedscope-kineto.chrome.json');
      candleGraph(args.binary, ['export', converted, '--format', 'chrome', '-o', chrome]);
      const r = await openInSpeedscope(context, 'converted.json', chrome);
      assert(r.imported, `speedscope did not import: ${r.consoleLines.slice(0, 8).join(' / ')}`);
      assert(r.misnest.length === 0, `misnest lines: ${r.misnest.slice(0, 3).join(' / ')}`);
      assert(r.frames.length > 0, 'no frames shown');
    },
  );
});
server.close();
run.finish();
