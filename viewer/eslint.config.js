// ESLint flat config for the viewer (`npm run lint`, CTest viewer_lint). Layout is Prettier's job
// (.prettierrc.json); ESLint runs the @eslint/js recommended rules, which catch likely bugs.
import js from '@eslint/js';
import globals from 'globals';

export default [
  { ignores: ['dist/', 'node_modules/'] },
  js.configs.recommended,
  {
    // The front end: bundled by esbuild and run in the page.
    files: ['src/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    // Node scripts: the build, the screenshot tool, the browser tests and their harness.
    files: ['*.js', '*.mjs', 'tests/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    // These also hand functions to playwright's page.evaluate / waitForFunction, which run in
    // the page, so their bodies use browser globals (document, window, requestAnimationFrame).
    files: ['screenshot.mjs', 'tests/*_test.mjs'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
];
