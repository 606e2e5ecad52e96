// Bundles the viewer into dist/viewer.js + dist/viewer.css (+ dist/shell.html). CMake embeds these
// three files into the candle-graph binary; nothing is loaded at run time.
import { build } from 'esbuild';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// Output directory: argv[2] (CMake passes one inside its build tree), else viewer/dist.
const dist = process.argv[2] || join(here, 'dist');
await mkdir(dist, { recursive: true });
const common = {
  bundle: true,
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
  target: ['chrome110', 'firefox110', 'safari16'],
};
await build({
  ...common,
  entryPoints: [join(here, 'src/main.js')],
  outfile: join(dist, 'viewer.js'),
  format: 'iife',
});
await build({
  ...common,
  entryPoints: [join(here, 'src/style.css')],
  outfile: join(dist, 'viewer.css'),
});
await copyFile(join(here, 'src/shell.html'), join(dist, 'shell.html'));
// The bundle is inlined into a <script> element: it must never contain a closing tag or a URL.
const js = await readFile(join(dist, 'viewer.js'), 'utf8');
for (const bad of [/<\/script/i, /https:\/\//, /<!--/]) {
  if (bad.test(js))
    throw new Error(`dist/viewer.js contains ${bad}, which cannot be inlined safely`);
}
