import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GenerationBatcher, type GenerationRow } from '../../../src/gateway/batcher.ts';
import type { GenerationBackend } from '../../../src/policy/engine/handle.ts';
import { startGateway } from '../../../src/gateway/server.ts';
import { qwen3Chat, tokenizer } from './fixtures.ts';

/**
 * Answers each row with [prompt length, seed]; records the rows of every call; `wait` ms per call, or until the test
 * opens `gate` (a call then returns when the test says, however fast or slow the machine).
 */
function echo(wait: number | Promise<unknown> = 0, fail = false): GenerationBackend & { batches: number[][] } {
  const backend = {
    batches: [] as number[][],
    async generate(req: Parameters<GenerationBackend['generate']>[0]) {
      backend.batches.push(req.prompts.map((p) => p.length));
      await (typeof wait === 'number' ? new Promise((r) => setTimeout(r, wait)) : wait);
      if (fail) throw new Error('engine down');
      const finishReason = 'length' as const;
      return req.prompts.map((p, i) => ({ tokens: [p.length, req.rowSeeds[i]], logprobs: [0, 0], finishReason }));
    },
  };
  return backend;
}

/** A promise the test resolves. */
function opened(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const row = (n: number, seed: number, maxNewTokens = 4): GenerationRow => ({
  prompt: Array(n).fill(1),
  maxNewTokens,
  sampling: { temperature: 1 },
  seed,
  stopStrings: [],
  stopTokenIds: [],
});

test('calls arriving together share a generate call, each row its own seed; other settings get their own', async () => {
  const backend = echo(20);
  const batcher = new GenerationBatcher(backend);
  const first = await Promise.all([row(1, 7), row(2, 8), row(3, 9, 5)].map((r) => batcher.generate(r)));
  assert.deepEqual(
    first.map((g) => g.tokens),
    [
      [1, 7],
      [2, 8],
      [3, 9],
    ],
  );
  assert.deepEqual(backend.batches, [[1, 2], [3]]);
});

test('a call arriving while a batch runs waits for the next one; a failed batch rejects only its own calls', async () => {
  const gate = opened();
  const backend = echo(gate.promise);
  const batcher = new GenerationBatcher(backend);
  const early = batcher.generate(row(1, 1));
  while (backend.batches.length === 0) await new Promise((r) => setTimeout(r, 1)); // the first batch runs
  const late = [batcher.generate(row(2, 2)), batcher.generate(row(3, 3))];
  gate.resolve();
  await Promise.all([early, ...late]);
  assert.deepEqual(backend.batches, [[1], [2, 3]]);
  await assert.rejects(new GenerationBatcher(echo(0, true)).generate(row(1, 1)), /engine down/);
});

test('a reply whose client went away before receiving it is dropped from the episode', async () => {
  const gate = opened();
  const backend = echo(gate.promise);
  const gateway = await startGateway({
    backend,
    tokenizer,
    chat: qwen3Chat(),
    modelName: 'm',
    maxContext: 512,
    defaultMaxTokens: 4,
    openEpisodes: true,
  });
  try {
    const body = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] });
    const post = (signal?: AbortSignal) =>
      fetch(`${gateway.url}/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer k' },
        body,
        signal,
      });
    const abort = new AbortController();
    const gone = post(abort.signal);
    while (backend.batches.length === 0) await new Promise((r) => setTimeout(r, 5));
    abort.abort(); // while the reply is being generated
    await assert.rejects(gone);
    // The reply comes once the server has seen the socket close (a loopback event, well under this).
    await new Promise((r) => setTimeout(r, 300));
    gate.resolve();
    const episode = gateway.episodes.find('k')!;
    await episode.settled();
    assert.equal(episode.calls.length, 0);
    assert.equal((await post()).status, 200);
    assert.deepEqual(
      episode.calls.map((c) => c.ordinal),
      [1],
    );
  } finally {
    await gateway.close();
  }
});
