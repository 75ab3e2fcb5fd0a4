import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Episode } from '../../../src/agent/episode.ts';
import { TEMPLATES, formatReward } from '../../../src/agent/templates.ts';
import { createEnv, resolveEnvConfig } from '../../../src/envs/registry.ts';

// Seed 0 of the Simple Sokoban: shortest solution Down, Down, Right, Down, Left.
const GRID = '######\n##P__#\n#_X_##\n#___##\n#O___#\n######';

function sokoban(template: keyof typeof TEMPLATES, overrides: Record<string, unknown> = {}): Episode {
  const config = resolveEnvConfig({ type: 'sokoban', ...overrides });
  const episode = new Episode(createEnv(config), config, TEMPLATES[template]);
  episode.start(0);
  return episode;
}

test('the full template opens with the instruction, legend, actions, K and turn 1', () => {
  const [system, user] = sokoban('full').messages;
  assert.equal(system?.role, 'system');
  assert.equal(
    user?.content.split('\n').slice(1, 12).join('\n'),
    [
      'Symbols: # wall, _ floor, O target, X box, √ box on target, P player, S player on target.',
      'Actions: Up, Down, Left, Right.',
      'You can take up to 5 actions per turn, separated by " || ".',
      'Turn 1:',
      'State:',
      GRID,
    ].join('\n'),
  );
  assert.ok(
    user?.content.endsWith(
      'You have 10 actions left. Always output: <think> [your thoughts] </think> <answer> [your answer] ' +
        '</answer> with no extra text.',
    ),
  );
});

test('after a turn the user message reports its reward, then the next turn', () => {
  const episode = sokoban('full');
  const turn = episode.respond('<think>down</think><answer>Down || Down</answer>');
  assert.deepEqual(
    [turn.executedActions, turn.reward, turn.penaltyCharged, turn.observation],
    [['Down', 'Down'], -0.2, 0, GRID],
  );
  assert.ok(
    turn.userMessage.startsWith(
      'Reward: -0.2\nTurn 2:\nState:\n######\n##___#\n#___##\n#_P_##\n#OX__#\n######\nYou have 8 actions left.',
    ),
  );
});

test('a dropped action costs the format penalty and the valid ones still run', () => {
  const turn = sokoban('full').respond('<think>x</think><answer>Down || Fly</answer>');
  assert.deepEqual(
    [turn.executedActions, turn.parsed.unknown, turn.penaltyCharged, formatReward(turn.reward)],
    [['Down'], ['Fly'], 0.1, '-0.2'],
  );
});

test('an unparsable response runs nothing and costs the format penalty', () => {
  const turn = sokoban('full').respond('Down');
  assert.deepEqual([turn.executedActions, turn.reward, turn.done], [[], -0.1, false]);
});

test('solving ends the episode with a final reward report and success', () => {
  const episode = sokoban('full-no-think');
  episode.respond('<answer>Down || Down || Right</answer>');
  const last = episode.respond('<answer>Down || Left || Up</answer>');
  assert.deepEqual(
    [last.executedActions, formatReward(last.reward), last.userMessage, episode.done, episode.success],
    [['Down', 'Left'], '10.8', 'Reward: 10.8', true, true],
  );
});

test('the action budget caps execution and ends the episode', () => {
  const episode = sokoban('full', { maxActionsPerTrajectory: 3 });
  const turn = episode.respond('<think>x</think><answer>Up || Up || Left || Left</answer>');
  assert.deepEqual([turn.executedActions, episode.done, episode.actionsLeft], [['Up', 'Up', 'Left'], true, 0]);
});

test('the turn budget ends the episode after max turns', () => {
  const episode = sokoban('compact', { maxTurns: 2 });
  episode.respond('U');
  assert.equal(episode.done, false);
  episode.respond('U');
  assert.deepEqual([episode.done, episode.success, episode.turns.length], [true, false, 2]);
});

test('the compact template: header, grid, actions left; "r<reward>" reports; one-letter actions', () => {
  const episode = sokoban('compact');
  assert.deepEqual(episode.messages, [{ role: 'user', content: `U D L R/5\n${GRID}\n10` }]);
  const turn = episode.respond('D|d|Down'); // the third push is blocked by the wall
  assert.deepEqual(
    [turn.executedActions, turn.userMessage],
    [['Down', 'Down', 'Down'], 'r-0.3\n######\n##___#\n#___##\n#_P_##\n#OX__#\n######\n7'],
  );
});

test('a countdown answer is free-form: the expression is the action', () => {
  const config = resolveEnvConfig('countdown');
  const episode = new Episode(createEnv(config), config, TEMPLATES.full);
  episode.start(1); // Target 75, numbers 60, 70, 55
  const turn = episode.respond('<think>60+70=130</think><answer>(60+70)-55</answer>');
  assert.deepEqual([turn.executedActions, turn.reward, episode.success], [['(60+70)-55'], 1, true]);
});

test('the compact template names bandit arms by their first letters', () => {
  const config = resolveEnvConfig('bandit');
  const episode = new Episode(createEnv(config), config, TEMPLATES.compact);
  assert.deepEqual(episode.start(0), [{ role: 'user', content: 'D P/1\nArms: Dragon, Phoenix\n1' }]);
  assert.deepEqual(episode.respond('d').executedActions, ['Dragon']);
});

test('the one-shot templates add one example response after the rules, and the example itself parses', () => {
  for (const [name, example] of [
    ['one-shot', '<think>I will take: Up.</think><answer>Up</answer>'],
    ['one-shot-no-think', '<answer>Up</answer>'],
  ] as const) {
    const episode = sokoban(name);
    const [, user] = episode.messages;
    const lines = user!.content.split('\n');
    assert.equal(lines[4], `Example of a valid response: ${example}`, name);
    assert.equal(lines[5], 'Turn 1:', name);
    // Everything else is the reference template's, line for line.
    const reference = sokoban(name === 'one-shot' ? 'full' : 'full-no-think').messages;
    assert.deepEqual(lines.toSpliced(4, 1), reference[1]!.content.split('\n'), name);
    assert.equal(episode.messages[0]!.content, reference[0]!.content);
    const turn = episode.respond(example);
    assert.deepEqual([turn.executedActions, turn.penaltyCharged], [['Up'], 0], name);
  }
  // Free-form actions show the environment's own example (Countdown: an expression), not its hint.
  const config = resolveEnvConfig('countdown');
  const countdown = new Episode(createEnv(config), config, TEMPLATES['one-shot-no-think']);
  countdown.start(0);
  assert.match(countdown.messages[1]!.content, /\nExample of a valid response: <answer>\(1\+2\)\*3<\/answer>\n/);
});

test('the bandit one-shot example is the arm listed first, which the seed shuffles (copying it is no hint)', () => {
  const config = resolveEnvConfig('bandit');
  const examples = new Set<string>();
  for (let seed = 0; seed < 8; seed++) {
    const episode = new Episode(createEnv(config), config, TEMPLATES['one-shot-no-think']);
    episode.start(seed);
    const content = episode.messages[1]!.content;
    const first = /Actions: (\w+),/.exec(content)![1]!;
    assert.ok(content.includes(`Example of a valid response: <answer>${first}</answer>`));
    examples.add(first);
  }
  assert.deepEqual([...examples].sort(), ['Dragon', 'Phoenix']);
});
