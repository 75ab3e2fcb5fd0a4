import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEMPLATES, tokenizeMessages } from '../../../src/agent/index.ts';
import { episodeSetup } from '../../../src/replay/reenact.ts';
import { openSftDataset, parseSelection, type SftRecord } from '../../../src/replay/sft-dataset.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import { config, ITERATION_1 } from './fixtures.ts';

async function dataset(selection: string): Promise<SftRecord[]> {
  const path = join(mkdtempSync(join(tmpdir(), 'starpo-sft-')), 'sft.jsonl');
  const sink = await openSftDataset(path, parseSelection(selection));
  for (const e of ITERATION_1) await sink.write(e, episodeSetup(config));
  await sink.close();
  return readFileSync(path, 'utf8')
    .trimEnd()
    .split('\n')
    .filter((l) => l)
    .map((l) => JSON.parse(l) as SftRecord);
}

test('successful trajectories become expert records that the warm-start tokenizes to their answers', async () => {
  const [record, ...rest] = await dataset('successful');
  assert.equal(rest.length, 0);
  const summary = [record.seed, record.template, record.return, record.success, record.source];
  assert.deepEqual(summary, [4, 'compact', 1, true, 'r/main/1/trajectory/train/0/0']);
  const tokenizer = scratchTokenizer();
  const { ids, mask } = tokenizeMessages(record.messages, tokenizer, TEMPLATES[record.template].chat, true);
  assert.equal(tokenizer.decode(ids.filter((_, i) => mask[i] === 1)), 'D\n');
});

test('selections pick by success, by positive return, or everything', async () => {
  assert.deepEqual(
    (await dataset('positive-return')).map((r) => r.source.slice(-3)),
    ['0/0', '0/1', '1/0'],
  );
  assert.equal((await dataset('all')).length, 4);
  assert.throws(() => parseSelection('best'), /"best": one of successful, positive-return, all/);
});
