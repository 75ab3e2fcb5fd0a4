import type { Prng } from '../prng.ts';
import { WALL, type SokobanLevel } from './level.ts';

/**
 * RAGEN's last generation step (add_random_player_movement): after reverse play the player stands next
 * to the box it pulled last, so it walks away first. With probability 0.8 when the boxes were displaced
 * by one cell in total (else 0.5) it takes 1–3 steps: each step goes to a uniformly chosen neighbour
 * (in the order up, down, left, right) that is floor or an empty target, holds no box and was not
 * visited in this walk; after each step it stops with probability 0.5, after 3 steps or when no
 * neighbour qualifies. The draws follow RAGEN's order: one to decide whether to walk, then per step
 * one choice and (below 3 steps) one to decide whether to go on.
 */
const MAX_STEPS = 3;
const CONTINUE_PROBABILITY = 0.5;

/** Σ over boxes of the Manhattan distance from the target it started on (RAGEN's box_displacement_score). */
export function boxDisplacement(level: SokobanLevel, targets: readonly number[]): number {
  const w = level.width;
  let total = 0;
  level.boxes.forEach((at, b) => {
    const from = targets[b] as number;
    total += Math.abs(Math.floor(at / w) - Math.floor(from / w)) + Math.abs((at % w) - (from % w));
  });
  return total;
}

/** The player's cell after the walk (the level itself is not changed). */
export function walkPlayer(rng: Prng, level: SokobanLevel, displacement: number): number {
  const moveProbability = displacement === 1 ? 0.8 : 0.5;
  // RAGEN: `if random.random() > move_probability: return` — the player stays.
  if (rng.float() > moveProbability) return level.player;
  const boxAt = new Set(level.boxes);
  const deltas = [-level.width, level.width, -1, 1];
  const visited = [level.player];
  let player = level.player;
  for (let steps = 0; steps < MAX_STEPS;) {
    const options = deltas
      .map((d) => player + d)
      .filter((next) => level.cells[next] !== WALL && !boxAt.has(next) && !visited.includes(next));
    if (options.length === 0) break;
    player = rng.pick(options);
    visited.push(player);
    steps++;
    if (steps >= MAX_STEPS || rng.float() > CONTINUE_PROBABILITY) break;
  }
  return player;
}
