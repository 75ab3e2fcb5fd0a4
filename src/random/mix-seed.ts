/**
 * A 32-bit seed derived from a base seed and a few integers (e.g. group, rollout index, turn): a fixed
 * multiply-xor mix in 32-bit integer arithmetic, so it is the same on every machine and every attempt.
 * The rollout seeds each episode's sampling per turn with it, the agent gateway each model call.
 */
export function mixSeed(seed: number, parts: readonly number[]): number {
  let h = seed >>> 0;
  for (const x of parts) h = Math.imul(h ^ (x + 0x9e3779b9), 0x85ebca6b) >>> 0;
  return (h ^ (h >>> 15)) >>> 0;
}
