/**
 * The warm start's general-ability check: the perplexity of a fixed English passage. On the real SmolLM2 it is
 * a language model's figure (20.8 measured), on the same shape with random weights about the vocabulary's size,
 * so the check tells a working model from a destroyed one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GENERAL_TEXT, generalPerplexity } from '../../../src/rl/general-ability.ts';
import { getNamedModel } from '../../../src/models/named.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { resolveRunModel } from '../../../src/rl/run-model.ts';
import { createActor, loadPretrained } from '../../../src/run/models.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';
import type { SequenceBatch } from '../../../src/policy/programs/batch.ts';

test('perplexity is exp of the mean negative log-prob of every token after the first', async () => {
  const tokenizer = scratchTokenizer();
  const seen: SequenceBatch[] = [];
  const actor = {
    async score(batch: SequenceBatch) {
      seen.push(batch);
      // Token t gets log(1/4) when t is odd, log(1/16) when even (t = 0 is never predicted: 0).
      const logprobs = Float32Array.from({ length: batch.seqLen }, (_, t) =>
        t === 0 ? 0 : Math.log(t % 2 ? 1 / 4 : 1 / 16),
      );
      return { logprobs };
    },
  };
  const text = 'abcde'; // 5 tokens: 4 predicted, two at 1/4 and two at 1/16: geometric mean 1/8
  assert.ok(Math.abs((await generalPerplexity(actor, tokenizer, text)) - 8) < 1e-5);
  assert.deepEqual([seen[0]!.batch, seen[0]!.seqLen, [...seen[0]!.attentionMask]], [1, 5, [1, 1, 1, 1, 1]]);
  assert.deepEqual([...seen[0]!.tokens], tokenizer.encode(text));
});

test('SmolLM2 reads the passage as a language model; its shape with random weights does not', async () => {
  await getNamedModel('smollm2-135m-instruct');
  const c = resolveConfig({ overrides: ['model=smollm2-135m-instruct', 'threads=1'] });
  const run = await resolveRunModel(c);
  assert.ok(run.tokenizer.encode(GENERAL_TEXT).length > 100);
  const random = createActor(c, run);
  const pretrained = createActor(c, run);
  try {
    await loadPretrained({ actor: pretrained, critic: null, ref: null }, run, c, true);
    const ppl = await generalPerplexity(pretrained, run.tokenizer);
    assert.ok(ppl > 10 && ppl < 40, `SmolLM2's perplexity of the passage: ${ppl}`);
    const noise = await generalPerplexity(random, run.tokenizer);
    assert.ok(noise > 50 * ppl, `random weights: ${noise}`);
  } finally {
    await random.close();
    await pretrained.close();
  }
});
