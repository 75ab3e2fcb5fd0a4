import { StarpoError } from '../../errors.ts';
import { episodeOver, vocabularyMatcher } from '../common.ts';
import { coordinateHint, coordinateText, formatObservation, type ObservationFormat } from '../coordinates.ts';
import { Prng } from '../prng.ts';
import type { Env, EnvConfigBase, EnvSnapshot, StepResult, TaskDescription } from '../types.ts';
import { LAKE_ACTIONS, generateLakeMap, moveOnLake, type LakeMap } from './map.ts';

export interface FrozenLakeConfig extends EnvConfigBase {
  type: 'frozenlake';
  /** Side of the square map (the paper: 4). */
  size: number;
  /** Probability that a tile is frozen rather than a hole (the paper: 0.8). */
  pFrozen: number;
  /** Whether the ice is slippery at all (the paper: on); false is the same game as slipProbability 0. */
  slippery: boolean;
  /**
   * On slippery ice, the probability of sliding: each perpendicular direction with half of it, the intended
   * one with the rest. RAGEN (v1) and gym: 2/3 (1/3 each way); RAGEN-2's FrozenLake: 0, or 0.02 in its sweep.
   */
  slipProbability: number;
  /** What the agent sees: the grid, RAGEN-2's coordinate list, or both (CoordFrozenLake: grid-coord). */
  observation: ObservationFormat;
  /** Internal step cap (gym's TimeLimit for 4×4 is 100). */
  maxSteps: number;
}

const INSTRUCTION = 'You are walking on a frozen lake. Reach the goal without falling into a hole.';
const SLIPPERY = ' The ice is slippery: you may move in a direction you did not intend.';

const LEGEND: Array<[string, string]> = [
  ['P', 'player'],
  ['_', 'frozen tile'],
  ['O', 'hole'],
  ['G', 'goal'],
  ['X', 'player in a hole'],
  ['√', 'player on the goal'],
];

// Layout and slips draw from separate streams of the seed, so the map never depends on the moves.
const MAP_STREAM = 0;
const SLIP_STREAM = 1;

/** The slip probability in effect: 0 on ice that is not slippery. */
export function slipOf(c: Pick<FrozenLakeConfig, 'slippery' | 'slipProbability'>): number {
  return c.slippery ? c.slipProbability : 0;
}

/**
 * −1, 0 or +1 (turn left, go straight, turn right) from one uniform draw u ∈ [0, 1): left below p/2,
 * straight below p/2 + (1 − p), right above. At p = 2/3 the boundaries fall between the same 32-bit
 * draws as ⌊3u⌋ − 1 (the rule of earlier versions), so seeds replay the same slips.
 */
export function slipDirection(u: number, p: number): number {
  if (u < p / 2) return -1;
  return u < p / 2 + (1 - p) ? 0 : 1;
}

export class FrozenLakeEnv implements Env {
  readonly type = 'frozenlake';
  readonly matchAction = vocabularyMatcher(LAKE_ACTIONS);
  private map: LakeMap | null = null;
  private slips = new Prng(0, SLIP_STREAM);
  private player = 0;
  private steps = 0;
  private ended = false;
  private reached = false;

  constructor(private readonly config: FrozenLakeConfig) {}

  get done(): boolean {
    return this.ended;
  }

  get success(): boolean {
    return this.reached;
  }

  describe(): TaskDescription {
    const { observation, size } = this.config;
    const instruction =
      INSTRUCTION +
      (slipOf(this.config) > 0 ? SLIPPERY : '') +
      coordinateHint(observation, size, size, 'the start, the goal, the player and the holes');
    return { env: this.type, instruction, legend: LEGEND, actions: LAKE_ACTIONS, actionHint: 'Left' };
  }

  reset(seed: number): string {
    return this.load(generateLakeMap(new Prng(seed, MAP_STREAM), this.config.size, this.config.pFrozen), seed);
  }

  /** Starts an episode on a given map; slips come from `slipSeed` (tests, Monte-Carlo checks). */
  load(map: LakeMap, slipSeed: number): string {
    this.map = map;
    this.slips = new Prng(slipSeed, SLIP_STREAM);
    this.player = map.start;
    this.steps = 0;
    this.ended = this.reached = false;
    return this.render();
  }

  step(action: string): StepResult {
    const map = this.current();
    if (this.ended) throw episodeOver(this.type);
    const intended = LAKE_ACTIONS.indexOf(action as (typeof LAKE_ACTIONS)[number]);
    if (intended < 0) throw new StarpoError(`frozenlake: unknown action "${action}"; use matchAction() first`);
    // One draw per step whatever the outcome: the slip sequence of a seed is fixed.
    const slip = this.config.slippery ? slipDirection(this.slips.float(), this.config.slipProbability) : 0;
    const direction = (intended + slip + 4) % 4;
    const next = moveOnLake(map.size, this.player, direction);
    const effective = next !== this.player;
    this.player = next;
    this.steps++;
    this.reached = next === map.goal;
    this.ended = this.reached || map.holes[next] === 1 || this.steps >= this.config.maxSteps;
    return {
      observation: this.render(),
      reward: this.reached ? 1 : 0,
      done: this.ended,
      success: this.reached,
      info: {
        valid: true,
        effective,
        moved: LAKE_ACTIONS[direction] as string,
        slipped: slip !== 0,
        steps: this.steps,
      },
    };
  }

  render(): string {
    return formatObservation(
      this.config.observation,
      () => this.rows().join('\n'),
      () => this.coordinates(),
    );
  }

  /** RAGEN-2's entity lists; the start stays listed after the player leaves it. */
  private coordinates(): string {
    const map = this.current();
    const at = this.player;
    const where = at === map.goal ? 'goal' : map.holes[at] === 1 ? 'hole' : 'ice';
    const holes = Array.from(map.holes.keys()).filter((i) => map.holes[i] === 1);
    return coordinateText(map.size, map.size, [
      ['Start', [map.start]],
      ['Goal', [map.goal]],
      ['Player', where === 'ice' ? [at] : []],
      ['Player on goal', where === 'goal' ? [at] : []],
      ['Player in hole', where === 'hole' ? [at] : []],
      ['Holes', holes],
    ]);
  }

  anchor(): string {
    return this.render();
  }

  snapshot(): EnvSnapshot {
    const map = this.current();
    return { kind: 'grid', env: this.type, grid: this.rows(), size: map.size, steps: this.steps };
  }

  private rows(): string[] {
    const map = this.current();
    const rows: string[] = [];
    for (let r = 0; r < map.size; r++) {
      let row = '';
      for (let c = 0; c < map.size; c++) {
        const i = r * map.size + c;
        const hole = map.holes[i] === 1;
        const goal = i === map.goal;
        if (i === this.player) row += hole ? 'X' : goal ? '√' : 'P';
        else row += hole ? 'O' : goal ? 'G' : '_';
      }
      rows.push(row);
    }
    return rows;
  }

  private current(): LakeMap {
    if (!this.map) throw new StarpoError('frozenlake: reset(seed) before use');
    return this.map;
  }
}
