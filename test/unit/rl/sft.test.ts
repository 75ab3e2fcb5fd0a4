import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveConfig } from '../../../src/rl/config.ts';
import { createModels } from '../../../src/run/models.ts';
import { scratchModelConfig } from '../../../src/rl/run-model.ts';
import { demonstrations, sftWarmup } from '../../../src/rl/sft.ts';
import { COMPACT_CHAT } from '../../../src/agent/chat-format.ts';
import { scratchTokenizer } from '../../../src/rl/vocabulary.ts';

const tokenizer = scratchTokenizer();
const text = { tokenizer, chat: COMPACT_CHAT };
const config = (extra: string[]) =>
  resolveConfig({
    overrides: ['modelLayers=1', 'modelHidden=32', 'modelFfn=64', 'threads=1', 'sftEpisodes=16', ...extra],
  });

test('demonstrations train only the answer tokens: the mask covers exactly the written responses', async () => {
  const [demo] = await demonstrations(config(['env=sokoban', 'sftPolicy=expert']), text);
  const written = tokenizer.decode(demo.ids.filter((_, i) => demo.mask[i] === 1));
  assert.match(written, /^([UDLR](\|[UDLR])*\n)+$/);
});

test('an episode-target warm-start trains every token after the first, observations included', async () => {
  const [answers] = await demonstrations(config(['env=frozenlake', 'sftPolicy=random']), text);
  const [episode] = await demonstrations(config(['env=frozenlake', 'sftPolicy=random', 'sftTarget=episode']), text);
  assert.deepEqual(episode.ids, answers.ids);
  assert.deepEqual(
    episode.mask,
    answers.ids.map((_, i) => (i > 0 ? 1 : 0)),
  );
  assert.ok(answers.mask.filter((m) => m === 1).length < episode.ids.length / 2);
});

test('the warm-start lowers the cross-entropy of the demonstrations', async () => {
  const c = config(['env=bandit', 'sftPolicy=random', 'sftSteps=40', 'sftBatchSize=8', 'sftLr=3e-3']);
  const { actor } = createModels(c, scratchModelConfig(c, tokenizer), tokenizer);
  const m = await sftWarmup(c, actor, text);
  assert.equal(m['sft/episodes'], 16);
  assert.ok(m['sft/last_loss'] < m['sft/first_loss'] / 4, `loss ${m['sft/first_loss']} -> ${m['sft/last_loss']}`);
  await actor.close();
});
