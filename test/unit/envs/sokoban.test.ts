import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { SokobanEnv, SOKOBAN, type SokobanConfig } from '../../../src/envs/sokoban/index.ts';
import { parseLevel, levelRows, TARGET } from '../../../src/envs/sokoban/level.ts';
import { generateLevel, type SokobanGenerator } from '../../../src/envs/sokoban/generate.ts';
import { walkPlayer } from '../../../src/envs/sokoban/player-walk.ts';
import { solveSokoban } from '../../../src/envs/sokoban/solver.ts';
import { Prng } from '../../../src/envs/prng.ts';
import { StarpoError } from '../../../src/errors.ts';
import { createEnv, envSpecId, resolveEnvConfig } from '../../../src/envs/index.ts';

const CONFIG: SokobanConfig = { ...SOKOBAN.defaults };

function envOn(rows: string[], config: SokobanConfig = CONFIG): SokobanEnv {
  const env = new SokobanEnv(config);
  env.load(parseLevel(rows));
  return env;
}

test('a push moves the box into free floor and costs the step penalty', () => {
  const env = envOn(['#######', '#_PX_O#', '#######']);
  const r = env.step('Right');
  assert.deepEqual(
    [r.observation, r.reward, r.done, r.info.effective],
    ['#######\n#__PXO#\n#######', -0.1, false, true],
  );
});

test('a box does not move into a wall or another box', () => {
  const env = envOn(['#######', '#PXXOO#', '#######']);
  const r = env.step('Right');
  assert.deepEqual([r.observation, r.reward, r.info.effective], ['#######\n#PXXOO#\n#######', -0.1, false]);
  const wall = envOn(['#####', '#OPX#', '#####']).step('Right');
  assert.deepEqual([wall.observation, wall.info.effective], ['#####\n#OPX#\n#####', false]);
});

test('pushing a box off a target costs 1 more, onto a target gains 1', () => {
  const env = envOn(['########', '#P√_XO_#', '########']);
  assert.equal(env.step('Right').reward, -1.1);
  const onto = envOn(['##########', '#PX_O_XO_#', '##########']);
  onto.step('Right');
  const r = onto.step('Right');
  assert.deepEqual([r.reward, r.info.boxesOnTarget, r.done], [0.9, 1, false]);
});

test('the last box on its target pays 10.9 and ends the episode as a success', () => {
  const env = envOn(['######', '#PXO_#', '######']);
  const r = env.step('Right');
  assert.deepEqual([r.observation, r.reward, r.done, r.success], ['######\n#_P√_#\n######', 10.9, true, true]);
  assert.throws(() => env.step('Left'), StarpoError);
});

test('the player standing on a target renders as S', () => {
  assert.equal(envOn(['#####', '#OPX#', '#####']).step('Left').observation, '#####\n#S_X#\n#####');
});

test('the internal step cap ends the episode without success', () => {
  const env = envOn(['######', '#PXO_#', '#____#', '######'], { ...CONFIG, maxSteps: 3 });
  const results = [env.step('Up'), env.step('Up'), env.step('Up')];
  assert.deepEqual(
    results.map((r) => r.done),
    [false, false, true],
  );
  assert.equal(env.success, false);
});

test('the alternative vocabulary renders with its own symbols and legend', () => {
  const env = new SokobanEnv({ ...CONFIG, vocabulary: 'alternative' });
  env.load(parseLevel(['######', '#PX_O#', '######']));
  assert.equal(env.render(), 'WWWWWW\nWAC.GW\nWWWWWW');
  assert.deepEqual(
    env.describe().legend.map(([s]) => s),
    ['W', '.', 'G', 'C', 'B', 'A', '@'],
  );
});

test('the solver finds a shortest solution and rejects a box stuck in a corner', () => {
  assert.deepEqual(solveSokoban(parseLevel(['#######', '#O_X_P#', '#######'])), ['Left', 'Left', 'Left']);
  assert.equal(solveSokoban(parseLevel(['#####', '#X_O#', '#P__#', '#####'])), null);
});

const generate = (seed: number, generator: SokobanGenerator, width = 6, boxes = 1) =>
  generateLevel(new Prng(seed), { width, height: width, boxes, searchDepth: 300, generator });

test('seed 0 gives this 6×6 level under either generator', () => {
  const rows = ['######', '##P__#', '#_X_##', '#___##', '#O___#', '######'];
  assert.deepEqual(levelRows(generate(0, 'gym-sokoban')), rows);
  assert.deepEqual(levelRows(generate(0, 'ragen')), rows);
});

test("RAGEN's generator walks the player away from the box it pulled last (seeds 1 and 3)", () => {
  assert.deepEqual(levelRows(generate(1, 'gym-sokoban')), ['######', '#O_###', '#_####', '#X_#_#', '#P___#', '######']);
  assert.deepEqual(levelRows(generate(1, 'ragen')), ['######', '#O_###', '#_####', '#X_#_#', '#_P__#', '######']);
  assert.deepEqual(levelRows(generate(3, 'gym-sokoban')), ['######', '######', '#___##', '#_OXP#', '#____#', '######']);
  assert.deepEqual(levelRows(generate(3, 'ragen')), ['######', '######', '#___##', '#_OX_#', '#___P#', '######']);
});

test('the walk takes 0–3 steps with probabilities 0.2 / 0.4 / 0.2 / 0.2 after a one-cell displacement', () => {
  // A corridor: the walk can only go right, so the player's cell counts its steps.
  const open = parseLevel(['#######', '#P____#', '#######']);
  const counts = [0, 0, 0, 0];
  for (let seed = 0; seed < 1000; seed++) counts[walkPlayer(new Prng(seed), open, 1) - 8]++;
  assert.deepEqual(counts, [196, 391, 187, 226]);
  const twoCells = [0, 0, 0, 0];
  for (let seed = 0; seed < 1000; seed++) twoCells[walkPlayer(new Prng(seed), open, 2) - 8]++;
  assert.deepEqual(twoCells, [522, 237, 117, 124]); // moves with probability 0.5 when displaced farther
});

test('the walk never steps onto a box, a wall or back where it has been', () => {
  const walledIn = parseLevel(['#####', '##P√#', '#####']);
  assert.equal(walkPlayer(new Prng(0), walledIn, 1), 7);
  // From cell 8 the only free neighbour is 9; from there the box at 10 and the visited 8 block it.
  const corridor = parseLevel(['#######', '#P_X_O#', '#######']);
  const ends = [0, 0];
  for (let seed = 0; seed < 1000; seed++) ends[walkPlayer(new Prng(seed), corridor, 1) - 8]++;
  assert.deepEqual(ends, [196, 804]);
});

function checkGenerated(width: number, boxes: number, seeds: number, generator: SokobanGenerator): void {
  for (let seed = 0; seed < seeds; seed++) {
    const level = generate(seed, generator, width, boxes);
    // The boxes moved: none starts on a target (gym-sokoban's acceptance rule); only RAGEN's walk may
    // leave the player on an empty target.
    assert.ok(
      level.boxes.every((b) => level.cells[b] !== TARGET),
      `seed ${seed}: a box starts on a target`,
    );
    if (generator === 'gym-sokoban') assert.notEqual(level.cells[level.player], TARGET);
    assert.ok(solveSokoban(level), `seed ${seed}: unsolvable\n${levelRows(level).join('\n')}`);
  }
}

test('every generated Simple 6×6 level (3000 seeds each generator) is solvable and its box moved', () => {
  checkGenerated(6, 1, 3000, 'gym-sokoban');
  checkGenerated(6, 1, 3000, 'ragen');
});

test('every generated Larger 8×8 level (300 seeds each generator) is solvable and its boxes moved', () => {
  checkGenerated(8, 2, 300, 'gym-sokoban');
  checkGenerated(8, 2, 300, 'ragen');
});

test('an unknown generator is rejected naming env.generator', () => {
  assert.throws(() => SOKOBAN.validate({ ...CONFIG, generator: 'boxoban' as SokobanGenerator }), /env\.generator/);
});

test('the re-vocabulary variant plays the same levels as the standard one', () => {
  const standard = new SokobanEnv(CONFIG);
  const alternative = new SokobanEnv({ ...CONFIG, vocabulary: 'alternative' });
  for (let seed = 0; seed < 50; seed++) {
    standard.reset(seed);
    alternative.reset(seed);
    assert.deepEqual(alternative.snapshot().grid, standard.snapshot().grid);
  }
});

test('the same seed gives the same level in a separate process', () => {
  const script =
    "import { SokobanEnv, SOKOBAN } from './src/envs/sokoban/index.ts';" +
    'const env = new SokobanEnv({ ...SOKOBAN.defaults, width: 8, height: 8, boxes: 2 });' +
    'console.log(JSON.stringify([0, 1, 2, 99, 123456789].map((s) => env.reset(s))));';
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  const env = new SokobanEnv({ ...CONFIG, width: 8, height: 8, boxes: 2 });
  assert.deepEqual(
    JSON.parse(out),
    [0, 1, 2, 99, 123456789].map((s) => env.reset(s)),
  );
});

test('the oracle reports the shortest solution and whether it fits the budget', () => {
  const result = SOKOBAN.oracle!(CONFIG, 0);
  assert.deepEqual(result, { success: 1, detail: { shortest: 5, horizon: 10 } });
  const tight = SOKOBAN.oracle!({ ...CONFIG, maxActionsPerTrajectory: 4 }, 0);
  assert.equal(tight.success, 0);
});

test("grid-coord renders RAGEN-2's coordinate list (every target, boxes off and on them, no walls) above the grid", () => {
  const rows = ['######', '#P_XO#', '#X_√O#', '######'];
  const env = envOn(rows, { ...CONFIG, width: 6, height: 4, observation: 'grid-coord' });
  assert.equal(
    env.render(),
    'Coordinates: \nBoard size: 4 rows x 6 cols (zero-indexed).\n' +
      'Targets: (1, 4), (2, 3), (2, 4)\nBoxes: (1, 3), (2, 1)\n' +
      'Boxes on target: (2, 3)\nPlayer: (1, 1)\nGrid Map: \n######\n#P_XO#\n#X_√O#\n######',
  );
  assert.match(env.describe().instruction, /coordinates of the targets, boxes and the player, /);
  // The variant that lists the walls too: first, as RAGEN-2's format_coordinate_render orders its labels.
  const walls = envOn(rows, { ...CONFIG, width: 6, height: 4, observation: 'coord', coordinateWalls: true });
  assert.equal(
    walls.render(),
    'Board size: 4 rows x 6 cols (zero-indexed).\n' +
      'Walls: (0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 0), (1, 5), (2, 0), (2, 5), ' +
      '(3, 0), (3, 1), (3, 2), (3, 3), (3, 4), (3, 5)\nTargets: (1, 4), (2, 3), (2, 4)\nBoxes: (1, 3), (2, 1)\n' +
      'Boxes on target: (2, 3)\nPlayer: (1, 1)',
  );
  assert.match(walls.describe().instruction, /coordinates of the walls, targets, boxes and the player, /);
  const coord = envOn(['#####', '#OP_#', '#X_√#', '#_OX#', '#####'], { ...CONFIG, observation: 'coord' });
  coord.step('Left');
  assert.match(coord.render(), /\nPlayer on target: \(1, 1\)$/);
  assert.match(coord.describe().instruction, /\(0, 0\) to the bottom-right corner \(5, 5\)\.$/);
});

test('the coord-sokoban preset lists no walls and has its own id; coord-sokoban-walls lists them', () => {
  const plain = resolveEnvConfig('coord-sokoban');
  const walls = resolveEnvConfig('coord-sokoban-walls');
  assert.equal(createEnv(plain).reset(3).includes('Walls:'), false);
  assert.equal(createEnv(walls).reset(3).includes('Walls:'), true);
  assert.notEqual(envSpecId(plain), envSpecId(resolveEnvConfig({ type: 'sokoban', observation: 'grid-coord' })));
  assert.notEqual(envSpecId(plain), envSpecId(walls));
  assert.throws(() => resolveEnvConfig({ type: 'sokoban', coordinateWalls: 'yes' }), /env\.coordinateWalls/);
});

test('an unknown observation format is rejected naming env.observation', () => {
  assert.throws(
    () => SOKOBAN.validate({ ...CONFIG, observation: 'ascii' as SokobanConfig['observation'] }),
    /env\.observation/,
  );
});
