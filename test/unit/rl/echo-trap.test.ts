import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../src/errors.ts';
import { EchoTrapDetector, type EchoTrapObservation } from '../../../src/rl/echo-trap.ts';

type Row = [std: number, entropy: number, gradNorm: number, success: number];
/** Observations for iterations 1..n from a function of the iteration. */
const series = (n: number, f: (i: number) => Row): EchoTrapObservation[] =>
  Array.from({ length: n }, (_, k) => {
    const [inGroupRewardStd, entropy, gradNorm, successRate] = f(k + 1);
    return { iteration: k + 1, inGroupRewardStd, entropy, gradNorm, successRate };
  });
const run = (obs: EchoTrapObservation[], d = new EchoTrapDetector()) => obs.flatMap((o) => d.observe(o) ?? []);

// Healthy until 15; std drops to 0.2 at 16 and entropy halves at 15; grad norm spikes at 20; success falls at 23.
const collapse = (i: number): Row => [i <= 15 ? 1 : 0.2, i <= 14 ? 2 : 1, i === 20 || i === 25 ? 10 : 1, i <= 22 ? 0.5 : 0.1];

test('a collapsing series fires at the spike iteration with the evidence', () => {
  const warnings = run(series(30, collapse));
  assert.deepEqual(warnings.map((w) => w.iteration), [20]);
  assert.deepEqual(warnings[0].evidence, {
    inGroupRewardStd: 0.2, inGroupRewardStdMax: 1, entropy: 1, entropyMax: 2, gradNorm: 10, gradNormMedian: 1,
    spikeIteration: 20, successRate: 0.5, successRateMax: 0.5,
  });
  assert.match(warnings[0].message, /^Echo Trap suspected at iteration 20: in-group reward std 0\.200 \(max 1\.00\)/);
});

test('a healthy noisy series with occasional grad spikes never fires', () => {
  const healthy = (i: number): Row =>
    [1 + 0.3 * Math.sin(1.3 * i), 2 + 0.2 * Math.sin(0.7 * i), i % 37 === 0 ? 8 : 1 + 0.4 * Math.sin(2.1 * i), 0.3];
  assert.deepEqual(run(series(200, healthy)), []);
});

test('a one-off dip in std and entropy together with a grad spike does not fire', () => {
  assert.deepEqual(run(series(40, (i) => (i === 20 ? [0, 0, 10, 0] : [1, 2, 1, 0.5]))), []);
});

test('fires once per collapse and re-arms after std recovers', () => {
  const twice = (i: number): Row => (i <= 30 ? collapse(i) : i <= 45 ? [1, 2, 1, 0.5] : collapse(i - 30));
  assert.deepEqual(run(series(60, twice)).map((w) => w.iteration), [20, 50]);
});

test('state survives a JSON checkpoint: a resumed detector fires exactly like an uninterrupted one', () => {
  const obs = series(30, collapse);
  const first = new EchoTrapDetector({ window: 5 });
  assert.deepEqual(run(obs.slice(0, 18), first), []);
  const resumed = EchoTrapDetector.fromJSON(JSON.parse(JSON.stringify(first)));
  assert.deepEqual(run(obs.slice(18), resumed).map((w) => w.iteration), [20]);
});

test('thresholds are configurable and validated by name', () => {
  assert.deepEqual(run(series(30, collapse), new EchoTrapDetector({ gradSpikeFactor: 20 })), []);
  assert.throws(() => new EchoTrapDetector({ window: 0 }), (e: unknown) => e instanceof ConfigError && e.field === 'echoTrap.window');
});
