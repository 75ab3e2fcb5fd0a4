/**
 * Level statistics of the Sokoban presets: per preset, over seeds [from, to], the mean length of a
 * shortest solution, the share of levels solvable in one move and the share solvable within the
 * action budget (min(maxActionsPerTrajectory, maxTurns · maxActionsPerTurn)). What src/envs/README.md reports.
 *   node --import tsx scripts/sokoban-level-stats.ts [--from 0] [--to 299] [--presets sokoban,sokoban-gym]
 * Prints one JSON line per preset.
 */
import { parseArgs } from 'node:util';
import { resolveEnvConfig } from '../src/envs/registry.ts';
import { sokobanLevel } from '../src/envs/sokoban/index.ts';
import { solveSokoban } from '../src/envs/sokoban/solver.ts';
import { actionHorizon } from '../src/envs/common.ts';

const { values } = parseArgs({
  options: {
    from: { type: 'string', default: '0' },
    to: { type: 'string', default: '299' },
    presets: { type: 'string', default: 'sokoban,sokoban-gym,sokoban-large,sokoban-large-gym' },
  },
});

for (const preset of values.presets.split(',')) {
  const c = resolveEnvConfig(preset);
  if (c.type !== 'sokoban') throw new Error(`${preset} is not a Sokoban preset`);
  const horizon = Math.min(actionHorizon(c), c.maxSteps);
  const lengths: number[] = [];
  let unsolved = 0;
  for (let seed = Number(values.from); seed <= Number(values.to); seed++) {
    const plan = solveSokoban(sokobanLevel(c, seed), { maxDepth: c.maxSteps });
    if (plan) lengths.push(plan.length);
    else unsolved++;
  }
  const n = lengths.length + unsolved;
  const share = (k: number) => Number((k / n).toFixed(4));
  console.log(
    JSON.stringify({
      bench: 'sokoban-levels',
      preset,
      generator: c.generator,
      size: `${c.width}x${c.height}`,
      boxes: c.boxes,
      seeds: `${values.from}-${values.to}`,
      meanShortest: Number((lengths.reduce((a, b) => a + b, 0) / lengths.length).toFixed(3)),
      oneMove: share(lengths.filter((l) => l === 1).length),
      withinBudget: share(lengths.filter((l) => l <= horizon).length),
      horizon,
      unsolved,
    }),
  );
}
