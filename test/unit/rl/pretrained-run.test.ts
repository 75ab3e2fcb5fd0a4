/**
 * `--model` end to end in the embedded driver: the paper's real-model config (configs/qwen2.5-0.5b-sokoban.json,
 * shrunk to 2 groups × 2 rollouts × 2 turns) on tiny random-init Qwen3 (BF16) and Llama 3 (F32, sharded)
 * directories with the real tokenizers and chat templates; stopped and resumed, a run ends bitwise equal to
 * an uninterrupted one, and the log records exactly which tokens were trained.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { TOKEN_ROLES } from '../../../src/agent/chat-format.ts';
import {
  createLocalEventReader,
  replay,
  type IterationEvent,
  type TrajectoryEvent,
} from '../../../src/events/index.ts';
import { trainEmbedded } from '../../../src/embedded/driver.ts';
import { realTokenizer } from '../agent/real-tokenizers.ts';
import { paperConfig, writeTinyModel } from './tiny-hf-model.ts';

const scratch = mkdtempSync(join(tmpdir(), 'starpo-pretrained-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function events(root: string) {
  const reader = createLocalEventReader({ root });
  const out: (IterationEvent | TrajectoryEvent)[] = [];
  for await (const e of replay(reader, 'r')) if (e.kind === 'iteration' || e.kind === 'trajectory') out.push(e);
  await reader.close();
  return out;
}

const checkpointFile = (root: string, iteration: number, file: string) =>
  readFileSync(join(root, 'r', 'checkpoints', 'main', String(iteration).padStart(8, '0'), file));

for (const [name, options] of [
  ['qwen3', { dtype: 'BF16' }],
  ['llama3', { maxShardBytes: 6e6 }],
] as const) {
  test(
    `${name}: a pretrained run stopped after iteration 1 and resumed equals an uninterrupted one`,
    { timeout: 900_000 },
    async () => {
      const model = await writeTinyModel(join(scratch, name), name, options);
      const config = paperConfig(model);
      assert.equal(config.template, 'full');
      const [straight, crashed] = ['straight', 'crashed'].map((d) => mkdtempSync(join(scratch, `${name}-${d}-`)));
      await trainEmbedded({ root: straight, runId: 'r', config });
      await trainEmbedded({ root: crashed, runId: 'r', config, stopAfter: 1 });
      await trainEmbedded({ root: crashed, runId: 'r', resume: true });
      assert.ok(
        !checkpointFile(straight, 0, 'actor.model.safetensors').equals(
          checkpointFile(straight, 2, 'actor.model.safetensors'),
        ),
      );
      for (const file of ['actor.model.safetensors', 'critic.model.safetensors', 'actor.training_state.safetensors']) {
        assert.ok(checkpointFile(straight, 2, file).equals(checkpointFile(crashed, 2, file)), `${file} differs`);
      }
      const timeless = (list: (IterationEvent | TrajectoryEvent)[]) =>
        list.map(({ startedAt: _, finishedAt: __, ...e }) => ({ ...e, stageTimingsMs: null }));
      assert.deepEqual(timeless(await events(crashed)), timeless(await events(straight)));
      const config0 = JSON.parse(checkpointFile(straight, 2, 'actor.tokenizer_config.json').toString());
      assert.ok(typeof config0.chat_template === 'string', 'the checkpoint carries the chat template');
      assert.ok(checkpointFile(straight, 2, 'actor.generation_config.json').length > 0);
    },
  );
}

test("qwen3: the logged trajectories hold the trained tokens: the model's template around the prompt, loss only on what it wrote", async () => {
  const root = mkdtempSync(join(scratch, 'log-'));
  await trainEmbedded({ root, runId: 'r', config: paperConfig(join(scratch, 'qwen3'), ['iterations=1']) });
  const trajectories = (await events(root)).filter((e): e is TrajectoryEvent => e.kind === 'trajectory');
  assert.equal(trajectories.length, 4 + 2);
  const tok = realTokenizer('qwen3');
  for (const t of trajectories) {
    assert.equal(t.tokenRoles.length, t.tokenIds.length);
    assert.ok(tok.decode(t.tokenIds).startsWith("<|im_start|>system\nYou're a helpful assistant."));
    // Each turn's tokens are one run of assistant tokens; decoded (less the stop it may have
    // written) it is the turn's text.
    const runs = [...t.tokenRoles.matchAll(new RegExp(`${TOKEN_ROLES.indexOf('assistant')}+`, 'g'))];
    assert.equal(runs.length, t.turns.length);
    runs.forEach((r, k) => {
      const ids = t.tokenIds.slice(r.index, r.index + r[0].length);
      assert.equal(tok.decode(ids.at(-1) === 151645 ? ids.slice(0, -1) : ids), t.turns[k].response);
    });
    assert.ok(/^0+1+0+2+0+4+/.test(t.tokenRoles), t.tokenRoles.slice(0, 80));
  }
});
