import assert from 'node:assert/strict';
import { test } from 'node:test';
import { programKey } from '../../../src/policy/engine/programs.ts';
import {
  DEFAULT_PROGRAM_OPTIONS,
  type ProgramOptions,
  programOptions,
} from '../../../src/policy/graph/program-options.ts';

/** Every option with one leaf changed (booleans flipped, numbers set to 0 and to Infinity), named by its path. */
function variants(o: object, path: string[] = []): [string, ProgramOptions][] {
  return Object.entries(o).flatMap(([k, v]): [string, ProgramOptions][] => {
    const at = [...path, k];
    if (typeof v === 'object' && v !== null) return variants(v as object, at);
    const values = typeof v === 'boolean' ? [!v] : [0, Infinity].filter((x) => x !== v);
    return values.map((x) => [`${at.join('.')}=${x}`, setAt(DEFAULT_PROGRAM_OPTIONS, at, x)]);
  });
}

const setAt = (o: unknown, path: string[], value: unknown): ProgramOptions =>
  (path.length === 0
    ? value
    : {
        ...(o as object),
        [path[0]]: setAt((o as Record<string, unknown>)[path[0]], path.slice(1), value),
      }) as ProgramOptions;

test('the program cache key changes with every program option, so differently built programs are never shared', () => {
  const shape = ['score', { batch: 2, seqLen: 32 }];
  const all = variants(DEFAULT_PROGRAM_OPTIONS);
  assert.ok(all.length >= 7, all.map(([name]) => name).join());
  const keys = new Map(all.map(([name, o]) => [programKey(o, shape), name]));
  keys.set(programKey(DEFAULT_PROGRAM_OPTIONS, shape), 'defaults');
  assert.equal(keys.size, all.length + 1, [...keys.values()].join());
});

test('program options fill unset kernels from the defaults and keep the key of the defaults', () => {
  const o = programOptions({ kernels: { rope: false } });
  assert.deepEqual(o.kernels, { ...DEFAULT_PROGRAM_OPTIONS.kernels, rope: false });
  assert.equal(programKey(programOptions(), ['decode']), programKey(DEFAULT_PROGRAM_OPTIONS, ['decode']));
});
