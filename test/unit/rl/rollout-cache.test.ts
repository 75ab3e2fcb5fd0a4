/**
 * Rollouts with the key/value cache kept across turns and shared prefixes (kvCacheMb > 0) play exactly the
 * trajectories of rollouts that re-prefill every turn (kvCacheMb 0): token ids, log-probs, masks, rewards.
 * The compact template on a model from scratch, the full template on a tiny random-init Qwen3 with the real
 * tokenizer and chat template, and tool turns whose generation pauses at each call and resumes after it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { resolveConfig, type RlConfig } from '../../../src/rl/config.ts';
import { rolloutSpec } from '../../../src/rl/episode-source.ts';
import { closeModels, createModels, loadPretrained } from '../../../src/run/models.ts';
import { rollout, type Trajectory } from '../../../src/rl/rollout.ts';
import { resolveRunModel } from '../../../src/rl/run-model.ts';
import type { Policy } from '../../../src/policy/engine/policy.ts';
import type { TurnGenerator } from '../../../src/tools/rollout-hook.ts';
import { generateWithTools } from '../../../src/tools/protocol.ts';
import type { ToolFormat } from '../../../src/tools/formats.ts';
import type { ToolExecutor } from '../../../src/tools/types.ts';
import { writeTinyModel } from './tiny-hf-model.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-rollout-cache-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The config's rollout played twice, re-prefilling and with the cache; returns both and the cached actor's counts. */
async function bothWays(c: RlConfig, turnGenerator?: TurnGenerator) {
  const run = await resolveRunModel(c);
  const spec = { ...rolloutSpec(c, run.chat, [11, 12], c.groupSize, 1, 5), turnGenerator };
  const played: Trajectory[][] = [];
  let cached: Policy | null = null;
  for (const kvCacheMb of [0, 64]) {
    const cfg = { ...c, kvCacheMb };
    const models = createModels(cfg, run.modelConfig, run.tokenizer);
    await loadPretrained(models, run, cfg, true);
    played.push(await rollout(spec, models.actor, run.tokenizer));
    if (kvCacheMb > 0) cached = models.actor;
    await closeModels(models);
  }
  return { plain: played[0], reused: played[1], stats: cached!.generationStats };
}

const SMALL = [
  'envGroups=2',
  'groupSize=3',
  'filter=none',
  'miniBatchSize=2',
  'threads=1',
  'modelLayers=1',
  'modelHidden=32',
  'modelFfn=64',
  'maxResponseTokens=10',
];

test('compact template, model from scratch, 5 turns: the same trajectories, a fraction of the prompt tokens computed', async () => {
  const c = resolveConfig({
    overrides: [...SMALL, 'env=sokoban', 'template=compact', 'maxTurns=5', 'modelContext=2048'],
  });
  const { plain, reused, stats } = await bothWays(c);
  assert.deepEqual(reused, plain);
  assert.ok(plain.some((t) => t.turns.length === 5));
  assert.ok(stats.prefilled + stats.shared < stats.prompt / 3, JSON.stringify(stats));
});

test(
  'full template on a tiny Qwen3 (real tokenizer, real chat template): the same trajectories',
  { timeout: 300_000 },
  async () => {
    const model = await writeTinyModel(join(scratch, 'qwen3'), 'qwen3');
    const c = resolveConfig({ overrides: [...SMALL, `model=${model}`, 'env=sokoban', 'maxTurns=3', 'groupSize=2'] });
    assert.equal(c.template, 'full');
    const { plain, reused } = await bothWays(c);
    assert.deepEqual(reused, plain);
    assert.ok(plain.every((t) => t.turns.length === 3 && t.ids.length > 300));
  },
);

/** A tool format that pauses at every vowel the model writes and finds a call there (a random model writes many). */
const everyVowel: ToolFormat = {
  name: 'code-inline',
  callKind: 'code',
  stopStrings: ['a', 'e', 'i', 'o', 'u'],
  lastCall: (text) => ({
    start: text.length - 1,
    end: text.length,
    call: { kind: 'code', language: 'js', code: text.slice(-1) },
  }),
  wrapResult: (shown) => `[${shown}]`,
  writeCall: () => '',
};

test('tool turns (generation paused at each call, resumed after its result): the same trajectories', async () => {
  const c = resolveConfig({
    overrides: [...SMALL, 'env=sokoban', 'template=compact', 'maxTurns=3', 'modelContext=2048', 'maxResponseTokens=16'],
  });
  const { tokenizer } = await resolveRunModel(c);
  const executor: ToolExecutor = {
    execute: async (call) => ({ ok: true, output: `got ${call.kind === 'code' ? call.code : ''}` }),
  };
  const tools: TurnGenerator = async (policy, request, envs) => {
    const rows = await generateWithTools(
      (r) => policy.generate(r),
      request,
      envs.map(() => executor),
      tokenizer,
      { format: everyVowel, maxCalls: 2 },
    );
    return rows.map((r) => ({ ...r, answerText: r.answerText, toolCalls: r.calls }));
  };
  const { plain, reused } = await bothWays(c, tools);
  assert.deepEqual(reused, plain);
  assert.ok(
    plain.some((t) => t.turns.some((turn) => (turn.toolCalls ?? []).some((call) => call.executed))),
    'calls ran',
  );
});
