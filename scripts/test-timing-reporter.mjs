// A node:test reporter that writes one JSON object per test file: tests, failures, the summed duration of its
// top-level tests and its wall-clock span, from the runner taking the file up (`test:dequeue` of the test named
// by the file's path) to the file's end (`test:complete` of it), module load and hooks included. Other events
// carry the file too but are no measure of it: every file is enqueued at the start, and its stdout and stderr
// may be reported at the end of the whole run. scripts/test.mjs prints the slowest files from it after the run.
//
// A batch (scripts/test.mjs: short unit files sharing a process, `unit-batch-<i>-of-<n>.test.mjs`) has one
// top-level suite per test file it imports, named by the file's path: the batch's row is marked `batch`, and each
// suite gives its file a row marked `batched`, timed by the suite's duration (the file's import and its tests).
//
// Each failed test (not a suite failing for its subtests) also gets a row `{ failure: { file, name, error } }`, the
// error's first lines: scripts/test.mjs prints them again at the very end, where a CI log's tail still shows them.
import { join } from 'node:path';

const BATCH_ENTRY = /unit-batch-\d+-of-\d+\.test\.mjs$/;
const repo = new URL('..', import.meta.url).pathname;

export default async function* timings(source) {
  const files = new Map();
  const fileOf = (path) => {
    const file = files.get(path) ?? { file: path, tests: 0, failed: 0, testsMs: 0, start: null, end: null };
    files.set(path, file);
    return file;
  };
  const done = (type) => type === 'test:pass' || type === 'test:fail';
  const nested = new Map(); // tests one level down, by the file they are written in (a batched file's own tests)
  const failures = [];
  for await (const { type, data } of source) {
    const error = type === 'test:fail' ? data.details?.error : undefined;
    if (error && error.failureType !== 'subtestsFailed') {
      failures.push({ failure: { file: data.file ?? null, name: data.name, error: firstLines(error) } });
    }
    if (data?.file && data.nesting === 1 && done(type)) nested.set(data.file, (nested.get(data.file) ?? 0) + 1);
    if (!data?.file || data.nesting !== 0) continue;
    const file = fileOf(data.file);
    if (data.name === data.file) {
      if (type === 'test:dequeue') file.start = Date.now();
      if (type === 'test:complete') file.end = Date.now();
      if (BATCH_ENTRY.test(data.file)) file.batch = true;
    } else if (done(type) && BATCH_ENTRY.test(data.file)) {
      const member = fileOf(join(repo, data.name));
      member.batched = true;
      member.spanMs = Math.max(1, Math.round(data.details?.duration_ms ?? 0)); // 0 would read as "never measured"
      if (type === 'test:fail') member.failed++;
    } else if (done(type)) {
      file.tests++;
      if (type === 'test:fail') file.failed++;
      file.testsMs += data.details?.duration_ms ?? 0;
    }
  }
  for (const f of files.values()) if (f.batched) f.tests = nested.get(f.file) ?? 0;
  for (const { start, end, testsMs, ...f } of files.values()) {
    // A file the runner never finished (it was killed) is measured by its tests alone.
    const spanMs = f.spanMs ?? (start !== null && end !== null ? end - start : Math.round(testsMs));
    yield `${JSON.stringify({ ...f, testsMs: Math.round(testsMs), spanMs })}\n`;
  }
  for (const f of failures) yield `${JSON.stringify(f)}\n`;
}

/** The failure's own message (the runner wraps it as the cause), its first lines, each cut to a screen's width. */
function firstLines(error) {
  const cause = error.cause ?? error;
  const text = String(cause?.message ?? cause);
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(0, 8)
    .map((l) => (l.length > 200 ? `${l.slice(0, 199)}…` : l))
    .join('\n');
}
