// ESLint (flat config): typescript-eslint's recommended rules, type-aware promise checks, and the rule Temporal's
// TypeScript samples give workflow code. Formatting belongs to Prettier (`.prettierrc.json`); eslint-config-prettier
// turns off the rules that would fight it. `npm run lint` runs this; `npm test` runs it before the typecheck.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import stylistic from '@stylistic/eslint-plugin';
import prettier from 'eslint-config-prettier/flat';
import { defineConfig, globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

// Workflow code runs in Temporal's deterministic sandbox, which has no Node built-ins (the bundler fails late, at
// worker start); Temporal's samples forbid them with `no-restricted-imports`, allowing only `assert`.
const ALLOWED_IN_WORKFLOWS = new Set(['assert']);
const nodeBuiltins = builtinModules
  .filter((m) => !m.startsWith('_') && !ALLOWED_IN_WORKFLOWS.has(m))
  .flatMap((m) => (m.startsWith('node:') ? [m] : [m, `node:${m}`]));
// `node:`-only modules (node:test, node:sqlite, …) are absent from Node 20's builtinModules.
const nodeSchemeOnly = ['node:test', 'node:test/reporters', 'node:sqlite', 'node:sea'];
const forbiddenInWorkflows = [...new Set([...nodeBuiltins, ...nodeSchemeOnly])];

export default defineConfig([
  globalIgnores(['node_modules/', '.cache/', 'runs/', 'dist/', 'coverage/', '.scratch/', '.services/']),
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // A promise nobody awaits loses its error (an unhandled rejection kills the process) and its ordering.
      // node:test's test()/describe() return promises the runner itself awaits (typescript-eslint documents this case).
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'describe', 'it', 'suite'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // `let { a, b } = …` where only some are reassigned stays one statement.
      'prefer-const': ['error', { destructuring: 'all' }],
    },
  },
  {
    // Tests match ANSI escapes and NUL bytes in terminal output on purpose.
    files: ['test/**/*.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['src/report/client/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
  {
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: forbiddenInWorkflows.map((name) => ({
            name,
            message: 'workflow code runs in a deterministic sandbox without Node built-ins; do the I/O in an activity',
          })),
        },
      ],
    },
  },
  prettier,
  // Prettier wraps code at 120 columns; this catches what it cannot wrap (long strings, comments, template literals).
  // Not a test's opening line: Prettier keeps `test('title', async () => {` whole whatever its length, and a title
  // split into pieces can no longer be found with grep from the runner's report.
  {
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': [
        'error',
        { code: 120, ignoreUrls: true, ignorePattern: String.raw`^\s*(test|it|describe|suite)\((['"\x60]).*\2, ` },
      ],
    },
  },
]);
