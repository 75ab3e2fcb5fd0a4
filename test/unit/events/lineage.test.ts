import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseLineage, inChain, ownerOf, type LineageStart } from '../../../src/events/lineage.ts';
import { CorruptDataError } from '../../../src/errors.ts';

const root = (id = 'L0'): LineageStart => ({ lineageId: id, parentLineageId: null, fromIteration: 0 });
const resume = (id: string, parent: string, from: number): LineageStart => ({
  lineageId: id,
  parentLineageId: parent,
  fromIteration: from,
});
const owners = (starts: LineageStart[], iterations: number[]) =>
  iterations.map((i) => ownerOf(chooseLineage(starts)!, i));

test('a log without lineage starts has no plan', () => {
  assert.equal(chooseLineage([]), undefined);
});

test('a single lineage owns every iteration', () => {
  assert.deepEqual(owners([root()], [0, 1, 50]), ['L0', 'L0', 'L0']);
});

test('a resume from iteration 5 owns iterations after 5, the parent those up to 5', () => {
  assert.deepEqual(owners([root(), resume('L1', 'L0', 5)], [1, 5, 6, 9]), ['L0', 'L0', 'L1', 'L1']);
});

test('the newest resume wins and an abandoned sibling branch leaves the chain', () => {
  const plan = chooseLineage([root(), resume('L1', 'L0', 5), resume('L2', 'L0', 7)])!;
  assert.equal(plan.survivor, 'L2');
  assert.deepEqual(
    plan.chain.map((l) => l.lineageId),
    ['L2', 'L0'],
  );
  assert.deepEqual(
    [6, 7, 8].map((i) => ownerOf(plan, i)),
    ['L0', 'L0', 'L2'],
  );
  assert.equal(inChain(plan, 'L1'), false);
});

test('a resume of a resume splits the iterations three ways', () => {
  const starts = [root(), resume('L1', 'L0', 5), resume('L2', 'L1', 8)];
  assert.deepEqual(owners(starts, [3, 6, 8, 9]), ['L0', 'L1', 'L1', 'L2']);
});

test('a resume that rewinds to an earlier iteration supersedes the later ones of its parent', () => {
  assert.deepEqual(owners([root(), resume('L1', 'L0', 2)], [2, 3]), ['L0', 'L1']);
});

test('a parent whose start was never logged still owns the iterations before its child', () => {
  assert.deepEqual(owners([resume('L1', 'L0', 4)], [4, 5]), ['L0', 'L1']);
});

test('a late duplicate of an old lineage start does not make it the survivor', () => {
  assert.equal(chooseLineage([root(), resume('L1', 'L0', 3), root()])!.survivor, 'L1');
});

test('a cycle in the lineage tree is refused as corrupt data', () => {
  assert.throws(() => chooseLineage([resume('A', 'B', 1), resume('B', 'A', 2)]), CorruptDataError);
});
