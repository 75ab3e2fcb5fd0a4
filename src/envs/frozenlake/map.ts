import { StarpoError } from '../../errors.ts';
import type { Prng } from '../prng.ts';

/**
 * A FrozenLake map: `size`×`size` cells, index = row * size + col. As in RAGEN's generator, each
 * tile is frozen with probability `pFrozen` (else a hole), start and goal are distinct random cells
 * (always frozen), and the map is redrawn until a hole-free path joins them.
 */
export interface LakeMap {
  size: number;
  /** 1 where the cell is a hole. */
  holes: Uint8Array;
  start: number;
  goal: number;
}

/** Actions in gym's order: the slip rule (a − 1, a, a + 1 mod 4) relies on it. */
export const LAKE_ACTIONS = ['Left', 'Down', 'Right', 'Up'] as const;
const ROW_DELTA = [0, 1, 0, -1];
const COL_DELTA = [-1, 0, 1, 0];

const MAX_DRAWS = 10_000;

export function generateLakeMap(rng: Prng, size: number, pFrozen: number): LakeMap {
  const n = size * size;
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const holes = new Uint8Array(n);
    for (let i = 0; i < n; i++) holes[i] = rng.float() < pFrozen ? 0 : 1;
    const start = rng.int(n);
    let goal = rng.int(n - 1);
    if (goal >= start) goal++;
    holes[start] = holes[goal] = 0;
    const map = { size, holes, start, goal };
    if (hasPath(map)) return map;
  }
  throw new StarpoError(`frozenlake: no solvable map after ${MAX_DRAWS} draws`, { details: { size, pFrozen } });
}

/** Cell reached from `cell` moving in `direction` (an index into LAKE_ACTIONS); the edge keeps you in place. */
export function moveOnLake(size: number, cell: number, direction: number): number {
  const row = Math.floor(cell / size) + (ROW_DELTA[direction] as number);
  const col = (cell % size) + (COL_DELTA[direction] as number);
  if (row < 0 || row >= size || col < 0 || col >= size) return cell;
  return row * size + col;
}

/** Whether the goal can be reached from the start without stepping on a hole. */
export function hasPath(map: LakeMap): boolean {
  const seen = new Uint8Array(map.holes.length);
  const queue = [map.start];
  seen[map.start] = 1;
  for (let q = 0; q < queue.length; q++) {
    const cell = queue[q] as number;
    if (cell === map.goal) return true;
    for (let d = 0; d < 4; d++) {
      const next = moveOnLake(map.size, cell, d);
      if (seen[next] || map.holes[next]) continue;
      seen[next] = 1;
      queue.push(next);
    }
  }
  return false;
}

/** Map from rows of symbols: `_` frozen, `O` hole, `G` goal, and `P`/`X`/`√` for the player (tests, snapshots). */
export function parseLakeMap(rows: readonly string[], start?: number): LakeMap {
  const size = rows.length;
  const holes = new Uint8Array(size * size);
  let player = -1;
  let goal = -1;
  rows.forEach((row, r) => {
    const cells = Array.from(row);
    if (cells.length !== size) throw new StarpoError(`frozenlake map: row ${r} is not ${size} cells long`);
    cells.forEach((ch, c) => {
      const i = r * size + c;
      if (ch === 'O' || ch === 'X') holes[i] = 1;
      if (ch === 'G' || ch === '√') goal = i;
      if (ch === 'P' || ch === 'X' || ch === '√') player = i;
      if (!'_OGPX√'.includes(ch)) throw new StarpoError(`frozenlake map: unknown symbol "${ch}"`);
    });
  });
  if (goal < 0) throw new StarpoError('frozenlake map: no goal');
  const from = start ?? player;
  if (from < 0) throw new StarpoError('frozenlake map: no player');
  return { size, holes, start: from, goal };
}
