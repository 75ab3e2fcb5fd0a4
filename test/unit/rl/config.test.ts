import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors.ts';
import {
  canonicalConfigJSON,
  configDifferences,
  configFromJSON,
  DEFAULTS,
  FIELDS,
  resolveConfig,
  trainedBatchSize,
} from '../../../src/rl/config.ts';
import { PRESET_NAMES, presetOf } from '../../../src/rl/presets.ts';

/** Asserts that `fn` throws a ConfigError for `field` whose message matches `message`. */
function throwsField(fn: () => unknown, field: string, message: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof ConfigError && e.field === field && message.test(e.message));
}

test('defaults are the published StarPO-S configuration', () => {
  const c = resolveConfig();
  assert.deepEqual(c, DEFAULTS);
  assert.deepEqual(
    [c.envGroups, c.groupSize, c.iterations, c.filter, c.filterFraction, c.advantage, c.critic, c.klCoef],
    [8, 16, 200, 'top-std', 0.25, 'gae', true, 0],
  );
  assert.deepEqual(
    [c.clipLow, c.clipHigh, c.dualClip, c.entropyCoef, c.gradClip, c.miniBatchSize],
    [0.2, 0.28, 3, 0.001, 1, 32],
  );
  assert.ok(Object.isFrozen(c));
});

test('presets resolve and say what makes each algorithm', () => {
  const [starpo, grpo, dapo] = (['starpo', 'grpo', 'dapo'] as const).map((preset) => resolveConfig({ preset }));
  assert.deepEqual([starpo.filter, starpo.klCoef, starpo.clipHigh, starpo.critic], ['none', 0.001, 0.2, true]);
  assert.deepEqual([grpo.advantage, grpo.critic, grpo.whitenAdvantages], ['grpo', false, false]);
  assert.deepEqual([dapo.clipHigh, dapo.dynamicSampling, dapo.lossAggregation], [0.28, true, 'token-mean']);
  assert.equal(resolveConfig({ preset: 'gigpo' }).gigpoStepGamma, 0.95);
  // verl-agent's trainer: statistics over step rows, penalties after discounting, mean-only normalisation.
  assert.deepEqual(
    [resolveConfig({ preset: 'gigpo' }).gigpoForm, resolveConfig({ preset: 'gigpo' }).groupNormByStd],
    ['verl-agent', false],
  );
  assert.equal(resolveConfig({ preset: 'gigpo', overrides: ['gigpoForm=paper'] }).gigpoForm, 'paper');
  for (const preset of PRESET_NAMES) assert.doesNotThrow(() => resolveConfig({ preset }));
});

test('presetOf names the preset a resolved config is, and none when a preset field was changed', () => {
  for (const preset of PRESET_NAMES) assert.equal(presetOf(resolveConfig({ preset })), preset);
  assert.equal(
    presetOf(resolveConfig({ preset: 'grpo', overrides: ['groupNormByStd=false', 'lrActor=1e-5'] })),
    'grpo',
  );
  assert.equal(presetOf(resolveConfig({ preset: 'grpo', overrides: ['klCoef=0'] })), undefined);
});

test('file overrides the preset and flags override the file; dotted, snake and nested keys map to flat names', () => {
  const c = resolveConfig({
    preset: 'starpo',
    file: { clip: { high: 0.3 }, group_size: 8, lrActor: 1e-4 },
    overrides: ['clip.high=0.25', 'kl-coef=0'],
  });
  assert.deepEqual([c.clipHigh, c.groupSize, c.lrActor, c.klCoef, c.filter], [0.25, 8, 1e-4, 0, 'none']);
});

test('an unknown key is rejected with a suggestion', () => {
  throwsField(() => resolveConfig({ overrides: ['clipHihg=0.3'] }), 'clipHihg', /did you mean "clipHigh"/);
  throwsField(() => resolveConfig({ file: { zzz: 1 } }), 'zzz', /unknown key$/);
});

test('wrong types and out-of-range values name the field', () => {
  throwsField(
    () => resolveConfig({ file: { envGroups: '8' } }),
    'envGroups',
    /must be an integer in \[1, 65536\], got "8"/,
  );
  throwsField(() => resolveConfig({ overrides: ['groupSize=2.5'] }), 'groupSize', /integer/);
  throwsField(() => resolveConfig({ overrides: ['clipLow=1'] }), 'clipLow', /must be a number in \(0, 1\), got 1/);
  throwsField(() => resolveConfig({ overrides: ['critic=yes'] }), 'critic', /true or false/);
  throwsField(() => resolveConfig({ overrides: ['filter=top'] }), 'filter', /one of "top-std"/);
  throwsField(() => resolveConfig({ overrides: ['formatPenalty=0.1'] }), 'formatPenalty', /≤ 0/);
});

test('packPrefixes: auto by default; true and false, as configs stored before it had three values, mean on and off', () => {
  assert.equal(DEFAULTS.packPrefixes, 'auto');
  assert.equal(resolveConfig({ file: { packPrefixes: true } }).packPrefixes, 'on');
  assert.equal(resolveConfig({ file: { packPrefixes: false } }).packPrefixes, 'off');
  assert.equal(resolveConfig({ overrides: ['packPrefixes=false'] }).packPrefixes, 'off');
  assert.equal(resolveConfig({ overrides: ['packPrefixes=on'] }).packPrefixes, 'on');
  throwsField(() => resolveConfig({ overrides: ['packPrefixes=yes'] }), 'packPrefixes', /one of "auto", "on", "off"/);
  throwsField(() => resolveConfig({ overrides: ['filter=true'] }), 'filter', /one of "top-std"/);
});

test('a number that is not one is quoted as typed: ten, NaN and 1e400 are never reported as null', () => {
  for (const text of ['ten', 'NaN', '1e400', '-Infinity']) {
    const c = () => resolveConfig({ overrides: [`iterations=${text}`] });
    throwsField(c, 'iterations', new RegExp(`must be an integer in \\[1, 1000000\\], got "${text}"$`));
  }
  // A file's 1e400 reaches the check as Infinity, which JSON would print as null too.
  throwsField(() => resolveConfig({ file: JSON.parse('{"lrActor": 1e400}') }), 'lrActor', /got Infinity$/);
});

test("a saved config that is not JSON names where it was read from and the parser's reason", () => {
  throwsField(
    () => configFromJSON('{"iterations": 3,', 'runs/r/config.json'),
    'runs/r/config.json',
    /^config runs\/r\/config\.json: is not valid JSON \(.+\)$/,
  );
});

test('every number has an upper bound, so sizes past what the engine can hold are refused by their field', () => {
  for (const [name, f] of Object.entries(FIELDS)) {
    if (f.kind === 'int' || f.kind === 'number') assert.ok(Number.isFinite(f.max), `${name} has no finite max`);
  }
  throwsField(() => resolveConfig({ overrides: ['envGroups=1e9'] }), 'envGroups', /in \[1, 65536\], got 1000000000$/);
  throwsField(
    () => resolveConfig({ overrides: ['modelHidden=1000000'] }),
    'modelHidden',
    /in \[8, 65536\], got 1000000$/,
  );
  throwsField(() => resolveConfig({ overrides: ['maxResponseTokens=1e9'] }), 'maxResponseTokens', /in \[1, 131072\]/);
  throwsField(
    () => resolveConfig({ file: { lrActor: 1e300 } }),
    'lrActor',
    /must be a number in \(0, 1000000\], got 1e\+300$/,
  );
});

test('seeds are integers in [0, 2^32): 2^32 would wrap onto seed 0 and is refused', () => {
  assert.equal(resolveConfig({ overrides: ['seed=4294967295'] }).seed, 4294967295);
  throwsField(
    () => resolveConfig({ overrides: ['seed=4294967296'] }),
    'seed',
    /must be an integer in \[0, 4294967295\], got 4294967296$/,
  );
  throwsField(() => resolveConfig({ overrides: ['seed=1e30'] }), 'seed', /got 1e\+30$/);
  throwsField(() => resolveConfig({ overrides: ['seed=-1'] }), 'seed', /got -1$/);
});

test('keys named like Object.prototype members are unknown, not fields', () => {
  for (const key of ['toString', 'constructor', 'hasOwnProperty', 'valueOf']) {
    throwsField(() => resolveConfig({ overrides: [`${key}=1`] }), key, /unknown key/);
    throwsField(() => resolveConfig({ file: { [key]: 1 } }), key, /unknown key/);
  }
  throwsField(() => resolveConfig({ preset: 'toString' as never }), 'preset', /unknown preset "toString"/);
});

test('cross-field rules name the field to change', () => {
  throwsField(() => resolveConfig({ overrides: ['critic=false'] }), 'critic', /"gae" needs a critic/);
  throwsField(() => resolveConfig({ overrides: ['advantage=grpo'] }), 'critic', /set critic=false/);
  throwsField(() => resolveConfig({ preset: 'grpo', overrides: ['groupSize=1'] }), 'groupSize', /≥ 2/);
  throwsField(() => resolveConfig({ overrides: ['dualClip=0.5'] }), 'dualClip', /0 \(off\) or > 1/);
  throwsField(() => resolveConfig({ overrides: ['filterBandLow=0.9'] }), 'filterBandHigh', /greater/);
  throwsField(() => resolveConfig({ overrides: ['onlineK=2'] }), 'onlineK', /2 × miniBatchSize 32 ≠ 32 trained/);
});

test('online-k agrees with the trained batch: vanilla StarPO trains 128 trajectories = 4 × 32', () => {
  assert.equal(trainedBatchSize(resolveConfig()), 32);
  assert.equal(resolveConfig({ preset: 'starpo', overrides: ['onlineK=4'] }).onlineK, 4);
  assert.equal(trainedBatchSize(resolveConfig({ overrides: ['filter=nonzero-std'] })), null);
});

test('canonical JSON has sorted keys and round-trips to an equal config', () => {
  const c = resolveConfig({ preset: 'dapo' });
  const text = canonicalConfigJSON(c);
  const keys = Object.keys(JSON.parse(text));
  assert.deepEqual(keys, [...keys].sort());
  assert.deepEqual(configFromJSON(text), c);
  assert.equal(canonicalConfigJSON(configFromJSON(text)), text);
  throwsField(() => configFromJSON('{'), 'config file', /not valid JSON/);
});

test('a model directory makes the natural-language template the default; an explicit template still wins', () => {
  assert.equal(resolveConfig({ overrides: ['model=/models/qwen'] }).template, 'full');
  assert.equal(resolveConfig({ overrides: ['model=/models/qwen', 'template=compact'] }).template, 'compact');
  assert.equal(resolveConfig({ file: { model: '/models/qwen', template: 'full-no-think' } }).template, 'full-no-think');
  assert.equal(resolveConfig({}).template, 'compact');
});

test('LoRA settings: targets as a list or a comma string, dropout only 0, unknown targets named', () => {
  const c = resolveConfig({ file: { lora: { rank: 16, alpha: 32, dropout: 0, targets: ['q', 'v'] } } });
  assert.deepEqual([c.loraRank, c.loraAlpha, c.loraDropout, c.loraTargets], [16, 32, 0, 'q,v']);
  assert.equal(resolveConfig({ overrides: ['loraTargets=q, k ,down'] }).loraTargets, 'q,k,down');
  assert.throws(() => resolveConfig({ overrides: ['loraDropout=0.05'] }), /loraDropout: must be a number in \[0, 0\]/);
  assert.throws(
    () => resolveConfig({ overrides: ['loraTargets=q,lm_head'] }),
    /loraTargets: "lm_head" is not one of q, k, v, o, gate, up, down/,
  );
  assert.throws(() => resolveConfig({ overrides: ['loraTargets=q,q'] }), /loraTargets: must list distinct items/);
});

test('configDifferences names each differing field with both values, over the given fields only', () => {
  const a = resolveConfig({ overrides: ['lrActor=2e-4', 'loraRank=16'] });
  const b = resolveConfig({ overrides: ['lrActor=1e-3', 'loraRank=8'] });
  assert.equal(configDifferences(a, a), '');
  assert.equal(configDifferences(a, b), 'loraRank 16 there, 8 here; lrActor 0.0002 there, 0.001 here'); // field order
  assert.equal(configDifferences(a, b, ['loraRank', 'env']), 'loraRank 16 there, 8 here');
});
