/**
 * Environment throughput on one core: steps/s per preset and Sokoban levels generated/s.
 *   node --import tsx scripts/bench-envs.ts [--seconds 1]
 * Prints JSON lines ({"bench":"envs","env":"sokoban",...}). Targets: Sokoban ≥ 100k steps/s, ≥ 500 6×6 levels/s.
 */
import { parseArgs } from 'node:util';
import { benchEnvs } from '../src/cli/commands/bench-envs.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '1' } } });
await benchEnvs({ seconds: Number(values.seconds) });
