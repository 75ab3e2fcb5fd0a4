/**
 * Bad input, as a careless or hostile user gives it, against the real CLI: every case fails with one
 * `starpo: <what> — <why>` line and exit code 1 (2 for usage errors), before anything is written.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatBytes } from '../../src/rl/capacity.ts';
import { resolveConfig } from '../../src/rl/config.ts';
import { trainEmbedded } from '../../src/embedded/driver.ts';
import { LOCK_FILE } from '../../src/storage/run-lock.ts';
import { envSpecId } from '../../src/envs/index.ts';
import { runEnvConfig } from '../../src/rl/run-env.ts';

const BIN = fileURLToPath(new URL('../../bin/starpo.js', import.meta.url));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'starpo-bad-input-')));
const runs = join(scratch, 'runs');
const unwritten = join(scratch, 'unwritten');
const SMALL = [
  'env=bandit',
  'sftSteps=0',
  'envGroups=2',
  'groupSize=4',
  'miniBatchSize=2',
  'valSeeds=4',
  'valEvery=0',
  'modelLayers=1',
  'modelHidden=16',
  'modelFfn=32',
  'threads=1',
];
const sets = (overrides: readonly string[]) => overrides.flatMap((o) => ['--set', o]);
/** What train's last line says of a run of SMALL: its lineage and environment-spec id. */
const MAIN_BANDIT = `lineage main, environment spec ${envSpecId(runEnvConfig(resolveConfig({ overrides: SMALL })))}`;

function starpo(args: readonly string[]): { status: number | null; stdout: string; line: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: scratch, encoding: 'utf8', timeout: 300_000 });
  return { status: r.status, stdout: r.stdout, line: r.stderr.trim().split('\n').at(-1) ?? '' };
}
const lastLine = (text: string) => text.trim().split('\n').at(-1);
// The iteration log lines these cases wait for are at level info, which npm test turns off for the suite.
const start = (args: readonly string[]): ChildProcess =>
  spawn(process.execPath, [BIN, ...args], { cwd: scratch, env: { ...process.env, STARPO_LOG_LEVEL: 'info' } });
const exited = (child: ChildProcess) => new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 3000 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), 'timed out');
}
const copyRun = (to: string) => {
  cpSync(join(runs, 'base'), join(runs, to), { recursive: true });
  return join(runs, to);
};
const checkpoints = (run: string) =>
  readdirSync(join(run, 'checkpoints', 'main'))
    .map(Number)
    .sort((a, b) => a - b);

// A run of 30 iterations stopped after 2 (as a crash would), copied by the cases that resume it.
before(
  async () => {
    await trainEmbedded({
      root: runs,
      runId: 'base',
      config: resolveConfig({ overrides: [...SMALL, 'iterations=30'] }),
      stopAfter: 2,
    });
  },
  { timeout: 300_000 },
);

test('a run id that is not a plain name is refused before any path is built from it', () => {
  for (const id of ['../x', 'a/b', '']) {
    const r = starpo(['train', '--run-id', id, '--runs-dir', unwritten, ...sets(SMALL)]);
    assert.equal(r.status, 1);
    assert.equal(
      r.line,
      `starpo: config --run-id — ${JSON.stringify(id)} is not a valid run id (letters, digits, . _ -; ` +
        'at most 128; no path separators)',
    );
  }
  assert.deepEqual([existsSync(unwritten), existsSync(join(scratch, 'x'))], [false, false]);
});

test('values past what the engine can hold, 2^32 seeds and Object.prototype keys are refused by field', () => {
  const cases: [string, string][] = [
    ['envGroups=1e9', 'config envGroups — must be an integer in [1, 65536], got 1000000000'],
    ['modelHidden=1000000', 'config modelHidden — must be an integer in [8, 65536], got 1000000'],
    ['maxResponseTokens=1e9', 'config maxResponseTokens — must be an integer in [1, 131072], got 1000000000'],
    ['seed=1e30', 'config seed — must be an integer in [0, 4294967295], got 1e+30'],
    ['seed=4294967296', 'config seed — must be an integer in [0, 4294967295], got 4294967296'],
    ['toString=1', 'config toString — unknown key'],
  ];
  for (const [set, line] of cases) {
    const r = starpo(['train', '--runs-dir', unwritten, '--set', set]);
    assert.deepEqual([r.status, r.line], [1, `starpo: ${line}`]);
  }
  assert.equal(existsSync(unwritten), false);
});

test('a number typed as a word is quoted as typed, and a run config.json that is not JSON is named', () => {
  const word = starpo(['train', '--runs-dir', unwritten, '--set', 'iterations=ten']);
  assert.deepEqual(
    [word.status, word.line],
    [1, 'starpo: config iterations — must be an integer in [1, 1000000], got "ten"'],
  );
  const run = copyRun('config-not-json');
  writeFileSync(join(run, 'config.json'), '{"iterations": 30,');
  const r = starpo(['train', '--resume', run]);
  assert.equal(r.status, 1);
  assert.match(r.line, new RegExp(`^starpo: config ${run}/config\\.json — is not valid JSON \\(.+\\)$`));
  assert.equal(existsSync(unwritten), false);
});

test('a model whose parameters cannot fit in memory is refused with its size', () => {
  const r = starpo(['train', '--runs-dir', unwritten, '--set', 'modelLayers=64', '--set', 'modelHidden=16384']);
  assert.equal(r.status, 1);
  assert.equal(
    r.line,
    'starpo: config modelHidden — a 52.1B-parameter model (64 layers, hidden 16384, ffn 192, vocab 106) ' +
      "needs at least 1.1 TiB for its weights and optimizer state, more than this machine's " +
      `${formatBytes(totalmem())} of memory`,
  );
  assert.equal(existsSync(unwritten), false);
});

test('train --dry-run resolves and validates everything and writes nothing', () => {
  const r = starpo(['train', '--dry-run', '--run-id', 'd', '--runs-dir', unwritten, ...sets(SMALL)]);
  assert.equal(r.status, 0);
  assert.equal(
    lastLine(r.stdout),
    `dry run: run d in ${unwritten}/d would start; every check passed, nothing was written`,
  );
  assert.equal(existsSync(unwritten), false);
});

test('an unknown command or flag is a usage error (exit 2) that prints no help', () => {
  for (const args of [['nosuchcmd'], ['nosuchcmd', '--help']]) {
    const r = starpo(args);
    assert.deepEqual(
      [r.status, r.stdout, r.line],
      [2, '', "starpo: unknown command 'nosuchcmd' — see `starpo --help`"],
    );
  }
  const r = starpo(['train', '--nosuch']);
  assert.deepEqual([r.status, r.line], [2, "starpo: unknown option '--nosuch' — see `starpo train --help`"]);
  const help = starpo(['help', 'train']); // help asked for is no error
  assert.deepEqual([help.status, help.stdout.split('\n')[0]], [0, 'Usage: starpo train [options]']);
});

test('every command that names a missing run fails with one line, never an empty success', () => {
  const missing = (what: string) =>
    `starpo: run nope not found — ${runs}/nope holds no ${what} ` + '(check the run id, or --runs-dir for a bare id)';
  const cases: [string[], string][] = [
    [['train', '--resume', join(runs, 'nope')], 'config.json'],
    [['eval', '--checkpoint', 'nope', '--runs-dir', runs], 'config.json'],
    [['export', 'nope', '--runs-dir', runs, '--out', join(scratch, 'exported')], 'config.json'],
    [['resume', 'nope', '--from-iteration', '1', '--runs-dir', runs], 'config.json'],
    [['replay', 'nope', '--runs-dir', runs], 'config.json or events/'],
    [['report', 'nope', '--runs-dir', runs], 'config.json or events/'],
  ];
  for (const [args, what] of cases)
    assert.deepEqual(starpo(args), { status: 1, stdout: '', line: missing(what) }, args[0]);
});

test('a checkpoint missing its optimizer file is a clear error', () => {
  const run = copyRun('no-optimizer');
  const dir = join(run, 'checkpoints', 'main', '00000002');
  rmSync(join(dir, 'actor.training_state.safetensors'));
  const r = starpo(['train', '--resume', run]);
  assert.equal(r.status, 1);
  assert.equal(
    r.line,
    'starpo: checkpoint no-optimizer/main@2 — file actor.training_state.safetensors is listed in its manifest ' +
      `but missing from ${dir}/; an earlier checkpoint k still resumes: starpo resume <run> --from-iteration k`,
  );
});

test('file-system errors name the operation and the path: a full disk, a read-only runs directory', (t) => {
  if (spawnSync('unshare', ['-m', 'true']).status !== 0) return t.skip('needs unshare -m (a private mount namespace)');
  const mnt = join(scratch, 'mnt');
  mkdirSync(mnt);
  const cli = (args: string) => `"${process.execPath}" "${BIN}" ${args} 2>&1 | tail -n 1`;
  const script =
    `mount -t tmpfs -o size=256k tmpfs "${mnt}" && ` +
    cli(`train --env bandit --set sftSteps=0 --runs-dir "${mnt}/runs"`) +
    ` && mount -o remount,ro "${mnt}" && ${cli(`train --env bandit --runs-dir "${mnt}/new"`)}`;
  const [full, readOnly] = spawnSync('unshare', ['-m', 'sh', '-c', script], { encoding: 'utf8', cwd: scratch })
    .stdout.trim()
    .split('\n');
  assert.match(
    full,
    new RegExp(
      `^starpo: cannot write ${mnt}/runs/[^/]+/checkpoints/main/\\.00000000\\.tmp-[0-9a-f-]+/` +
        'actor\\.[a-z_]+\\.safetensors — no space left on the device; free some, then continue the run with ' +
        '`starpo train --resume <run-dir>` \\(ENOSPC\\)$',
    ),
  );
  assert.equal(
    readOnly,
    `starpo: cannot create the directory ${mnt}/new — the file system is read-only; choose a writable ` +
      'directory (e.g. --runs-dir) (EROFS)',
  );
});

test(
  "a second writer of a run is refused naming the first; a killed writer's lock is taken over",
  { timeout: 600_000 },
  async () => {
    const run = copyRun('locked');
    const first = start(['train', '--resume', run]);
    await until(() => existsSync(join(run, LOCK_FILE)));
    first.kill('SIGSTOP'); // holds the lock, frozen
    const holder = JSON.parse(readFileSync(join(run, LOCK_FILE), 'utf8'));
    const second = starpo(['train', '--resume', run]);
    assert.equal(second.status, 1);
    assert.equal(
      second.line,
      `starpo: run ${run} is in use — starpo train --resume (pid ${first.pid} on ${holder.host}, since ` +
        `${holder.since}) holds ${run}/${LOCK_FILE}; wait for it to end, or delete that file if no such process runs`,
    );
    first.kill('SIGKILL');
    await exited(first);
    const third = starpo(['train', '--resume', run]);
    assert.equal(third.status, 0);
    assert.equal(
      lastLine(third.stdout),
      `run locked: finished iteration 30 (${MAIN_BANDIT}); events and checkpoints in ${run}/`,
    );
  },
);

test(
  'a run killed during its warm-start is started over with --restart, which --resume points to',
  { timeout: 600_000 },
  async () => {
    const run = join(runs, 'warm');
    const warming = start(['train', '--run-id', 'warm', '--runs-dir', runs, ...sets([...SMALL, 'sftSteps=100000'])]);
    await until(() => existsSync(join(run, 'config.json')));
    warming.kill('SIGKILL');
    await exited(warming);
    const resume = starpo(['train', '--resume', run]);
    assert.deepEqual(
      [resume.status, resume.line],
      [
        1,
        'starpo: config resume — run warm has no checkpoint: ' +
          'it stopped before its warm-start finished; start it over with the options it was started with ' +
          'and --restart (starpo train --restart --run-id warm …)',
      ],
    );
    const again = ['train', '--run-id', 'warm', '--runs-dir', runs, ...sets([...SMALL, 'iterations=1'])];
    assert.equal(
      starpo(again).line,
      `starpo: config runId — run warm already exists in ${runs}; continue it with --resume`,
    );
    const restarted = starpo([...again, '--restart']);
    assert.equal(restarted.status, 0);
    assert.equal(
      lastLine(restarted.stdout),
      `run warm: finished iteration 1 (${MAIN_BANDIT}); events and checkpoints in ${run}/`,
    );
  },
);

test(
  'Ctrl-C finishes and checkpoints the current iteration and states the iteration reached',
  { timeout: 600_000 },
  async () => {
    const run = join(runs, 'interrupted');
    const training = start([
      'train',
      '--run-id',
      'interrupted',
      '--runs-dir',
      runs,
      ...sets([...SMALL, 'iterations=30']),
    ]);
    let logged = '';
    training.stderr!.on('data', (chunk: Buffer) => {
      logged += chunk.toString();
    });
    let out = '';
    training.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    await until(() => logged.includes('"iteration":4,'));
    training.kill('SIGINT');
    assert.equal(await exited(training), 0);
    const reached = checkpoints(run).at(-1)!;
    assert.ok(reached >= 4 && reached < 30, `reached ${reached}`);
    assert.equal(
      lastLine(out),
      `run interrupted: stopped after iteration ${reached} of 30 (${MAIN_BANDIT}; ` +
        `checkpointed); continue with: starpo train --resume ${run}`,
    );
  },
);

test('a run directory copied under another name evaluates and replays as the run its name says', () => {
  const run = copyRun('moved');
  const r = spawnSync(process.execPath, [BIN, 'eval', '--checkpoint', run, '--seeds', '2', '--json'], {
    encoding: 'utf8',
  });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout).checkpoint, { runId: 'moved', lineageId: 'main', iteration: 2 });
  assert.equal(spawnSync(process.execPath, [BIN, 'replay', run], { encoding: 'utf8' }).status, 0);
});
