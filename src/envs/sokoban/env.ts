import { StarpoError } from '../../errors.ts';
import { episodeOver, vocabularyMatcher } from '../common.ts';
import { coordinateHint, coordinateText, formatObservation, type ObservationFormat } from '../coordinates.ts';
import { Prng } from '../prng.ts';
import type { Env, EnvConfigBase, EnvSnapshot, StepResult, TaskDescription } from '../types.ts';
import { generateLevel, type SokobanGenerator } from './generate.ts';
import {
  TARGET,
  VOCABULARIES,
  WALL,
  legendOf,
  renderRows,
  type SokobanLevel,
  type SokobanSymbols,
  type SokobanVocabulary,
} from './level.ts';
import { MOVES } from './solver.ts';

export interface SokobanConfig extends EnvConfigBase {
  type: 'sokoban';
  /** Room size including the wall border (6×6 = Simple, 8×8 = Larger). At most 256 cells. */
  width: number;
  height: number;
  boxes: number;
  /** Depth limit of the generator's reverse-play search. */
  searchDepth: number;
  /** Level generation: RAGEN's (reverse play by pulls, then a 1–3 step player walk) or gym-sokoban's (generate.ts). */
  generator: SokobanGenerator;
  /** Internal step cap: the episode ends (unsuccessfully) after this many steps. */
  maxSteps: number;
  /** Symbols of the rendering; the legend follows the vocabulary. */
  vocabulary: SokobanVocabulary;
  /** What the agent sees: the grid, RAGEN-2's coordinate list, or both (CoordSokoban: grid-coord). */
  observation: ObservationFormat;
  /**
   * List the walls' coordinates too (a variant: RAGEN-2 leaves them out as too heavy, and on a 6×6 room they are
   * over half of the coordinate text). Absent or false: RAGEN-2's lists.
   */
  coordinateWalls?: boolean;
}

// gym-sokoban's reward scheme (docs/spec.md §2).
const STEP_REWARD = -0.1;
const BOX_ON_TARGET = 1;
const BOX_OFF_TARGET = -1;
const ALL_ON_TARGETS = 10;

const INSTRUCTION =
  'You are solving the Sokoban puzzle. You are the player and you need to push all boxes to targets. ' +
  'When you are right next to a box, you can push it by moving in the same direction. ' +
  'You cannot push a box through a wall, and you cannot pull a box.';

/** The level of `seed` under a config's size and generator. */
export function sokobanLevel(c: SokobanConfig, seed: number): SokobanLevel {
  const { width, height, boxes, searchDepth, generator } = c;
  return generateLevel(new Prng(seed), { width, height, boxes, searchDepth, generator });
}

export class SokobanEnv implements Env {
  readonly type = 'sokoban';
  private level: SokobanLevel | null = null;
  private boxAt = new Uint8Array(0);
  private player = 0;
  private boxesOnTarget = 0;
  private steps = 0;
  private deltas = [0, 0, 0, 0];
  private ended = false;
  private solved = false;
  private readonly symbols: SokobanSymbols;
  readonly matchAction = vocabularyMatcher(MOVES);

  constructor(private readonly config: SokobanConfig) {
    this.symbols = VOCABULARIES[config.vocabulary];
  }

  get done(): boolean {
    return this.ended;
  }

  get success(): boolean {
    return this.solved;
  }

  describe(): TaskDescription {
    const { observation, height, width, coordinateWalls } = this.config;
    const what = coordinateWalls ? 'the walls, targets, boxes and the player' : 'the targets, boxes and the player';
    const instruction = INSTRUCTION + coordinateHint(observation, height, width, what);
    return { env: this.type, instruction, legend: legendOf(this.symbols), actions: MOVES, actionHint: 'Up' };
  }

  reset(seed: number): string {
    return this.load(sokobanLevel(this.config, seed));
  }

  /** Starts an episode on a given level (hand-written levels in tests, solver checks). */
  load(level: SokobanLevel): string {
    this.level = level;
    this.boxAt = new Uint8Array(level.cells.length);
    for (const b of level.boxes) this.boxAt[b] = 1;
    this.player = level.player;
    this.boxesOnTarget = level.boxes.filter((b) => level.cells[b] === TARGET).length;
    this.steps = 0;
    this.deltas = [-level.width, level.width, -1, 1];
    this.ended = false;
    this.solved = false;
    return this.render();
  }

  step(action: string): StepResult {
    const level = this.current();
    if (this.ended) throw episodeOver(this.type);
    const move = MOVES.indexOf(action as (typeof MOVES)[number]);
    if (move < 0) throw new StarpoError(`sokoban: unknown action "${action}"; use matchAction() first`);
    const { cells } = level;
    const d = this.deltas[move] as number;
    const to = this.player + d;
    let reward = STEP_REWARD;
    let moved = false;
    let pushed = false;
    if (cells[to] !== WALL) {
      if (!this.boxAt[to]) moved = true;
      else if (cells[to + d] !== WALL && !this.boxAt[to + d]) {
        this.boxAt[to] = 0;
        this.boxAt[to + d] = 1;
        if (cells[to] === TARGET) {
          reward += BOX_OFF_TARGET;
          this.boxesOnTarget--;
        }
        if (cells[to + d] === TARGET) {
          reward += BOX_ON_TARGET;
          this.boxesOnTarget++;
        }
        moved = pushed = true;
      }
    }
    if (moved) this.player = to;
    this.steps++;
    if (this.boxesOnTarget === level.boxes.length) {
      reward += ALL_ON_TARGETS;
      this.ended = this.solved = true;
    } else if (this.steps >= this.config.maxSteps) this.ended = true;
    return {
      observation: this.render(),
      reward,
      done: this.ended,
      success: this.solved,
      info: { valid: true, effective: moved, pushed, boxesOnTarget: this.boxesOnTarget, steps: this.steps },
    };
  }

  render(): string {
    const level = this.current();
    const grid = () => renderRows(level, this.boxAt, this.player, this.symbols).join('\n');
    return formatObservation(this.config.observation, grid, () => this.coordinates(level));
  }

  /** RAGEN-2's entity lists: every target (covered or not), boxes off and on targets, the player (walls if asked). */
  private coordinates(level: SokobanLevel): string {
    const cells = Array.from(level.cells.keys());
    const box = (onTarget: boolean) => cells.filter((i) => this.boxAt[i] && (level.cells[i] === TARGET) === onTarget);
    const onTarget = level.cells[this.player] === TARGET;
    return coordinateText(level.height, level.width, [
      ['Walls', this.config.coordinateWalls ? cells.filter((i) => level.cells[i] === WALL) : []],
      ['Targets', cells.filter((i) => level.cells[i] === TARGET)],
      ['Boxes', box(false)],
      ['Boxes on target', box(true)],
      ['Player', onTarget ? [] : [this.player]],
      ['Player on target', onTarget ? [this.player] : []],
    ]);
  }

  anchor(): string {
    return this.render();
  }

  snapshot(): EnvSnapshot {
    const level = this.current();
    return {
      kind: 'grid',
      env: this.type,
      /** Standard symbols whatever the vocabulary: what renderers and the solver read. */
      grid: renderRows(level, this.boxAt, this.player, VOCABULARIES.standard),
      rows: renderRows(level, this.boxAt, this.player, this.symbols),
      steps: this.steps,
      boxes: level.boxes.length,
      boxesOnTarget: this.boxesOnTarget,
    };
  }

  private current(): SokobanLevel {
    if (!this.level) throw new StarpoError('sokoban: reset(seed) before use');
    return this.level;
  }
}
