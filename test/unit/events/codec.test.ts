import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { decodeEvent, encodeEvent } from '../../../src/events/codec.ts';
import { eventKey } from '../../../src/events/event-key.ts';
import { loadSchemaVersion, schemaRegistry, SCHEMA_DIR } from '../../../src/events/schemas.ts';
import { CorruptDataError, StarpoError } from '../../../src/errors.ts';
import { checkpointEvent, echoTrap, iterationEvent, oneOfEach, runEvent, trajectory } from './fixtures.ts';

for (const event of oneOfEach()) {
  test(`a ${event.kind} event survives an Avro round trip unchanged`, () => {
    assert.deepEqual(decodeEvent(encodeEvent(event)), event);
  });
}

test('a nullable field round-trips both null and a value', () => {
  const withVal = { ...iterationEvent('L0', 2), successRateVal: 0.5 };
  assert.equal((decodeEvent(encodeEvent(withVal)) as typeof withVal).successRateVal, 0.5);
  const resumed = runEvent('L1', 'L0', 7);
  assert.deepEqual(decodeEvent(encodeEvent(resumed)), resumed);
});

test('a v1 trajectory read through the resolver gets the v2 default split "train"', () => {
  const registry = schemaRegistry();
  const v1 = loadSchemaVersion(join(SCHEMA_DIR, 'history', 'v1'), 1);
  assert.notEqual(v1.fingerprint, registry.current.fingerprint);
  assert.equal(registry.byFingerprint(v1.fingerprint)?.version, 1);
  const event = { ...trajectory('L0', 3), split: 'val' };
  const bytes = encodeEvent(event, v1); // v1 has no split field: it is not written
  const back = decodeEvent(bytes, v1.type);
  assert.deepEqual(back, { ...event, split: 'train', tokenIds: [], tokenRoles: '' });
});

test('a v2 tool call read through the resolver counts as executed (the v3 default)', () => {
  const registry = schemaRegistry();
  const v2 = loadSchemaVersion(join(SCHEMA_DIR, 'history', 'v2'), 2);
  assert.equal(registry.byFingerprint(v2.fingerprint)?.version, 2);
  const event = trajectory('L0', 3);
  const { executed: _, ...v2Call } = event.turns[0].toolCalls[0];
  const written = { ...event, turns: event.turns.map((t, i) => (i === 0 ? { ...t, toolCalls: [v2Call] } : t)) };
  const back = decodeEvent(encodeEvent(written as typeof event, v2), v2.type);
  assert.deepEqual(back, { ...event, tokenIds: [], tokenRoles: '' });
});

test('a v3 trajectory read through the resolver has no tokens (the v4 defaults)', () => {
  const v3 = loadSchemaVersion(join(SCHEMA_DIR, 'history', 'v3'), 3);
  const { tokenIds: _, tokenRoles: __, ...written } = trajectory('L0', 3);
  const back = decodeEvent(encodeEvent(written as ReturnType<typeof trajectory>, v3), v3.type);
  assert.deepEqual(back, { ...written, tokenIds: [], tokenRoles: '' });
});

test('a trajectory whose token roles do not match its tokens is refused as corrupt', () => {
  const bad = { ...trajectory('L0', 3), tokenRoles: '03' };
  assert.throws(
    () => decodeEvent(encodeEvent(bad)),
    (err: unknown) => err instanceof CorruptDataError && /2 token roles for 3 tokens/.test(err.message),
  );
  assert.throws(() => decodeEvent(encodeEvent({ ...bad, tokenRoles: '039' })), CorruptDataError);
});

test('v4 iteration and run events read through the resolver get the v5 defaults (no spec id, probe, reason or forks)', () => {
  const v4 = loadSchemaVersion(join(SCHEMA_DIR, 'history', 'v4'), 4);
  const { envSpecId: _, collapse: __, ...iteration } = iterationEvent('L0', 3);
  const back = decodeEvent(encodeEvent(iteration as ReturnType<typeof iterationEvent>, v4), v4.type);
  assert.deepEqual(back, { ...iteration, envSpecId: '', collapse: null });
  const { reason: ___, forks: ____, ...run } = runEvent('L1', 'L0', 7);
  const runBack = decodeEvent(encodeEvent(run as ReturnType<typeof runEvent>, v4), v4.type);
  assert.deepEqual(runBack, { ...run, reason: null, forks: 0 });
});

test('a FORKED run event keeps its reason and forks', () => {
  const forked = {
    ...runEvent('f1-7', 'L0', 7),
    action: 'FORKED' as const,
    reason: 'Echo Trap suspected …; lr × 0.5',
    forks: 1,
  };
  assert.deepEqual(decodeEvent(encodeEvent(forked)), forked);
});

test('the current schema is version 5 and has a sha256 fingerprint', () => {
  assert.equal(schemaRegistry().current.version, 5);
  assert.equal(schemaRegistry().current.fingerprint.length, 64);
});

test('bytes that are not an event are refused with CorruptDataError', () => {
  assert.throws(() => decodeEvent(Buffer.from('not avro at all')), CorruptDataError);
  const truncated = encodeEvent(checkpointEvent('L0', 1)).subarray(0, 20);
  assert.throws(() => decodeEvent(truncated), CorruptDataError);
});

test('an event missing a field is refused naming the field', () => {
  const broken = { ...echoTrap('L0', 1), message: undefined } as unknown as ReturnType<typeof echoTrap>;
  assert.throws(
    () => encodeEvent(broken),
    (err: unknown) => err instanceof StarpoError && /message/.test(err.message),
  );
});

test('a run id with a slash is refused before it reaches a key or a path', () => {
  assert.throws(() => encodeEvent(trajectory('L0', 1, 0, 0, 'a/b')), /runId "a\/b" is not a valid id/);
});

test('event keys name run, lineage, iteration, kind and the trajectory index', () => {
  assert.equal(eventKey(trajectory('L0', 4, 2, 7)), 'run-1/L0/4/trajectory/train/2/7');
  assert.equal(eventKey(runEvent('L1', 'L0', 3)), 'run-1/L1/3/run');
  assert.equal(eventKey(echoTrap('L0', 9)), 'run-1/L0/9/echo-trap');
});

test('a trajectory turn is written under its Avro names (actions, validActions, effectiveActions) and read back renamed', () => {
  const event = trajectory('L0', 3);
  const bytes = encodeEvent(event);
  const raw = schemaRegistry().current.type.fromBuffer(bytes) as { event: Record<string, { turns: object[] }> };
  const [record] = Object.values(raw.event);
  const { actions, validActions, effectiveActions } = record.turns[0] as Record<string, unknown>;
  const [turn] = event.turns;
  assert.deepEqual(
    [actions, validActions, effectiveActions],
    [turn.executedActions, turn.actionsValid, turn.actionsEffective],
  );
  assert.deepEqual(Object.keys((decodeEvent(bytes) as typeof event).turns[0]).sort(), Object.keys(turn).sort());
});
