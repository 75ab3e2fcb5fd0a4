/**
 * An iteration's model FLOPs per stage (src/bench/iteration-flops.ts), against sums written out token by token from
 * the per-token count: the shared first prompt once (once per mini-batch in the update), the rows the filter keeps,
 * the scoring models the config has, LoRA's lighter backward, the actor's LM head on the written tokens only and the
 * critic without one, nothing scored or trained when the update skips.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { iterationFlops } from '../../../src/bench/iteration-flops.ts';
import { parseModelConfig } from '../../../src/policy/io/config.ts';
import { forwardFlopsPerToken } from '../../../src/policy/model/flops.ts';
import { resolveConfig } from '../../../src/rl/config.ts';
import { trajectory, turn } from '../events/fixtures.ts';

const model = parseModelConfig({
  model_type: 'llama',
  vocab_size: 100,
  hidden_size: 16,
  intermediate_size: 32,
  num_hidden_layers: 2,
  num_attention_heads: 2,
  num_key_value_heads: 1,
});
const HEAD = 2 * 16 * 100; // the LM head's FLOPs a token

/**
 * The forward FLOPs of positions from+1 … to without the LM head, one position at a time (what the module sums in
 * closed form).
 */
function byToken(from: number, to: number): number {
  let sum = 0;
  for (let p = from + 1; p <= to; p++) sum += forwardFlopsPerToken(model, p) - HEAD;
  return sum;
}

/** A trajectory of `length` tokens: a first prompt of `prompt` tokens, the rest the model's; return `ret`. */
function row(group: number, index: number, length: number, prompt: number, ret: number) {
  const t = trajectory('main', 2, group, index);
  return {
    ...t,
    envSeed: 1000 + group,
    turns: [{ ...turn(0), promptTokens: prompt, envReward: ret, formatPenalty: 0 }],
    trajectoryReturn: ret,
    tokenIds: new Array<number>(length).fill(7),
    tokenRoles: '2'.repeat(prompt) + '4'.repeat(length - prompt),
  };
}

/** The rollout's FLOPs of a group: its prompt once, each row's tokens after it, the LM head on the written tokens. */
function generated(prompt: number, ...lengths: number[]): number {
  const rows = lengths.reduce((sum, n) => sum + byToken(prompt, n) + (n - prompt) * HEAD, 0);
  return byToken(0, prompt) + rows;
}

const close = (a: number, b: number) => assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

test('GRPO: every row trained; the group prompt once when packed, whole rows when not; actor and reference scored', () => {
  const rows = [row(0, 0, 14, 10, 1), row(0, 1, 16, 10, 0)];
  const c = resolveConfig({ preset: 'grpo' }); // old log-probs recomputed; KL 0.001: a reference
  const heads = (4 + 6) * HEAD; // the actor's LM head runs on the written tokens only
  const shared = byToken(0, 10) + byToken(10, 14) + byToken(10, 16) + heads;
  const packed = iterationFlops({ model, config: c, trajectories: rows, packed: true, actorSkipped: false });
  close(packed.rollout, generated(10, 14, 16));
  close(packed.score, 2 * shared); // old log-probs and the reference's
  close(packed.update, 3 * shared); // full fine-tuning: forward, input and weight gradients
  const apart = iterationFlops({ model, config: c, trajectories: rows, packed: false, actorSkipped: false });
  close(apart.rollout, generated(10, 14, 16)); // generation shares the prompt whatever the trainer packs
  close(apart.score, 2 * (byToken(0, 14) + byToken(0, 16) + heads));
  const lora = resolveConfig({ preset: 'grpo', overrides: ['loraRank=4', 'klCoef=0', 'oldLogprobs=behaviour'] });
  const l = iterationFlops({ model, config: lora, trajectories: rows, packed: true, actorSkipped: false });
  close(l.score, 0); // the rollout's log-probs, no reference
  close(l.update, 2 * shared); // no gradient for the frozen weights
  const skipped = iterationFlops({ model, config: c, trajectories: rows, packed: true, actorSkipped: true });
  assert.deepEqual([skipped.score, skipped.update], [0, 0]);
  // One row a mini-batch: the weights change between them, so each computes the group's prompt again.
  const single = resolveConfig({ preset: 'grpo', overrides: ['miniBatchSize=1'] });
  const s = iterationFlops({ model, config: single, trajectories: rows, packed: true, actorSkipped: false });
  close(s.score, 2 * shared); // scoring is one pass over the kept rows: the prompt once
  close(s.update, 3 * (byToken(0, 14) + byToken(0, 16) + heads));
});

test('StarPO-S: only the kept group is scored and trained, the critic without its LM head, on every epoch', () => {
  // Group 0 disagrees (returns 1 and 0), group 1 agrees: the top quarter by return std keeps group 0.
  const rows = [row(0, 0, 14, 10, 1), row(0, 1, 16, 10, 0), row(1, 0, 20, 12, 0), row(1, 1, 22, 12, 0)];
  const c = resolveConfig({
    preset: 'starpo-s',
    overrides: ['envGroups=4', 'groupSize=2', 'miniBatchSize=2', 'ppoEpochs=2'],
  });
  const f = iterationFlops({ model, config: c, trajectories: rows, packed: true, actorSkipped: false });
  const actor = byToken(0, 10) + byToken(10, 14) + byToken(10, 16) + (4 + 6) * HEAD;
  const critic = byToken(0, 10) + byToken(10, 14) + byToken(10, 16);
  close(f.rollout, generated(10, 14, 16) + generated(12, 20, 22));
  close(f.score, actor + critic); // old log-probs and the critic's values; no KL term
  close(f.update, 2 * 3 * (actor + critic));
  // With the actor's step skipped the critic still trains (and scores).
  const s = iterationFlops({ model, config: c, trajectories: rows, packed: true, actorSkipped: true });
  close(s.update, 2 * 3 * critic);
});

test('scoring, training and the rollout count each row up to its last written token', () => {
  // 10 prompt tokens, 4 the model wrote, then 3 of the environment's last observation: 17 tokens.
  const withTail = (group: number, index: number, ret: number) => ({
    ...row(group, index, 17, 10, ret),
    tokenRoles: '2'.repeat(10) + '4'.repeat(4) + '3'.repeat(3),
  });
  const rows = [withTail(0, 0, 1), withTail(0, 1, 0)];
  const c = resolveConfig({ preset: 'grpo' });
  const f = iterationFlops({ model, config: c, trajectories: rows, packed: true, actorSkipped: false });
  close(f.rollout, generated(10, 14, 14)); // the last observation is never fed to the model
  const trained = byToken(0, 10) + 2 * byToken(10, 14) + 2 * 4 * HEAD;
  close(f.score, 2 * trained);
  close(f.update, 3 * trained);
});
