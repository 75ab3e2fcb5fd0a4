/** Test helpers for the tool rewards: calls and samples from literals. */
import type { Json } from '../../../src/envs/types.ts';
import type { RewardCall, ToolSample } from '../../../src/rl/rewards/types.ts';

export function fnCall(name: string, args: { [key: string]: Json }, ok = true, executed = true): RewardCall {
  return { kind: 'function', name, arguments: args, executed, ok };
}

export function codeCall(ok: boolean, executed = true): RewardCall {
  return { kind: 'code', name: 'js', arguments: { code: 'x' }, executed, ok };
}

export const INVALID: RewardCall = { kind: 'invalid', name: '', arguments: null, executed: true, ok: false };

export function sample(
  correct: boolean,
  calls: RewardCall[],
  response = '',
  expectedCalls?: ToolSample['expectedCalls'],
): ToolSample {
  return { response, calls, correct, ...(expectedCalls ? { expectedCalls } : {}) };
}
