/**
 * A whole sequence's causal attention in query blocks (program option causalBlockTokens; model/transformer.ts
 * attendCausal): where a sequence is cut, that the blocks above the diagonal are not computed, and scores and train
 * steps equal to the whole square's to float rounding, rows apart and packed.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Policy } from '../../../src/policy/engine/policy.ts';
import { liveNodes } from '../../../src/policy/graph/onnx.ts';
import { programOptions } from '../../../src/policy/graph/program-options.ts';
import { buildLayout } from '../../../src/policy/model/layout.ts';
import { causalBlockEnds } from '../../../src/policy/model/transformer.ts';
import { DEFAULT_ADAMW } from '../../../src/policy/programs/adamw.ts';
import { STARPO_S_PPO } from '../../../src/policy/programs/loss.ts';
import { buildScoreGraph } from '../../../src/policy/programs/score.ts';
import { assertWithin, batch } from './shared-prompt-batch.ts';
import { tinyConfig } from './tiny-config.ts';

test('a sequence is cut into blocks of at least the option, at most 8, ending on multiples of 16', () => {
  assert.deepEqual(causalBlockEnds(736, 128), [144, 288, 432, 576, 736]);
  assert.deepEqual(causalBlockEnds(64, 16), [16, 32, 48, 64]);
  assert.deepEqual(causalBlockEnds(255, 128), [255]);
  assert.deepEqual(causalBlockEnds(256, Infinity), [256]);
  assert.equal(causalBlockEnds(4096, 128).length, 8);
});

test('with 4 blocks the softmax covers 10 of the square’s 16 parts', () => {
  const config = tinyConfig('qwen2', 0.05);
  const softmaxFloats = (causalBlockTokens: number) =>
    liveNodes(
      buildScoreGraph(
        buildLayout(config, 'actor'),
        { batch: 2, seqLen: 64 },
        'float32',
        programOptions({ causalBlockTokens }),
      ),
    )
      .filter((n) => n.op === 'Softmax' && n.outputs[0]!.rank === 5) // attention's, not the LM head's
      .reduce((sum, n) => sum + n.outputs[0]!.size, 0);
  assert.equal(softmaxFloats(16) / softmaxFloats(Infinity), 10 / 16);
});

const policies: Policy[] = [];
const make = (causalBlockTokens: number, packPrefixes: boolean, lora = false) => {
  const p = new Policy({
    config: tinyConfig('qwen2', 0.05),
    seed: 5,
    threads: 1,
    packPrefixes,
    program: { causalBlockTokens },
    ...(lora ? { lora: { rank: 2, alpha: 4, dropout: 0, targets: ['q', 'v', 'up'] } } : {}),
  });
  policies.push(p);
  return p;
};
after(() => Promise.all(policies.map((p) => p.close())));

test('blocked attention scores and trains as the whole square does, rows apart and packed', async () => {
  const optim = { ...DEFAULT_ADAMW, eps: 1, weightDecay: 0, maxGradNorm: null }; // the step moves each weight ≈ −g
  for (const [packPrefixes, lora] of [
    [false, false],
    [true, false],
    [false, true],
  ]) {
    const what = `${packPrefixes ? 'packed' : 'rows apart'}${lora ? ', LoRA' : ''}`;
    const [whole, blocked] = [make(Infinity, packPrefixes, lora), make(16, packPrefixes, lora)];
    const [sw, sb] = [await whole.score(batch), await blocked.score(batch)];
    assertWithin(sb.logprobs!, sw.logprobs!, 1e-5, `${what} logprobs`);
    assertWithin(sb.entropy!, sw.entropy!, 1e-5, `${what} entropy`);
    const before = whole.getParams().matrices.slice();
    const opts = { loss: STARPO_S_PPO, lr: 1, optim };
    const [mw, mb] = [await whole.trainStep(batch, opts), await blocked.trainStep(batch, opts)];
    assertWithin([mb.loss, mb.grad_norm], [mw.loss, mw.grad_norm], 1e-5, `${what} metrics`);
    const [dw, db] = [whole, blocked].map((p) => p.getParams().matrices.map((x, i) => x - before[i]));
    const scale = Math.max(...dw.map(Math.abs));
    assert.ok(scale > 1e-6, `${what}: the step moved nothing`);
    const worst = Math.max(...db.map((x, i) => Math.abs(x - dw[i])));
    assert.ok(worst <= 1e-4 * scale, `${what}: gradients differ by ${worst} (largest ${scale})`);
  }
});
