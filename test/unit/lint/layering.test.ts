import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';

// JavaScript modules outside the TypeScript project, loaded by URL.
const { LAYERS } = (await import(new URL('../../../eslint.config.js', import.meta.url).href)) as { LAYERS: unknown[] };
const layering = (
  (await import(new URL('../../../eslint-rules/layering.js', import.meta.url).href)) as {
    default: ESLint.Plugin;
  }
).default;

const root = new URL('../../../', import.meta.url).pathname;
const T60 = { timeout: 60_000 };

/**
 * The starpo/* messages ESLint gives `code` as if it were the file at `path`: the repository's layering table and
 * rules, without the type-aware parsing the other rules need (it needs the file in the TypeScript project).
 */
async function layeringMessages(path: string, code: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { starpo: layering },
        rules: { 'starpo/layers': ['error', { layers: LAYERS }], 'starpo/no-cycle': 'error' },
      },
    ],
  });
  const [result] = await eslint.lintText(code, { filePath: `${root}${path}` });
  return result!.messages.filter((m) => m.ruleId?.startsWith('starpo/')).map((m) => `${m.ruleId}: ${m.message}`);
}

test('an import up the layering table is refused, naming both files and why', T60, async () => {
  const messages = await layeringMessages(
    'src/rl/zz-probe.ts',
    "export { startGateway } from '../gateway/server.ts';\n",
  );
  assert.equal(messages.length, 1);
  assert.match(
    messages[0]!,
    /^starpo\/layers: src\/rl\/zz-probe\.ts \(src\/rl\/\) may not import src\/gateway\/server\.ts/,
  );
  assert.match(messages[0]!, /the driver hands them their episodes/);
});

test('shipped code importing a test helper is refused; a test importing anything is fine', T60, async () => {
  const helper = "import { writeTinyModel } from '../../test/unit/rl/tiny-hf-model.ts';\nvoid writeTinyModel;\n";
  assert.equal((await layeringMessages('src/bench/zz-probe.ts', helper)).length, 1);
  const fromTest = "import { runIteration } from '../../../src/embedded/iteration.ts';\nvoid runIteration;\n";
  assert.deepEqual(await layeringMessages('test/unit/rl/zz-probe.test.ts', fromTest), []);
});

test('an import that closes a cycle is refused with the whole cycle, type-only imports included', T60, async () => {
  // src/rl/stages/rollout.ts imports seeds.ts; seeds.ts importing it back closes a cycle.
  const code = "import type { SampledGroups } from './stages/rollout.ts';\nexport type X = SampledGroups;\n";
  const messages = await layeringMessages('src/rl/seeds.ts', code);
  assert.equal(messages.length, 1);
  assert.match(
    messages[0]!,
    /^starpo\/no-cycle: import cycle: src\/rl\/seeds\.ts → src\/rl\/stages\/rollout\.ts → .*src\/rl\/seeds\.ts/,
  );
});

test('a file in no layer is named', T60, async () => {
  assert.deepEqual(await layeringMessages('lib/zz-probe.ts', 'export const x = 1;\n'), [
    'starpo/layers: lib/zz-probe.ts is in no layer of eslint.config.js LAYERS: add its folder where it belongs',
  ]);
});

test('the import map of the tree has no import against the layering and no cycle', T60, () => {
  const r = spawnSync(process.execPath, ['scripts/import-map.mjs'], { cwd: root, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout);
  assert.match(r.stdout, /imports against the layering: 0\nimport cycles: 0\n$/);
});
