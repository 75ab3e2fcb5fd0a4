/** The tool protocol end to end with the real sandbox behind it, and the sandbox benchmark. */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateWithTools } from '../../src/tools/protocol.ts';
import { TOOL_FORMATS } from '../../src/tools/formats.ts';
import { toolExecutor } from '../../src/tools/executors.ts';
import { SandboxPool } from '../../src/tools/sandbox/pool.ts';
import { benchmarkSandbox } from '../../src/tools/sandbox/bench.ts';
import { charTokenizer } from '../unit/agent/char-tokenizer.ts';
import { scriptedBackend } from '../unit/tools/scripted.ts';

const pool = new SandboxPool(2, { timeoutMs: 300 });
after(() => pool.close());

test('model-written code runs in the sandbox; a failing block shows its error line and the turn goes on', async () => {
  const tokenizer = charTokenizer();
  const script =
    '```js\nconsole.log(3n ** 40n)\n```\n```js\nundefinedFn()\n```\n' + '\\boxed{12157665459056928801}<|im_end|>';
  const backend = scriptedBackend(tokenizer, new Map([['Q:', script]]));
  const [r] = await generateWithTools(
    (q) => backend.generate(q),
    {
      prompts: [tokenizer.encode('Q:')],
      maxNewTokens: 300,
      rowSeeds: [1],
      stopStrings: ['<|im_end|>'],
    },
    [toolExecutor({ code: pool })],
    tokenizer,
    { format: TOOL_FORMATS['code-fence'], maxCalls: 3 },
  );
  assert.equal(
    r.text,
    '```js\nconsole.log(3n ** 40n)\n```\n```output\n12157665459056928801\n```\n' +
      '```js\nundefinedFn()\n```\n```output\nReferenceError: undefinedFn is not defined\n```\n' +
      '\\boxed{12157665459056928801}<|im_end|>',
  );
  assert.deepEqual(
    r.calls.map((c) => [c.ok, c.errorKind ?? null]),
    [
      [true, null],
      [false, 'runtime'],
    ],
  );
});

test('the sandbox benchmark runs its calls without a failure', async () => {
  const bench = await benchmarkSandbox(pool, 50);
  assert.equal(bench.failures, 0);
  assert.equal(bench.calls, 50);
  assert.ok(bench.callsPerSecond > 0);
});
