import { TARGET, WALL, type SokobanLevel } from './level.ts';

/**
 * Optimal Sokoban solver: breadth-first search over (player, box set) states, one edge per move
 * (walks and pushes both cost one step, as in the environment), so the first solved state found
 * is a shortest solution. States are packed into one number (8 bits per cell index; levels have
 * at most 256 cells and 5 boxes). Boxes pushed onto a dead cell — one from which no target can be
 * reached even without other boxes — are pruned, which never removes a solution.
 */
export const MOVES = ['Up', 'Down', 'Left', 'Right'] as const;
export type Move = (typeof MOVES)[number];

export interface SolveOptions {
  /** Longest solution searched for, in moves (the environment's step cap is 100). */
  maxDepth?: number;
  /** Explored-state cap; null is returned when it is hit before a solution. */
  maxStates?: number;
}

export function solveSokoban(level: SokobanLevel, options: SolveOptions = {}): Move[] | null {
  const maxDepth = options.maxDepth ?? 100;
  const maxStates = options.maxStates ?? 2_000_000;
  const { width, cells } = level;
  const n = level.boxes.length;
  const deltas = [-width, width, -1, 1];
  const live = liveCells(level);
  const isSolved = (boxes: ArrayLike<number>): boolean => {
    for (let b = 0; b < n; b++) if (cells[boxes[b] as number] !== TARGET) return false;
    return true;
  };
  const start = sortedBoxes(level.boxes);
  if (isSolved(start)) return [];

  // Flat state storage: player, boxes (n per state), parent index, move, depth.
  const players: number[] = [level.player];
  const boxStore: number[] = [...start];
  const parents: number[] = [-1];
  const moves: number[] = [-1];
  const depths: number[] = [0];
  const seen = new Set<number>([packState(level.player, start)]);
  const occupied = new Uint8Array(cells.length);
  const next = new Array<number>(n);
  for (let head = 0; head < players.length; head++) {
    const depth = depths[head] as number;
    if (depth >= maxDepth) continue;
    const player = players[head] as number;
    const base = head * n;
    for (let b = 0; b < n; b++) occupied[boxStore[base + b] as number] = 1;
    for (let m = 0; m < 4; m++) {
      const d = deltas[m] as number;
      const to = player + d;
      if (cells[to] === WALL) continue;
      for (let b = 0; b < n; b++) next[b] = boxStore[base + b] as number;
      if (occupied[to]) {
        const beyond = to + d;
        if (cells[beyond] === WALL || occupied[beyond] || !live[beyond]) continue;
        next[next.indexOf(to)] = beyond;
        next.sort((a, c) => a - c);
      }
      const key = packState(to, next);
      if (seen.has(key)) continue;
      seen.add(key);
      players.push(to);
      boxStore.push(...next);
      parents.push(head);
      moves.push(m);
      depths.push(depth + 1);
      if (isSolved(next)) {
        for (let b = 0; b < n; b++) occupied[boxStore[base + b] as number] = 0;
        return unwind(players.length - 1, parents, moves);
      }
    }
    for (let b = 0; b < n; b++) occupied[boxStore[base + b] as number] = 0;
    if (seen.size > maxStates) return null;
  }
  return null;
}

function unwind(index: number, parents: number[], moves: number[]): Move[] {
  const path: Move[] = [];
  for (let i = index; (parents[i] as number) >= 0; i = parents[i] as number)
    path.push(MOVES[moves[i] as number] as Move);
  return path.reverse();
}

function sortedBoxes(boxes: readonly number[]): number[] {
  return boxes.slice().sort((a, b) => a - b);
}

function packState(player: number, sortedBoxPositions: ArrayLike<number>): number {
  let k = player;
  for (let b = 0; b < sortedBoxPositions.length; b++) k = k * 256 + (sortedBoxPositions[b] as number);
  return k;
}

/**
 * Cells a lone box can be pushed from onto some target: found backwards by pulling from every
 * target (a pull from p to p+d needs floor at p+d and p+2d for the player).
 */
export function liveCells(level: SokobanLevel): Uint8Array {
  const { width, cells } = level;
  const live = new Uint8Array(cells.length);
  const queue: number[] = [];
  for (let i = 0; i < cells.length; i++)
    if (cells[i] === TARGET) {
      live[i] = 1;
      queue.push(i);
    }
  for (let q = 0; q < queue.length; q++) {
    const p = queue[q] as number;
    for (const d of [-width, width, -1, 1]) {
      const to = p + d;
      if (live[to] || cells[to] === WALL || cells[to + d] === WALL) continue;
      live[to] = 1;
      queue.push(to);
    }
  }
  return live;
}
