/**
 * The command line as a person and as a script see it, through the real CLI: on a terminal (a pseudo-terminal
 * from util-linux `script`) train's progress bar owns the screen and the logs go to <run>/train.log; through
 * a pipe there is no bar, the logs are JSON lines on stderr and nothing carries an escape code; NO_COLOR
 * turns table colours off on a terminal too. No services are needed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/starpo.js', import.meta.url));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'starpo-terminal-')));
const TINY = [
  'env=bandit',
  'sftSteps=0',
  'envGroups=2',
  'groupSize=4',
  'miniBatchSize=4',
  'valSeeds=4',
  'modelLayers=1',
  'modelHidden=16',
  'modelFfn=32',
  'threads=1',
  'iterations=3',
].flatMap((s) => ['--set', s]);
const ESC = '\x1b';
const hasScript = spawnSync('script', ['--version']).status === 0;
type Run = { status: number | null; raw: string };
const env = (extra: Record<string, string> = {}) => {
  const { NO_COLOR: _n, STARPO_LOG_PRETTY: _p, ...rest } = process.env;
  return { ...rest, STARPO_LOG_LEVEL: 'info', ...extra };
};

/** The CLI on a pseudo-terminal (stdout and stderr both): its exit status and what the terminal received. */
function onTerminal(args: readonly string[], extra: Record<string, string> = {}): Run {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  const r = spawnSync('script', ['-qec', command, '/dev/null'], { cwd: scratch, encoding: 'utf8', env: env(extra) });
  return { status: r.status, raw: r.stdout };
}

/**
 * The lines a terminal shows after `raw`: CR and ESC[1G return to column 0, ESC[2K clears the line and ESC[0K
 * its rest; other escapes (colours, cursor visibility, wrapping) change no text. Lines are right-trimmed.
 */
function screen(raw: string): string[] {
  const lines = [''];
  let col = 0;
  for (const [tok] of raw.matchAll(/\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+/g)) {
    const row = lines.length - 1;
    if (tok === '\n') [lines[row + 1], col] = ['', 0];
    else if (tok === '\r' || tok === `${ESC}[1G`) col = 0;
    else if (tok === `${ESC}[2K`) lines[row] = '';
    else if (tok === `${ESC}[0K`) lines[row] = lines[row].slice(0, col);
    else if (!tok.startsWith(ESC)) {
      lines[row] = lines[row].slice(0, col).padEnd(col) + tok + lines[row].slice(col + tok.length);
      col += tok.length;
    }
  }
  return lines.map((l) => l.trimEnd()).filter((l) => l !== '');
}

const BAR = /^iter 3\/3 \[█+\] ETA \d+s \| success \d\.\d\d \| val \d\.\d\d \| std \d\.\d{3} \| entropy \d\.\d{3}$/;
const finished = (id: string) =>
  new RegExp(
    `^run ${id}: finished iteration 3 \\(lineage main, environment spec bandit-[0-9a-f]{8}\\); events and ` +
      `checkpoints in runs/${id}/$`,
  );
const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
const logLines = (id: string) => jsonLines(readFileSync(join(scratch, 'runs', id, 'train.log'), 'utf8'));
const piped = (args: readonly string[]) =>
  spawnSync(process.execPath, [BIN, ...args], { cwd: scratch, encoding: 'utf8', env: env() });

test(
  'on a terminal the bar owns the screen: two summary lines, the bar, the result; the logs are in train.log',
  { timeout: 300_000 },
  (t) => {
    if (!hasScript) return t.skip('needs util-linux script');
    const r = onTerminal(['train', '--run-id', 'tty', ...TINY]);
    assert.equal(r.status, 0, r.raw);
    const [what, model, where, bar, result, ...rest] = screen(r.raw);
    assert.match(what, /^starpo-s on bandit \(env spec bandit-[0-9a-f]{8}\): 3 iterations of 2 groups × 4$/);
    assert.match(model, /^model: [\d.]+k parameters from scratch \(1 layer, hidden 16\)$/);
    assert.equal(where, 'saved in runs/tty/ (config, events, checkpoints, train.log); full config: --print-config');
    assert.match(bar, BAR);
    assert.match(result, finished('tty'));
    assert.deepEqual(rest, []);
    const iterations = logLines('tty')
      .filter((l) => l.msg === 'iteration')
      .map((l) => l.iteration);
    assert.deepEqual(iterations, [1, 2, 3]);
  },
);

test('with --verbose the logs show above the bar, whole: no screen line holds both', { timeout: 300_000 }, (t) => {
  if (!hasScript) return t.skip('needs util-linux script');
  const r = onTerminal(['train', '--verbose', '--run-id', 'verbose', ...TINY]);
  assert.equal(r.status, 0, r.raw);
  const lines = screen(r.raw).slice(3);
  const isLog = (l: string) => /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: iteration$/.test(l) || /^ {4}\w+: \S+$/.test(l);
  assert.match(lines.at(-2)!, BAR);
  assert.match(lines.at(-1)!, finished('verbose'));
  assert.ok(lines.slice(0, -2).every(isLog), lines.join('\n'));
  assert.deepEqual(lines.filter((l) => l.includes('INFO')).length, 3);
  assert.equal(logLines('verbose').length, 3); // and the file has them too
});

test(
  'through a pipe: no bar and no escape codes; the logs are JSON lines on stderr; no train.log',
  { timeout: 300_000 },
  () => {
    const r = piped(['train', '--run-id', 'piped', ...TINY]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(!r.stdout.includes(ESC) && !r.stderr.includes(ESC));
    const [, , where, result, ...rest] = r.stdout.trim().split('\n');
    assert.equal(where, 'saved in runs/piped/ (config, events, checkpoints); full config: --print-config');
    assert.match(result, finished('piped'));
    assert.deepEqual(rest, []);
    const iterations = jsonLines(r.stderr)
      .filter((l) => l.msg === 'iteration')
      .map((l) => l.iteration);
    assert.deepEqual(iterations, [1, 2, 3]);
    assert.equal(existsSync(join(scratch, 'runs', 'piped', 'train.log')), false);
  },
);

test('--print-config prints the saved config as one JSON line after the summary', { timeout: 120_000 }, () => {
  const args = ['train', '--dry-run', '--print-config', '--run-id', 'p', ...TINY];
  const r = piped(args);
  const [what, , json, dry] = r.stdout.trim().split('\n');
  assert.match(what, /^starpo-s on bandit \(env spec bandit-[0-9a-f]{8}\): 3 iterations/);
  assert.deepEqual([JSON.parse(json).envGroups, JSON.parse(json).iterations], [2, 3]);
  assert.equal(dry, `dry run: run p in runs/p would start; every check passed, nothing was written`);
});

test('--print-config alone prints the config and exits: no run is started, nothing is written', () => {
  const r = piped(['train', '--print-config', '--run-id', 'look', ...TINY]);
  const lines = r.stdout.trim().split('\n');
  assert.equal(r.status, 0, r.stderr);
  assert.equal(lines.length, 3, r.stdout);
  assert.equal(JSON.parse(lines[2]).iterations, 3);
  assert.equal(existsSync(join(scratch, 'runs', 'look')), false);
});

test('--print-config with --durable prints the config and exits: no service is contacted, nothing submitted', () => {
  // Every service address points nowhere: a command that contacted one would fail or hang, not exit 0.
  const nowhere = { STARPO_TEMPORAL_ADDRESS: '127.0.0.1:1', STARPO_KAFKA_BROKERS: '127.0.0.1:1' };
  const r = spawnSync(
    process.execPath,
    [BIN, 'train', '--durable', '--print-config', '--run-id', 'look-durable', ...TINY],
    {
      cwd: scratch,
      encoding: 'utf8',
      env: { ...env(), ...nowhere, STARPO_S3_ENDPOINT: 'http://127.0.0.1:1' },
      timeout: 60_000,
    },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout.trim().split('\n').at(-1)!).iterations, 3);
  assert.equal(existsSync(join(scratch, 'runs', 'look-durable')), false);
});

test("replay's table: colours on a terminal, none with NO_COLOR, none through a pipe", { timeout: 120_000 }, (t) => {
  if (!hasScript) return t.skip('needs util-linux script');
  const args = ['replay', 'tty', '--runs-dir', 'runs'];
  assert.match(onTerminal(args).raw, /\x1b\[31m iteration \x1b\[39m/);
  const plain = onTerminal(args, { NO_COLOR: '1' });
  assert.ok(plain.raw.includes('│ iteration │') && !plain.raw.includes(ESC), plain.raw);
  const viaPipe = piped(args).stdout;
  assert.ok(viaPipe.includes('│ iteration │') && !viaPipe.includes(ESC), viaPipe);
});
