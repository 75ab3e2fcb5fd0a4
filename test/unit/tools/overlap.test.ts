import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateWithTools } from '../../../src/tools/protocol.ts';
import { TOOL_FORMATS } from '../../../src/tools/formats.ts';
import type { ToolExecutor } from '../../../src/tools/types.ts';
import { charTokenizer } from '../agent/char-tokenizer.ts';
import { scriptedBackend } from './scripted.ts';

const STOP = '<|im_end|>';
const call = (code: string) => '```js\n' + code + '\n```\n';
const SCRIPTS = {
  'A:': call('slow') + 'a' + STOP,
  'B:': call('fast') + 'b' + call('fast') + 'bb' + STOP,
  'C:': 'c' + STOP,
};

/** Answers `slow` after 300 ms and anything else at once; notes when each call finished. */
function delayed(log: string[]): ToolExecutor {
  return {
    async execute(c) {
      const code = c.kind === 'code' ? c.code : '';
      if (code === 'slow') await new Promise((r) => setTimeout(r, 300));
      log.push(`done ${code}`);
      return { ok: true, output: code.toUpperCase() };
    },
  };
}

const tokenizer = charTokenizer(); // one vocabulary for every play: ids are given to chars as they are first seen

async function play(scripts: Record<string, string>, log: string[] = []) {
  const backend = scriptedBackend(tokenizer, new Map(Object.entries(scripts)));
  const generate = async (r: Parameters<typeof backend.generate>[0]) => {
    log.push(`generate ${r.prompts.map((p) => tokenizer.decode(p).slice(0, 2)).join(',')}`);
    return backend.generate(r);
  };
  const prompts = Object.keys(scripts).map((p) => tokenizer.encode(p));
  const seeds = Object.keys(scripts).map((p) => 100 + p.charCodeAt(0));
  const rows = await generateWithTools(
    generate,
    { prompts, maxNewTokens: 200, rowSeeds: seeds, stopStrings: [STOP] },
    prompts.map(() => delayed(log)),
    tokenizer,
    { format: TOOL_FORMATS['code-fence'], maxCalls: 4 },
  );
  const seen = backend.requests.flatMap((r) =>
    r.prompts.map((p, k) => `${tokenizer.decode(p).slice(0, 2)}${r.rowSeeds[k]}`),
  );
  return { rows, seen };
}

test('a slow tool call holds back only its own row: the others write their next rounds while it runs', async () => {
  const log: string[] = [];
  await play(SCRIPTS, log);
  const slowDone = log.indexOf('done slow');
  assert.deepEqual(log.slice(0, slowDone), [
    'generate A:,B:,C:',
    'done fast',
    'generate B:',
    'done fast',
    'generate B:',
  ]);
  assert.deepEqual(log.slice(slowDone), ['done slow', 'generate A:']);
});

test('each row writes, with the same round seeds, exactly what it writes alone, whatever it is batched with', async () => {
  const together = await play(SCRIPTS);
  const alone = await Promise.all(Object.entries(SCRIPTS).map(([k, v]) => play({ [k]: v })));
  assert.deepEqual(
    together.rows,
    alone.map((a) => a.rows[0]),
  );
  assert.deepEqual([...together.seen].sort(), alone.flatMap((a) => a.seen).sort());
});
