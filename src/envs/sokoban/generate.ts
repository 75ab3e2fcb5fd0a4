import { StarpoError } from '../../errors.ts';
import type { Prng } from '../prng.ts';
import { FLOOR, TARGET, WALL, type SokobanLevel } from './level.ts';
import { boxDisplacement, walkPlayer } from './player-walk.ts';

/**
 * Level generation in two forms (`generator`):
 * - `gym-sokoban` (Schrader 2018):
 *   1. carve a room by a random walk that stamps small floor masks (direction change p = 0.35);
 *   2. put the player and the targets on random floor cells, boxes start on their targets;
 *   3. play backwards by depth-first search with a depth limit, trying 8 moves per state (4 that pull a
 *      box behind the player, 4 that only walk), and keep the state whose boxes moved farthest; a room
 *      whose boxes never leave their targets is rejected.
 * - `ragen` (RAGEN's ragen/env/sokoban/utils.py, the default): the same, except that the reverse search
 *   tries only the 4 pulling moves (a move with no box behind simply walks), and afterwards the player
 *   walks 1–3 random steps (player-walk.ts). Without that walk the player always stands next to the box it
 *   pulled last, and levels are markedly easier (src/envs/README.md has the measured statistics).
 * RAGEN retries a failed seed with Python's per-process string hash; here a rejected attempt continues the
 * seed's own random stream. Every random draw comes from the Prng, in a fixed order, so a seed gives one
 * level everywhere.
 */
export const SOKOBAN_GENERATORS = ['ragen', 'gym-sokoban'] as const;
export type SokobanGenerator = (typeof SOKOBAN_GENERATORS)[number];

export interface GenerateOptions {
  generator: SokobanGenerator;
  width: number;
  height: number;
  boxes: number;
  /** Depth limit of the reverse-play search (gym-sokoban's ttl; RAGEN's search_depth = 300). */
  searchDepth: number;
  /** Random-walk length; gym-sokoban/RAGEN use int(1.7 · (width + height)). */
  walkSteps?: number;
  /** Probability that the walk turns at a step. */
  pChangeDirection?: number;
}

/** gym-sokoban's cap on explored reverse-play states (a guard; 8×8 rooms with 2 boxes stay far below). */
const MAX_EXPLORED = 300_000;
/** Attempts before giving up; a rejected attempt continues the same random stream (deterministic). */
const MAX_ATTEMPTS = 1000;

// 3×3 floor stamps of the walk, row-major; the centre sits on the walk position.
const MASKS = [
  [0, 0, 0, 1, 1, 1, 0, 0, 0],
  [0, 1, 0, 0, 1, 0, 0, 1, 0],
  [0, 0, 0, 1, 1, 0, 0, 1, 0],
  [0, 0, 0, 1, 1, 0, 1, 1, 0],
  [0, 0, 0, 0, 1, 1, 0, 1, 0],
];
const WALK_DIRECTIONS: ReadonlyArray<readonly [number, number]> = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [0, -1],
];

export function generateLevel(rng: Prng, options: GenerateOptions): SokobanLevel {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const cells = carveRoom(rng, options);
    const placed = placeTargetsAndPlayer(rng, cells, options.boxes);
    if (!placed) continue;
    const moves = options.generator === 'ragen' ? 4 : 8;
    const level = reversePlay(cells, options.width, placed.targets, placed.player, options.searchDepth, moves);
    if (!level) continue;
    const generated = { ...level, height: options.height };
    if (options.generator === 'gym-sokoban') return generated;
    return { ...generated, player: walkPlayer(rng, generated, boxDisplacement(generated, placed.targets)) };
  }
  throw new StarpoError(`sokoban: no level with moved boxes after ${MAX_ATTEMPTS} attempts`, {
    details: { ...options },
  });
}

function carveRoom(rng: Prng, o: GenerateOptions): Uint8Array {
  const { width: w, height: h } = o;
  const steps = o.walkSteps ?? Math.floor(1.7 * (w + h));
  const pChange = o.pChangeDirection ?? 0.35;
  const cells = new Uint8Array(w * h);
  let direction = rng.pick(WALK_DIRECTIONS);
  let row = rng.range(1, h - 1);
  let col = rng.range(1, w - 1);
  for (let s = 0; s < steps; s++) {
    if (rng.float() < pChange) direction = rng.pick(WALK_DIRECTIONS);
    row = Math.max(Math.min(row + direction[0], h - 2), 1);
    col = Math.max(Math.min(col + direction[1], w - 2), 1);
    const mask = rng.pick(MASKS);
    for (let k = 0; k < 9; k++) if (mask[k]) cells[(row - 1 + Math.floor(k / 3)) * w + (col - 1 + (k % 3))] = FLOOR;
  }
  // The border is always wall.
  for (let c = 0; c < w; c++) cells[c] = cells[(h - 1) * w + c] = WALL;
  for (let r = 0; r < h; r++) cells[r * w] = cells[r * w + w - 1] = WALL;
  return cells;
}

function placeTargetsAndPlayer(
  rng: Prng,
  cells: Uint8Array,
  boxes: number,
): { player: number; targets: number[] } | null {
  const free: number[] = [];
  for (let i = 0; i < cells.length; i++) if (cells[i] === FLOOR) free.push(i);
  if (free.length <= boxes + 1) return null; // gym-sokoban: "not enough free spots"
  const player = free.splice(rng.int(free.length), 1)[0] as number;
  const targets: number[] = [];
  for (let b = 0; b < boxes; b++) {
    const t = free.splice(rng.int(free.length), 1)[0] as number;
    cells[t] = TARGET;
    targets.push(t);
  }
  return { player, targets };
}

/**
 * Reverse play from the solved state. Moves 0–3 pull (a box behind the player follows it),
 * moves 4–7 only walk, in gym-sokoban's order; `moves` = 4 tries the pulling moves only (RAGEN). A state
 * (player + box set) is searched once.
 * Score = box swaps × total box displacement; a state with a box on a target or the player on a
 * target scores 0 (gym-sokoban's rule). Deviation: gym-sokoban passes the old `last_pull` down the
 * recursion, so its "box swaps" count every pull; here they count changes of the pulled box, as
 * its comments intend (identical for one box).
 */
function reversePlay(
  cells: Uint8Array,
  width: number,
  targets: number[],
  player: number,
  searchDepth: number,
  moves: 4 | 8,
): Omit<SokobanLevel, 'height'> | null {
  const n = targets.length;
  const boxes = targets.slice();
  const boxAt = new Int16Array(cells.length).fill(-1);
  targets.forEach((t, b) => (boxAt[t] = b));
  const deltas = [-width, width, -1, 1];
  const explored = new Set<number>();
  const sorted = new Array<number>(n);
  let best = 0;
  let bestBoxes: number[] | null = null;
  let bestPlayer = player;

  const key = (): number => {
    for (let b = 0; b < n; b++) sorted[b] = boxes[b] as number;
    sorted.sort((a, b) => a - b);
    let k = player;
    for (let b = 0; b < n; b++) k = k * 256 + (sorted[b] as number);
    return k;
  };
  const score = (swaps: number): number => {
    if (cells[player] === TARGET) return 0;
    let moved = 0;
    for (let b = 0; b < n; b++) {
      const at = boxes[b] as number;
      const from = targets[b] as number;
      if (cells[at] === TARGET) return 0;
      moved += Math.abs(Math.floor(at / width) - Math.floor(from / width)) + Math.abs((at % width) - (from % width));
    }
    return swaps * moved;
  };
  const search = (ttl: number, swaps: number, lastPull: number): void => {
    ttl -= 1;
    if (ttl <= 0 || explored.size >= MAX_EXPLORED) return;
    const k = key();
    if (explored.has(k)) return;
    const s = score(swaps);
    if (s > best) {
      best = s;
      bestBoxes = boxes.slice();
      bestPlayer = player;
    }
    explored.add(k);
    for (let action = 0; action < moves; action++) {
      const d = deltas[action % 4] as number;
      const next = player + d;
      if (cells[next] === WALL || (boxAt[next] as number) >= 0) continue;
      const from = player;
      const behind = player - d;
      const pulled = action < 4 ? (boxAt[behind] as number) : -1;
      player = next;
      if (pulled >= 0) {
        boxAt[behind] = -1;
        boxAt[from] = pulled;
        boxes[pulled] = from;
      }
      search(ttl, pulled >= 0 && pulled !== lastPull ? swaps + 1 : swaps, pulled >= 0 ? pulled : lastPull);
      if (pulled >= 0) {
        boxAt[from] = -1;
        boxAt[behind] = pulled;
        boxes[pulled] = behind;
      }
      player = from;
    }
  };
  search(searchDepth, 0, -1);
  if (!bestBoxes) return null; // the boxes never left their targets: reject
  return { width, cells, boxes: bestBoxes, player: bestPlayer };
}
