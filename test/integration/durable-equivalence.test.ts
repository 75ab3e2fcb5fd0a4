import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { canonicalConfigJSON, resolveConfig, type RlConfig } from '../../src/rl/config.ts';
import { trainEmbedded } from '../../src/embedded/driver.ts';
import {
  createEventReader,
  createLocalEventReader,
  eventKey,
  replay,
  type EventReader,
  type StarpoEvent,
} from '../../src/events/index.ts';
import { createCheckpointStore } from '../../src/storage/index.ts';
import { followRun, startResume, submitRun } from '../../src/durable/client.ts';
import { startLocalStack, uniqueId, type LocalStack } from '../../src/durable/harness.ts';
import { createSealedRunReader } from '../../src/run/stored-run.ts';
import { evalCommand } from '../../src/cli/commands/eval.ts';
import { replayCommand } from '../../src/cli/commands/replay.ts';
import { loadReport } from '../../src/report/load.ts';
import { openSource } from '../../src/report/source.ts';
import { endpoints } from '../../src/endpoints.ts';
import { Kafka, logLevel } from 'kafkajs';
import type { DurableOptions } from '../../src/durable/protocol.ts';
import { paperConfig, writeTinyModel } from '../unit/rl/tiny-hf-model.ts';
import { realTokenizer } from '../unit/agent/real-tokenizers.ts';

Runtime.install({ logger: new DefaultLogger('WARN') });

const TINY = [
  'env=sokoban',
  'maxTurns=2',
  'envGroups=4',
  'groupSize=4',
  'iterations=2',
  'threads=1',
  'valSeeds=4',
  'valEvery=2',
  'modelLayers=1',
  'modelHidden=32',
  'modelFfn=64',
  'lrActor=1e-3',
  'maxResponseTokens=8',
];
// Tiny but complete: warm-start, critic, KL reference, top-std filter, two mini-batches, validation, each group's
// prompt packed (a tiny model would not pack by default).
const config = resolveConfig({
  preset: 'starpo-s',
  overrides: [
    ...TINY,
    'packPrefixes=on',
    'filterFraction=0.5',
    'miniBatchSize=4',
    'lrCritic=1e-3',
    'klCoef=0.001',
    'sftSteps=2',
    'sftEpisodes=8',
    'sftBatchSize=4',
  ],
});
// DAPO: dynamic sampling plays extra rounds of groups (an untrained model's returns are all equal).
const dapo = resolveConfig({
  preset: 'dapo',
  overrides: [...TINY, 'miniBatchSize=8', 'dynamicSamplingMaxTries=3', 'valSamples=2'],
});
// Tools: the warm-start's demonstrations and the rollouts call the worker's sandbox; OTC
// rescores whole groups per shard.
const tools = resolveConfig({
  preset: 'grpo',
  overrides: [
    'env=toolmath-multiply',
    'template=compact',
    'tools=code-inline',
    'toolReward=otc',
    'toolMaxCalls=2',
    'sftExtraToolCalls=1',
    'envGroups=4',
    'groupSize=4',
    'iterations=2',
    'threads=1',
    'valSeeds=4',
    'valEvery=2',
    'modelLayers=1',
    'modelHidden=32',
    'modelFfn=64',
    'modelContext=320',
    'maxResponseTokens=180',
    'sftSteps=60',
    'sftEpisodes=32',
    'sftBatchSize=8',
    'sftLr=3e-3',
    'klCoef=0',
    'miniBatchSize=8',
    'sandboxProcesses=1',
  ],
});

// Asynchronous (iteration i plays version i − 2) with truncated importance sampling; continue-as-new after every
// iteration, so rollouts under way are finished and carried into the next workflow run.
const asyncConfig = resolveConfig({
  file: JSON.parse(canonicalConfigJSON(config)),
  overrides: ['iterations=3', 'valEvery=3', 'asyncStaleness=1', 'offPolicyCorrection=tis'],
});

async function events(reader: EventReader, runId: string): Promise<StarpoEvent[]> {
  const out: StarpoEvent[] = [];
  for await (const e of replay(reader, runId)) out.push(e);
  await reader.close();
  return out;
}

/** Every event the reader holds for the run, as written (no replay: duplicates and superseded lineages too). */
async function raw(reader: EventReader, runId: string): Promise<StarpoEvent[]> {
  const out: StarpoEvent[] = [];
  for await (const e of reader.read(runId)) out.push(e);
  await reader.close();
  return out;
}

/**
 * The sealed copy in the run's store holds what the topic holds, event for event, and declares the lineages in the
 * same order. (Iterations are sealed in the order they began; an asynchronous run's topic interleaves them.)
 */
async function assertSealedAsKafka(stack: LocalStack, runId: string): Promise<void> {
  const kafka = await raw(createEventReader({ kind: 'kafka', ...stack.events }), runId);
  const sealed = await raw(createSealedRunReader(stack.storeUri), runId);
  const byKey = (es: StarpoEvent[]) => [...es].sort((a, b) => (eventKey(a) < eventKey(b) ? -1 : 1));
  assert.deepEqual(byKey(sealed), byKey(kafka));
  const starts = (es: StarpoEvent[]) => es.filter((e) => e.kind === 'run');
  assert.deepEqual(starts(sealed), starts(kafka));
  assert.ok(kafka.length > 0);
}

const metricsOf = (es: StarpoEvent[]) => es.flatMap((e) => (e.kind === 'iteration' ? [e.metrics] : []));
/** Every trajectory as split, iteration, group and index, with the policy version that played it. */
const playedBy = (es: StarpoEvent[]) =>
  es
    .flatMap((e) =>
      e.kind === 'trajectory' ? [`${e.split}${e.iteration}/${e.group}/${e.rolloutIndex}@${e.policyVersion}`] : [],
    )
    .sort();
const count = (es: StarpoEvent[], split: string) =>
  es.filter((e) => e.kind === 'trajectory' && e.split === split).length;
const references = new Map<RlConfig, Promise<{ root: string; embedded: StarpoEvent[] }>>();
/** The embedded run a test compares with (trained once per config). */
function embeddedRun(c: RlConfig) {
  if (!references.has(c)) {
    references.set(
      c,
      (async () => {
        const root = mkdtempSync(join(tmpdir(), 'starpo-embedded-'));
        await trainEmbedded({ root, runId: 'r', config: c });
        return { root, embedded: await events(createLocalEventReader({ root }), 'r') };
      })(),
    );
  }
  return references.get(c)!;
}

/** Every file of the durable checkpoint `at` (weights, optimizer moments, trainer state) equals the embedded one. */
async function assertSameCheckpoint(
  storeUri: string,
  runId: string,
  lineageId: string,
  root: string,
  at = 2,
): Promise<void> {
  const loaded = await createCheckpointStore(storeUri).load(runId, lineageId, at);
  assert.ok(loaded.files.some((f) => f.name === 'actor.model.safetensors'));
  for (const f of loaded.files) {
    const local = readFileSync(join(root, 'r', 'checkpoints', 'main', String(at).padStart(8, '0'), f.name));
    assert.ok(local.equals(f.bytes!), `${f.name} differs from the embedded run's`);
  }
}

async function assertSameAsEmbedded(
  c: RlConfig,
  label: string,
  extra: Partial<DurableOptions> = {},
): Promise<{ durable: StarpoEvent[]; runId: string; stack: LocalStack }> {
  const { root, embedded } = await embeddedRun(c);
  const stack = await startLocalStack({ label });
  try {
    const options = { queues: stack.queues, rolloutShards: 2, chunkGroups: 1, ...extra };
    const runId = uniqueId(label); // the workflow id is global on the shared server
    const { handle } = await submitRun(c, {
      client: stack.client,
      runId,
      storeUri: stack.storeUri,
      events: stack.events,
      options,
    });
    const outcome = await followRun(handle, () => undefined, 500);
    assert.equal(outcome.lastIteration, c.iterations);
    const durable = await events(createEventReader({ kind: 'kafka', ...stack.events }), runId);
    assert.deepEqual(metricsOf(durable), metricsOf(embedded));
    assert.equal(metricsOf(durable).length, c.iterations);
    assert.deepEqual(
      [count(durable, 'train'), count(durable, 'val')],
      [count(embedded, 'train'), count(embedded, 'val')],
    );
    assert.deepEqual(playedBy(durable), playedBy(embedded));
    await assertSameCheckpoint(stack.storeUri, runId, 'main', root, c.iterations);
    await assertSealedAsKafka(stack, runId);
    return { durable, runId, stack };
  } finally {
    await stack.close();
  }
}

test('the durable driver ends with the weights and metrics of the embedded driver', { timeout: 240_000 }, async () => {
  const { durable, runId, stack } = await assertSameAsEmbedded(config, 'equiv');
  assert.deepEqual([count(durable, 'train'), count(durable, 'val')], [2 * 4 * 4, 4]);
  // Kafka's copy lost (the topic deleted): replay, report and eval read the run from its store alone.
  const admin = new Kafka({ brokers: endpoints.kafka.brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [stack.events.topic!] });
  await admin.disconnect();
  const flags = { runsDir: 'runs', select: 'successful', split: 'all', json: true, topic: stack.events.topic };
  await assert.rejects(
    replayCommand(runId, { ...flags, source: 'kafka' }, () => undefined),
    /no events in Kafka/,
  );
  const lines: string[] = [];
  assert.equal(await replayCommand(runId, { ...flags, source: 's3', store: stack.storeUri }, (l) => lines.push(l)), 0);
  const summary = JSON.parse(lines.at(-1)!) as { type: string; trajectories: number };
  assert.deepEqual([summary.type, summary.trajectories], ['summary', 2 * 4 * 4 + 4]);
  const report = await loadReport(openSource([runId], { kind: 's3', storeUri: stack.storeUri }));
  assert.deepEqual(
    report.runs[0]!.iterations.map((p) => p.iteration),
    [1, 2],
  );
  const evaluated = await evalCommand(
    { checkpoint: runId, runsDir: 'runs', source: 's3', store: stack.storeUri },
    () => undefined,
  );
  assert.deepEqual([evaluated.checkpoint, evaluated.seeds], [{ runId, lineageId: 'main', iteration: 2 }, 4]);
});

test(
  'with DAPO dynamic sampling too (extra sampling rounds, then the filter among informative groups)',
  { timeout: 240_000 },
  async () => {
    const { durable } = await assertSameAsEmbedded(dapo, 'dapo');
    assert.ok(count(durable, 'train') > 2 * 4 * 4, "the untrained policy's all-equal groups must trigger extra rounds");
  },
);

test('a tool run (sandbox calls, OTC reward) trains the same durable as embedded', { timeout: 240_000 }, async () => {
  const { durable } = await assertSameAsEmbedded(tools, 'tools');
  const calls = durable.flatMap((e) => (e.kind === 'trajectory' ? e.turns.flatMap((t) => t.toolCalls) : []));
  assert.ok(
    calls.some((c) => c.executed),
    'the warm-started model calls the sandbox',
  );
});

test(
  'a durable run stopped after iteration 1 and resumed as a new lineage reproduces the uninterrupted run',
  { timeout: 240_000 },
  async () => {
    const { root, embedded } = await embeddedRun(config);
    const stack = await startLocalStack({ label: 'resume' });
    try {
      const runId = uniqueId('resume');
      const where = { client: stack.client, runId, storeUri: stack.storeUri, events: stack.events };
      const options = { queues: stack.queues };
      const first = await submitRun(config, { ...where, options, stopAfter: 1 });
      assert.equal((await followRun(first.handle, () => undefined, 500)).lastIteration, 1);
      const resumed = await startResume(runId, 1, { client: stack.client });
      assert.equal(resumed.parentLineageId, 'main');
      assert.equal((await followRun(resumed.handle, () => undefined, 500)).lastIteration, 2);
      const durable = await events(createEventReader({ kind: 'kafka', ...stack.events }), runId);
      assert.deepEqual(metricsOf(durable), metricsOf(embedded));
      const runs = durable
        .filter((e) => e.kind === 'run')
        .map((e) => e.kind === 'run' && [e.action, e.parentLineageId, e.fromIteration]);
      assert.deepEqual(runs, [
        ['STARTED', null, 0],
        ['RESUMED', 'main', 1],
      ]);
      await assertSameCheckpoint(stack.storeUri, runId, resumed.run.lineageId, root);
      await assertSealedAsKafka(stack, runId);
      assert.deepEqual(await events(createSealedRunReader(stack.storeUri), runId), durable);
    } finally {
      await stack.close();
    }
  },
);

test(
  'an asynchronous run (staleness 1, TIS, rollouts carried across continue-as-new) trains the same durable as embedded',
  { timeout: 300_000 },
  async () => {
    const { durable } = await assertSameAsEmbedded(asyncConfig, 'async', { continueAsNewEvery: 1 });
    const versions = [...new Set(playedBy(durable).map((t) => t.replace(/\/.*@/, '@')))];
    assert.deepEqual(versions, ['train1@0', 'train2@0', 'train3@1', 'val3@3']);
    assert.ok(metricsOf(durable).every((m) => m['tis/ratio_mean'] > 0));
  },
);

test(
  'an asynchronous durable run stopped after iteration 2 resumes as a new lineage ' +
    'playing the versions checkpoint 2 names',
  { timeout: 300_000 },
  async () => {
    const { root, embedded } = await embeddedRun(asyncConfig);
    const stack = await startLocalStack({ label: 'async-resume' });
    try {
      const runId = uniqueId('async-resume');
      const where = { client: stack.client, runId, storeUri: stack.storeUri, events: stack.events };
      const first = await submitRun(asyncConfig, { ...where, options: { queues: stack.queues }, stopAfter: 2 });
      assert.equal((await followRun(first.handle, () => undefined, 500)).lastIteration, 2);
      const resumed = await startResume(runId, 2, { client: stack.client });
      assert.equal((await followRun(resumed.handle, () => undefined, 500)).lastIteration, 3);
      const durable = await events(createEventReader({ kind: 'kafka', ...stack.events }), runId);
      assert.deepEqual(metricsOf(durable), metricsOf(embedded));
      assert.deepEqual(playedBy(durable), playedBy(embedded));
      await assertSameCheckpoint(stack.storeUri, runId, resumed.run.lineageId, root, 3);
    } finally {
      await stack.close();
    }
  },
);

// The paper's config on the real tokenizer and chat template, with the compact environment prompt: the words do not
// change what is compared, and RAGEN's full prompt triples every sequence over a 151,936-token head.
const COMPACT = ['template=compact'];

test(
  'a pretrained model (tiny Qwen3, real tokenizer and chat template) trains the same durable as embedded',
  { timeout: 600_000 },
  async () => {
    const model = await writeTinyModel(mkdtempSync(join(tmpdir(), 'starpo-qwen3-')), 'qwen3', { dtype: 'BF16' });
    const { durable } = await assertSameAsEmbedded(paperConfig(model, COMPACT), 'pretrained');
    const trained = durable.flatMap((e) => (e.kind === 'trajectory' ? [e] : []));
    const qwen3 = realTokenizer('qwen3');
    assert.ok(trained.every((t) => /^<\|im_start\|>(system|user)\n/.test(qwen3.decode(t.tokenIds))));
    assert.ok(trained.every((t) => t.tokenRoles.length === t.tokenIds.length));
  },
);

test(
  'a LoRA run on a pretrained base trains the same durable as embedded (adapters only in the checkpoints)',
  { timeout: 600_000 },
  async () => {
    const model = await writeTinyModel(mkdtempSync(join(tmpdir(), 'starpo-qwen3-')), 'qwen3', { dtype: 'BF16' });
    await assertSameAsEmbedded(
      paperConfig(model, [...COMPACT, 'loraRank=4', 'loraAlpha=8', 'lrActor=3e-3', 'klCoef=0.001']),
      'lora',
    );
  },
);
