import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextLineageId } from '../../../src/events/lineage.ts';
import { continuePlan, forkPlan, withoutForkPoints, type ResumePlan } from '../../../src/run/resume-plan.ts';
import { applyRetention, type CheckpointInfo, type CheckpointStore } from '../../../src/storage/index.ts';

const ckpt = (lineageId: string, iteration: number): CheckpointInfo => ({
  runId: 'r',
  lineageId,
  iteration,
  uri: `file:///x/${lineageId}/${iteration}/`,
  manifestUri: '',
});
const main = { lineageId: 'main', parentLineageId: null, fromIteration: 0 };
const r1 = { lineageId: 'r1', parentLineageId: 'main', fromIteration: 2 };
const at = (p: ResumePlan) => `${p.lineageId}<-${p.from.lineageId}@${p.from.iteration}`;

test('continuing a plain run loads its newest checkpoint', () => {
  assert.equal(at(continuePlan('r', [main], [ckpt('main', 3), ckpt('main', 4)])), 'main<-main@4');
});

test("continuing after a fork ignores the abandoned lineage's later checkpoints", () => {
  const plan = continuePlan('r', [main, r1], [ckpt('main', 2), ckpt('main', 5), ckpt('r1', 3)]);
  assert.equal(at(plan), 'r1<-r1@3');
  assert.deepEqual(plan.forkPoints, [{ runId: 'r', lineageId: 'main', iteration: 2 }]);
});

test('a fork that crashed before its first checkpoint continues from its fork point', () => {
  assert.equal(at(continuePlan('r', [main, r1], [ckpt('main', 2), ckpt('main', 4)])), 'r1<-main@2');
});

test('forking takes the checkpoint of the lineage that owns the iteration and a fresh id', () => {
  assert.equal(at(forkPlan('r', [main, r1], [ckpt('main', 2), ckpt('r1', 3)], 2)), 'r2<-main@2');
  assert.equal(at(forkPlan('r', [main, r1], [ckpt('main', 2), ckpt('r1', 3)], 3)), 'r2<-r1@3');
});

test('forking from a missing checkpoint names the ones available', () => {
  assert.throws(
    () => forkPlan('r', [main], [ckpt('main', 3), ckpt('main', 4)], 1),
    /no checkpoint main@1; available: main@3, main@4/,
  );
});

test('lineage ids skip the ones in use', () => {
  assert.equal(nextLineageId(['main', 'r1', 'r3']), 'r2');
});

test('retention through the guarded view never deletes a fork point', async () => {
  const deleted: string[] = [];
  const list = [ckpt('main', 2), ckpt('main', 3), ckpt('main', 4)];
  const store = {
    list: async () => list,
    delete: async (_r: string, l: string, i: number) => {
      deleted.push(`${l}@${i}`);
    },
  } as unknown as CheckpointStore;
  const guarded = withoutForkPoints(store, [{ runId: 'r', lineageId: 'main', iteration: 2 }]);
  await applyRetention(guarded, 'r', { keepLast: 1, keepEvery: 0 });
  assert.deepEqual(deleted, ['main@3']);
});
