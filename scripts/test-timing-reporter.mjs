// A node:test reporter that writes one JSON object per test file: tests, failures, the summed duration of its
// top-level tests and its wall-clock span, from the runner taking the file up (`test:dequeue` of the test named
// by the file's path) to the file's end (`test:complete` of it), module load and hooks included. Other events
// carry the file too but are no measure of it: every file is enqueued at the start, and its stdout and stderr
// may be reported at the end of the whole run. scripts/test.mjs prints the slowest files from it after the run.
export default async function* timings(source) {
  const files = new Map();
  const fileOf = (path) => {
    const file = files.get(path) ?? { file: path, tests: 0, failed: 0, testsMs: 0, start: null, end: null };
    files.set(path, file);
    return file;
  };
  for await (const { type, data } of source) {
    if (!data?.file) continue;
    const file = fileOf(data.file);
    if (data.name === data.file && data.nesting === 0) {
      if (type === 'test:dequeue') file.start = Date.now();
      if (type === 'test:complete') file.end = Date.now();
    } else if ((type === 'test:pass' || type === 'test:fail') && data.nesting === 0) {
      file.tests++;
      if (type === 'test:fail') file.failed++;
      file.testsMs += data.details?.duration_ms ?? 0;
    }
  }
  for (const { start, end, testsMs, ...f } of files.values()) {
    // A file the runner never finished (it was killed) is measured by its tests alone.
    const spanMs = start !== null && end !== null ? end - start : Math.round(testsMs);
    yield `${JSON.stringify({ ...f, testsMs: Math.round(testsMs), spanMs })}\n`;
  }
}
