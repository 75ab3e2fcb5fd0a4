/**
 * The tool protocol of a rollout (docs/spec.md §6): one assistant turn for a batch of episodes, where generation
 * pauses at a tool call, the tool runs, its result is appended as template ids (loss mask 0), and
 * generation resumes inside the same turn. Each round is one batched `generate` call over the rows still
 * writing, so it drops in where a rollout makes its single per-turn call:
 *   const rows = await generateWithTools(policy.generate.bind(policy), request, executors, tokenizer, options);
 * A row's first round uses the request's own seed, so a turn without calls samples exactly what the
 * plain call would have sampled. At most `maxCalls` calls run per turn; later calls are left unrun
 * (after one optional notice). A call is never run when the model's token budget is used up by it,
 * so a turn always ends on a model-written token.
 */
import type { TextTokenizer } from '../agent/types.ts';
import { ConfigError } from '../errors.ts';
import type { FoundCall, ToolFormat } from './formats.ts';
import { KEEP_CHARS, showResult } from './output.ts';
import { firstStop, ToolRow, type ToolGeneration } from './turn-row.ts';
import type { ToolCall, ToolCallRecord, ToolExecutor } from './types.ts';
import type { ToolResult } from '../envs/tool-provider.ts';
import type { RolloutGeneration, RolloutRequest } from '../policy/engine/handle.ts';

export type { ToolGeneration } from './turn-row.ts';

/**
 * The fields of a rollout's generation request the protocol reads or rewrites (to the turn's stops, the chat
 * format's, it adds the format's call stops); the others pass through.
 */
export type ToolTurnRequest = Pick<RolloutRequest, 'prompts' | 'maxNewTokens' | 'rowSeeds' | 'stopStrings'>;

export interface ToolTurnOptions {
  format: ToolFormat;
  /** C: calls run per response (per assistant turn). */
  maxCalls: number;
  /** Append one notice (as a tool result) at the first call past the limit. Default false. */
  limitNotice?: boolean;
  /** Characters kept at each end of a long result (default 128). */
  keepChars?: number;
  /** The model's context: a row stops ('length') before its context would overflow. */
  maxContext?: number;
}

/**
 * Plays one assistant turn with tools for every prompt of `request` (`executors[i]` serves row i). Rows whose
 * call is running sit out; every other row writes on: a round's generate call takes the rows ready when it
 * starts, so a slow call holds back only its own row. When every writing row is waiting for a call, the next
 * round waits for the first call to finish and then, for as long again as that one took, for the others of
 * its batch (calls of similar length still resume together). What a row writes depends on its own prompt,
 * seed and budget only (rows are independent in a generate call; src/policy/engine/README.md), and each
 * row's round r uses roundSeed(seed, r) whatever it was batched with: the tokens are those of the lockstep
 * schedule (every row waits for every call) bit for bit, and only the batching follows the timing.
 */
export async function generateWithTools<R extends ToolTurnRequest>(
  generate: (request: R) => Promise<RolloutGeneration[]>,
  request: R,
  executors: readonly ToolExecutor[],
  tokenizer: TextTokenizer,
  options: ToolTurnOptions,
): Promise<ToolGeneration[]> {
  checkOptions(request, executors, options);
  const rows = request.prompts.map((p, i) => new ToolRow(p, request.rowSeeds[i] as number, tokenizer));
  const calls = new RunningCalls();
  for (;;) {
    for (const [i, row] of rows.entries())
      if (!row.done && !calls.has(i) && room(row, request, options) <= 0) row.end('length', request.stopStrings);
    const ready = rows.flatMap((row, i) => (row.done || calls.has(i) ? [] : [i]));
    if (ready.length === 0) {
      if (calls.size === 0) break;
      await calls.settle();
      continue;
    }
    const generations = await generate({
      ...request,
      prompts: ready.map((i) => rows[i]!.nextPrompt()),
      maxNewTokens: Math.max(...ready.map((i) => room(rows[i]!, request, options))),
      rowSeeds: ready.map((i) => roundSeed(rows[i]!.seed, rows[i]!.rounds)),
      stopStrings: [...request.stopStrings, ...options.format.stopStrings],
    });
    for (const [k, i] of ready.entries()) {
      const row = rows[i]!;
      const call = absorb(row, generations[k] as RolloutGeneration, request, options);
      if (call) calls.start(i, runCall(row, call, executors[i] as ToolExecutor, request, options));
    }
  }
  return rows.map((r) => r.result());
}

/** The calls under way, by row; `settle` waits for the first, then as long again for the rest. */
class RunningCalls {
  private readonly running = new Map<number, { done: Promise<void>; startedMs: number }>();

  get size(): number {
    return this.running.size;
  }

  has(row: number): boolean {
    return this.running.has(row);
  }

  start(row: number, call: Promise<void>): void {
    const done = call.finally(() => this.running.delete(row));
    done.catch(() => undefined); // a failure surfaces in settle()
    this.running.set(row, { done, startedMs: performance.now() });
  }

  async settle(): Promise<void> {
    const started = Math.min(...[...this.running.values()].map((c) => c.startedMs));
    await Promise.race([...this.running.values()].map((c) => c.done));
    const waited = performance.now() - started;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const window = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waited);
    });
    await Promise.race([Promise.all([...this.running.values()].map((c) => c.done)), window]).finally(() =>
      clearTimeout(timer),
    );
  }
}

function checkOptions(request: ToolTurnRequest, executors: readonly ToolExecutor[], options: ToolTurnOptions): void {
  if (!Number.isInteger(options.maxCalls) || options.maxCalls < 0) {
    throw new ConfigError('tools.maxCalls', `must be a non-negative integer, got ${options.maxCalls}`);
  }
  if (executors.length !== request.prompts.length) {
    const why = `need one executor per prompt (${request.prompts.length}), got ${executors.length}`;
    throw new ConfigError('tools.executors', why);
  }
}

/** Tokens the model may still write in this turn: its budget, and what is left of the context. */
function room(row: ToolRow, request: ToolTurnRequest, options: ToolTurnOptions): number {
  const budget = request.maxNewTokens - row.written;
  return options.maxContext === undefined ? budget : Math.min(budget, options.maxContext - row.contextLength);
}

/** Round 0 keeps the request's seed; later rounds derive theirs (a fixed 32-bit mix, the same everywhere). */
export function roundSeed(seed: number, round: number): number {
  if (round === 0) return seed;
  let h = Math.imul((seed >>> 0) ^ Math.imul(round, 0x9e3779b9), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Appends one round's tokens to its row (cut to the row's own budget: the batch asked for the largest),
 * then decides: the turn ended, a call is waiting to run, or generation simply resumes (null either way
 * but the call). The stop is looked for in this round's text only; the call in the whole model segment,
 * which may span rounds (the inline format pauses at its opening fence too).
 */
function absorb(
  row: ToolRow,
  g: RolloutGeneration,
  request: ToolTurnRequest,
  options: ToolTurnOptions,
): FoundCall | null {
  row.rounds++;
  const allowed = room(row, request, options);
  const ids = g.tokens.length > allowed ? g.tokens.slice(0, allowed) : g.tokens;
  row.addModel(ids, g.logprobs, g.entropies);
  if (ids.length < g.tokens.length || g.finishReason === 'length') {
    row.end('length', request.stopStrings);
    return null;
  }
  const stop = firstStop(row.decode(ids), request.stopStrings, options.format.stopStrings);
  if (!stop || !stop.tool) {
    row.end('stop', request.stopStrings);
    return null;
  }
  // Most pauses that hold no call are ruled out on the text since the previous pause; only the rest pay
  // for decoding the whole segment (which a call then ends): linear in the turn's length.
  if (options.format.lastCall(row.windowText()) === null) return null;
  return options.format.lastCall(row.segmentText());
}

/** Runs (or declines) the call a row paused at and appends what the model is shown. */
async function runCall(
  row: ToolRow,
  found: FoundCall,
  executor: ToolExecutor,
  request: ToolTurnRequest,
  options: ToolTurnOptions,
): Promise<void> {
  row.markCall(found);
  const { executed } = row;
  if (executed >= options.maxCalls || room(row, request, options) <= 0) {
    row.calls.push(record(found.call, null, ''));
    if (executed >= options.maxCalls && options.limitNotice && !row.noticeGiven) {
      row.noticeGiven = true;
      append(row, `tool call limit reached (${options.maxCalls} per response); the call was not run`, request, options);
    }
    if (!row.done) row.splitSegment();
    return;
  }
  row.executed++;
  const result = await execute(executor, found.call);
  const shown = showResult(result, options.keepChars ?? KEEP_CHARS);
  row.calls.push(record(found.call, result, shown));
  append(row, shown, request, options);
}

/** Appends a result block as template ids, unless it would leave no room in the context for the model. */
function append(row: ToolRow, shown: string, request: ToolTurnRequest, options: ToolTurnOptions): void {
  const text = options.format.wrapResult(shown);
  const ids = row.encode(text);
  if (options.maxContext !== undefined && row.contextLength + ids.length + 1 > options.maxContext) {
    row.end('length', request.stopStrings);
    return;
  }
  row.addToolText(ids, text);
}

/** Runs a call; an unparsable call or an executor that throws becomes a failed result, never an exception. */
async function execute(executor: ToolExecutor, call: ToolCall): Promise<ToolResult> {
  if (call.kind === 'invalid') {
    return { ok: false, output: '', error: `invalid tool call: ${call.reason}`, errorKind: 'parse' };
  }
  try {
    return await executor.execute(call);
  } catch (err) {
    return { ok: false, output: '', error: `tool error: ${(err as Error).message}`, errorKind: 'executor' };
  }
}

/** The record of a call; `result` null = written but not run. */
export function record(call: ToolCall, result: ToolResult | null, shown: string): ToolCallRecord {
  const base =
    call.kind === 'code'
      ? { kind: call.kind, name: 'js', arguments: { code: call.code } }
      : call.kind === 'function'
        ? { kind: call.kind, name: call.name, arguments: call.arguments }
        : { kind: call.kind, name: '', arguments: null };
  if (!result) return { ...base, executed: false, ok: false, shown };
  const kind = result.errorKind ? { errorKind: result.errorKind } : {};
  return { ...base, executed: true, ok: result.ok, shown, ...kind };
}
