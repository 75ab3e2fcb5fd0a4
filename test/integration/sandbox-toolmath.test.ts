/** Every toolmath kind's one-line solution prints the environment's exact answer in the real sandbox. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { TOOLMATH_KINDS, toolmathProblem } from '../../src/envs/toolmath/index.ts';
import { Sandbox } from '../../src/tools/sandbox/sandbox.ts';

const sandbox = new Sandbox({ timeoutMs: 5000 });
after(() => sandbox.close());

for (const kind of TOOLMATH_KINDS) {
  test(`${kind}: the solution code prints the answer at every scale`, async () => {
    for (const scale of [1, 2, 3]) {
      for (const seed of [3, 4]) {
        const p = toolmathProblem({ kinds: [kind], scale }, seed);
        const r = await sandbox.run(p.code);
        assert.deepEqual(r, { ok: true, output: `${p.answer}\n` }, `${p.text}`);
      }
    }
  });
}
