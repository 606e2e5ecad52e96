// node viewer/screenshot.mjs VIEWER.html OUT.png [--width W --height H --theme light|dark]
//                            [--views evidence,timeline]
// One PNG of a viewer file's views (by default Evidence and Timeline), one above the other, taken by headless
// Debian chromium through playwright-core with the flags the browser tests use (harness.mjs).
// `./run demo` writes out/demo/viewer.png with it.
import { existsSync, renameSync } from 'node:fs';
import { openViewer, withBrowser } from './tests/harness.mjs';

function parse(argv) {
  const opts = {
    width: 1400,
    height: 900,
    theme: 'light',
    views: ['evidence', 'timeline'],
    files: [],
  };
  for (let i = 2; i < argv.length; i++) {
    if (argv[i] === '--width') opts.width = Number(argv[++i]);
    else if (argv[i] === '--height') opts.height = Number(argv[++i]);
    else if (argv[i] === '--theme') opts.theme = argv[++i];
    else if (argv[i] === '--views') opts.views = String(argv[++i]).split(',');
    else opts.files.push(argv[i]);
  }
  if (
    opts.files.length !== 2 ||
    !existsSync(opts.files[0]) ||
    !['light', 'dark'].includes(opts.theme) ||
    !(opts.width > 0 && opts.height > 0)
  ) {
    console.error(
      'usage: node viewer/screenshot.mjs VIEWER.html OUT.png [--width W] [--height H] [--theme light|dark] [--views a,b]',
    );
    process.exit(2);
  }
  return opts;
}

const opts = parse(process.argv);
const [html, png] = opts.files;
await withBrowser(async (context) => {
  const { page, log } = await openViewer(context, html);
  if (log.errors.length) throw new Error(`the viewer reported errors: ${log.errors.join('; ')}`);
  await page.setViewportSize({ width: opts.width, height: opts.height });
  const theme = await page.evaluate(() => document.documentElement.dataset.theme);
  if (theme !== opts.theme) await page.click('#theme-toggle');
  const settle = () =>
    page.evaluate(
      () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))),
    );
  const shots = [];
  for (const view of opts.views) {
    await page.click(`#view-tab-${view}`);
    await page.waitForSelector(`#view-panel-${view}:not([hidden])`);
    await settle();
    shots.push((await page.screenshot({ type: 'png' })).toString('base64'));
  }
  // Both shots on one page, stacked, captured as one image (no image library needed).
  const sheet = await context.newPage();
  await sheet.setViewportSize({ width: opts.width, height: opts.height * shots.length });
  await sheet.setContent(
    `<body style="margin:0">${shots.map((s) => `<img style="display:block" src="data:image/png;base64,${s}">`).join('')}</body>`,
  );
  await sheet.evaluate(() => Promise.all([...document.images].map((i) => i.decode())));
  const tmp = `${png}.tmp-${process.pid}.png`;
  await sheet.screenshot({ path: tmp, fullPage: true, type: 'png' });
  renameSync(tmp, png); // atomic: never a half-written picture
});
console.log(`  screenshot ${png}`);
