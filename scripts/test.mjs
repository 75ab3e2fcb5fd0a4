#!/usr/bin/env node
// Checks formatting (Prettier), lint (ESLint) and types (tsc), then runs the tests with node's built-in runner
// (TypeScript through tsx).
//   node scripts/test.mjs              unit + integration (starts the local services if needed)
//   node scripts/test.mjs unit         unit tests only (no services)
//   node scripts/test.mjs integration  integration tests only
// Node 20's runner takes no globs, so the files are listed here.
import { spawn, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const which = process.argv[2] ?? 'all';
if (!['all', 'unit', 'integration'].includes(which)) {
  console.error(`unknown test selection "${which}": use unit, integration or nothing for all`);
  process.exit(2);
}

function testFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

function run(args, env = {}) {
  const r = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root, env: { ...process.env, ...env } });
  return r.status ?? 1;
}

// Static checks first, cheapest first: formatting (Prettier), lint (ESLint, type-aware), then strict TypeScript
// (unused locals included) over src, workflows, activities, tests and scripts.
const checks = [
  { bin: 'prettier/bin/prettier.cjs', args: ['--check', '--log-level=warn', '.'], fix: 'run `npm run format`' },
  { bin: 'eslint/bin/eslint.js', args: ['.'], fix: 'see the messages above (npm run lint)' },
  { bin: 'typescript/bin/tsc', args: ['--noEmit', '-p', root], fix: 'see the messages above (tsc --noEmit)' },
];
for (const { bin, args, fix } of checks) {
  const rc = run([join(root, 'node_modules', bin), ...args]);
  if (rc !== 0) {
    console.error(`${bin.split('/')[0]} failed: ${fix}`);
    process.exit(rc);
  }
}

const files = [];
if (which !== 'integration') files.push(...testFiles(join(root, 'test/unit')));
if (which !== 'unit') {
  // Integration tests talk to the real services; start whatever is not running (idempotent).
  const rc = run(['--import', 'tsx', join(root, 'src/cli/main.ts'), 'services', 'start']);
  if (rc !== 0) {
    console.error('could not start the local services; see the messages above');
    process.exit(rc);
  }
  files.push(...testFiles(join(root, 'test/integration')));
}
// Files that stop, restart or kill the services: no other file that talks to them may run meanwhile. They run one
// at a time after the shared files, beside a lane of unit files (which never touch the services) picked to fill
// the same time, so the second core is not idle while a broker restarts. (Two unit files at a time beside them
// measured no better in one run each: 10.7 against 10.0 minutes, three processes slowing each other on 2 cores.)
const SERVICE_FAULTS = new Set(['test/integration/services-cli.test.ts', 'test/integration/durable-faults.test.ts']);
// Files that hold short deadlines a busy neighbour would stretch: they run last, alone.
const ALONE = new Set(['test/integration/sandbox-escape.test.ts', 'test/integration/terminal.test.ts']);
// The rest run STARPO_TEST_CONCURRENCY files at a time, by default one more than the cores: most files train
// one-thread models or wait on a service or on module loading for much of their time, so two files at a time on 2
// cores kept them 76% busy (17.3 CPU-minutes in 11.4 minutes); a third file fills the gaps (10.6 → 9.5 minutes).
const BATCH_MS = 3000;
const PROCESS_STATE = /process\.env(\.\w+|\[[^\]]+\])\s*=[^=]|delete process\.env|process\.chdir\(|Runtime\.install\(/;
const concurrency = Number(process.env.STARPO_TEST_CONCURRENCY ?? availableParallelism() + 1);
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`STARPO_TEST_CONCURRENCY must be a whole number ≥ 1, not "${process.env.STARPO_TEST_CONCURRENCY}"`);
  process.exit(2);
}
// Longest first: the runner starts files in the order given, so a long file started last would run on after the
// others with one core idle. File times come from this machine's last run (.cache/test-times.json, written at the
// end) over those of a committed run (test/file-times.json, for a fresh clone; refresh it by copying the cached one).
const timesFile = join(root, '.cache', 'test-times.json');
const readTimes = (path) => {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {}; // none recorded: such files go last, in name order
  }
};
const committedAndCached = { ...readTimes(join(root, 'test', 'file-times.json')), ...readTimes(timesFile) };
const lastTimes = { ...committedAndCached };
const timeOf = (f) => lastTimes[relative(root, f)] ?? 0;
const longestFirst = (fs) => [...fs].sort((a, b) => timeOf(b) - timeOf(a));
const named = (set) => files.filter((f) => set.has(relative(root, f)));
const faults = named(SERVICE_FAULTS);
const alone = named(ALONE);
const beside = besideLane(
  longestFirst(files.filter((f) => relative(root, f).startsWith('test/unit/'))),
  faults.reduce((s, f) => s + timeOf(f), 0),
);
// Trainer progress lines would drown the test report; STARPO_LOG_LEVEL=info brings them back.
const timingsDir = mkdtempSync(join(tmpdir(), 'starpo-test-'));
const rest = files.filter((f) => ![...faults, ...alone, ...beside].includes(f));
const batched = rest.filter(batchable);
const shared = longestFirst([
  ...rest.filter((f) => !batched.includes(f)),
  ...writeBatches(longestFirst(batched), Math.min(concurrency, Math.ceil(batched.length / 20)), timingsDir),
]);
// The test processes' TMPDIR: what a test leaves in its temporary directories (models, runs, checkpoints: gigabytes
// over a suite) goes when the suite ends, passed or failed. STARPO_KEEP_TEST_TMP=1 keeps it to look at.
const scratchDir = join(timingsDir, 'tmp');
mkdirSync(scratchDir);
const t0 = Date.now();
const phases = [
  [[shared, concurrency]],
  [
    [faults, 1],
    [beside, 1],
  ],
  [[alone, 1]],
];
let rc = 0;
let runs = 0;
for (const lanes of phases) {
  const statuses = await Promise.all(lanes.map(([group, n]) => (group.length ? runFiles(group, n, runs++) : 0)));
  rc ||= statuses.find((s) => s !== 0) ?? 0;
}
const allRows = timingRows(timingsDir);
const rows = allRows.filter((r) => !r.failure);
printSlowest(rows, 10, Date.now() - t0);
printFailures(allRows.filter((r) => r.failure).map((r) => r.failure));
if (rows.length > 0) {
  const measured = rows.filter((r) => !r.batch).map((r) => [relative(root, r.file), r.spanMs]);
  const times = { ...committedAndCached, ...Object.fromEntries(measured) };
  mkdirSync(dirname(timesFile), { recursive: true });
  writeFileSync(timesFile, `${JSON.stringify(times, null, 2)}\n`);
}
const leftMb = bytesUnder(scratchDir) / 2 ** 20;
if (process.env.STARPO_KEEP_TEST_TMP === '1') console.log(`test temporary files kept: ${scratchDir}`);
else rmSync(timingsDir, { recursive: true, force: true });
console.log(`the tests left ${leftMb.toFixed(0)} MB in their temporary directories`);
process.exit(rc);

/** One runner over `group`, `n` files at a time, reporting to stdout and to the timing file `timings-<i>.jsonl`. */
function runFiles(group, n, i) {
  const args = [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${n}`,
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'scripts/test-timing-reporter.mjs')}`,
    `--test-reporter-destination=${join(timingsDir, `timings-${i}.jsonl`)}`,
    ...group,
  ];
  const env = { ...process.env, TMPDIR: scratchDir, STARPO_LOG_LEVEL: process.env.STARPO_LOG_LEVEL ?? 'warn' };
  const child = spawn(process.execPath, args, { stdio: 'inherit', cwd: root, env });
  return new Promise((done) => child.on('exit', (code) => done(code ?? 1)));
}

/**
 * Unit files that took under BATCH_MS last time are mostly module loading (~1 s of tsx and imports each: 145 of them
 * took 158 s one process each, 31 s in one), so they share processes: `n` batches, each an entry file that imports its
 * files one after the other, each inside a suite named by its path (the report groups its tests under it, and the
 * timing reporter times it). A file that changes process-wide state (environment variables, the working directory,
 * Temporal's runtime) keeps a process of its own; so does a file with no recorded time, until it has one.
 */
function batchable(f) {
  const t = timeOf(f);
  return (
    relative(root, f).startsWith('test/unit/') && t > 0 && t < BATCH_MS && !PROCESS_STATE.test(readFileSync(f, 'utf8'))
  );
}

/** Writes `n` batch entry files under `dir`, the files dealt out longest first; returns their paths. */
function writeBatches(filesLongestFirst, n, dir) {
  const batches = Array.from({ length: n }, () => []);
  filesLongestFirst.forEach((f, i) => batches[i % n].push(f));
  return batches.map((members, i) => {
    const entry = join(dir, `unit-batch-${i + 1}-of-${n}.test.mjs`);
    const suites = members.map((f) => {
      const [name, url] = [relative(root, f), pathToFileURL(f).href].map((x) => JSON.stringify(x));
      return `describe(${name}, async () => { await import(${url}); });`;
    });
    writeFileSync(entry, [`import { describe } from 'node:test';`, ...suites, ''].join('\n'));
    lastTimes[relative(root, entry)] = members.reduce((s, f) => s + timeOf(f), 0);
    return entry;
  });
}

/**
 * The unit files to run beside the service-fault files: the longest first while they fit in `budgetMs` (their
 * last recorded times), and the longest one even if it does not (it would otherwise hold up the shared phase's end).
 */
function besideLane(unitsLongestFirst, budgetMs) {
  if (budgetMs === 0) return [];
  const lane = [];
  let used = 0;
  for (const f of unitsLongestFirst) {
    if (lane.length > 0 && used + timeOf(f) > budgetMs) continue;
    lane.push(f);
    used += timeOf(f);
  }
  return lane;
}

/** The timing reporter's JSON lines of every run in `dir`; none when the runner died before writing (it says why). */
function timingRows(dir) {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .flatMap((f) => readFileSync(join(dir, f), 'utf8').trim().split('\n').filter(Boolean))
    .map((l) => JSON.parse(l));
}

/** The slowest test files of the run, by wall-clock span. */
function printSlowest(rows, n, wallMs) {
  if (rows.length === 0) return;
  // A batch's span is its process's; the files in it are listed by their suites' times.
  const total = rows.filter((r) => !r.batched).reduce((s, r) => s + r.spanMs, 0);
  const listed = rows.filter((r) => !r.batch);
  const minutes = (ms) => (ms / 60000).toFixed(1);
  console.log(
    `\nslowest ${Math.min(n, listed.length)} of ${listed.length} test files ` +
      `(${minutes(total)} min of file time in ${minutes(wallMs)} min of wall clock):`,
  );
  for (const r of listed.sort((a, b) => b.spanMs - a.spanMs).slice(0, n)) {
    const s = (r.spanMs / 1000).toFixed(1).padStart(7);
    console.log(`${s} s  ${String(r.tests).padStart(3)} tests  ${relative(root, r.file)}`);
  }
}

/** The failed tests again, with their errors' first lines: the runners print them mid-log, far above a CI tail. */
function printFailures(failures) {
  if (failures.length === 0) return;
  console.log(`\nfailed tests (${failures.length}):`);
  for (const f of failures) {
    console.log(`✖ ${f.file ? `${relative(root, f.file)} › ` : ''}${f.name}`);
    for (const line of f.error.split('\n')) console.log(`    ${line}`);
  }
}

/** Bytes in the files under `dir` (links not followed). */
function bytesUnder(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += bytesUnder(path);
    else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}
