// Shared by the browser tests: argument parsing, generating viewer HTML with the real
// candle-graph binary, and a Debian chromium driven by playwright-core with the launch flags of
// DEVELOPERS.md (no network, no sandbox in containers, fresh profile per run).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Installed by `npm ci` in viewer/ (./run test runs it); without it, say so instead of dying on
// a bare ERR_MODULE_NOT_FOUND.
const { chromium } = await import('playwright-core').catch((error) => {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
  console.error(
    'browser tests: playwright-core is not installed: run `npm ci` in viewer/ ' +
      '(./run test does), then build again so that the viewer is bundled',
  );
  process.exit(1);
});

// --binary (required), --out (artifacts) and --fixtures (../shared/fixtures, for the tests on
// real traces; beside the repository by default).
export function parseArgs(argv) {
  const args = {
    binary: null,
    out: join(tmpdir(), 'cg-viewer-artifacts'),
    fixtures: join(dirname(fileURLToPath(import.meta.url)), '../../../shared/fixtures'),
  };
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--binary') args.binary = argv[++i];
    else if (argv[i] === '--out') args.out = argv[++i];
    else if (argv[i] === '--fixtures') args.fixtures = argv[++i];
  }
  if (!args.binary || !existsSync(args.binary))
    throw new Error('usage: --binary path/to/candle-graph [--out DIR] [--fixtures DIR]');
  mkdirSync(args.out, { recursive: true });
  return args;
}

// `candle-graph query TRACE --kind KIND` with no row limit: its `result` object.
export function queryResult(binary, trace, kind) {
  return JSON.parse(candleGraph(binary, ['query', trace, '--kind', kind, '--limit', '100000']))
    .result;
}

export function candleGraph(binary, args) {
  return execFileSync(binary, args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 1 << 26,
  });
}

export const CHROMIUM = process.env.CG_CHROMIUM || '/usr/bin/chromium';
export const LAUNCH_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function withBrowser(fn) {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} not found: apt-get install chromium (./run does it)`);
  const profile = mkdtempSync(join(tmpdir(), 'cg-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: LAUNCH_FLAGS,
    viewport: { width: 1400, height: 900 },
  });
  try {
    return await fn(context);
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  }
}

/**
 * Opens a file and records every request other than the file itself, console errors, page errors
 * and dialogs (an alert that a hostile string ran as script), each dismissed.
 */
export async function openViewer(context, file) {
  const page = await context.newPage();
  const url = pathToFileURL(file).href;
  const log = { requests: [], errors: [], dialogs: [] };
  page.on('dialog', (d) => {
    log.dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  page.on('request', (r) => {
    if (r.url() !== url) log.requests.push(r.url());
  });
  page.on('console', (m) => {
    if (m.type() === 'error') log.errors.push(m.text());
  });
  page.on('pageerror', (e) => log.errors.push(String(e)));
  const started = Date.now();
  await page.goto(url);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 60000 });
  log.readyMs = Date.now() - started;
  return { page, log };
}

/** A tiny runner: named checks, failures collected, closing line `N passed, N failed`. */
export function createRunner() {
  let passed = 0;
  const failures = [];
  return {
    async check(name, fn) {
      try {
        await fn();
        passed++;
        console.log(`ok   ${name}`);
      } catch (error) {
        failures.push(name);
        console.log(
          `FAIL ${name}\n     ${String((error && error.stack) || error)
            .split('\n')
            .slice(0, 4)
            .join('\n     ')}`,
        );
      }
    },
    finish() {
      console.log(`viewer: ${passed} passed, ${failures.length} failed`);
      process.exitCode = failures.length ? 1 : 0;
    },
  };
}

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}
