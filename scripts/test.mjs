#!/usr/bin/env node
// Checks formatting (Prettier), lint (ESLint) and types (tsc), then runs the tests with node's built-in runner
// (TypeScript through tsx).
//   node scripts/test.mjs              unit + integration (starts the local services if needed)
//   node scripts/test.mjs unit         unit tests only (no services)
//   node scripts/test.mjs integration  integration tests only
// Node 20's runner takes no globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

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
// One file at a time: the machine has 2 cores and several tests train models or use every service.
// Trainer progress lines would drown the test report; STARPO_LOG_LEVEL=info brings them back.
const timingsFile = join(mkdtempSync(join(tmpdir(), 'starpo-test-')), 'timings.jsonl');
const rc = run(
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=1',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    `--test-reporter=${join(root, 'scripts/test-timing-reporter.mjs')}`,
    `--test-reporter-destination=${timingsFile}`,
    ...files,
  ],
  { STARPO_LOG_LEVEL: process.env.STARPO_LOG_LEVEL ?? 'warn' },
);
printSlowest(timingsFile, 10);
process.exit(rc);

/** The slowest test files of the run, by wall-clock span (the timing reporter's JSON lines). */
function printSlowest(path, n) {
  let rows;
  try {
    rows = readFileSync(path, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return; // the runner died before the reporter wrote anything: its own output says why
  }
  const total = rows.reduce((s, r) => s + r.spanMs, 0);
  console.log(
    `\nslowest ${Math.min(n, rows.length)} of ${rows.length} test files (${(total / 60000).toFixed(1)} min in all):`,
  );
  for (const r of rows.sort((a, b) => b.spanMs - a.spanMs).slice(0, n)) {
    const s = (r.spanMs / 1000).toFixed(1).padStart(7);
    console.log(`${s} s  ${String(r.tests).padStart(3)} tests  ${relative(root, r.file)}`);
  }
}
