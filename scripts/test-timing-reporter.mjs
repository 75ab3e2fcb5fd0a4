// A node:test reporter that writes one JSON object per test file: tests, failures, the summed duration of its
// top-level tests and the wall-clock span from its first event to its last (files run one at a time, so the span
// includes module load and the hooks). scripts/test.mjs prints the slowest files from it after the run.
export default async function* timings(source) {
  const files = new Map();
  for await (const { type, data } of source) {
    if (!data?.file) continue;
    const now = Date.now();
    const file = files.get(data.file) ?? { file: data.file, tests: 0, failed: 0, testsMs: 0, first: now, last: now };
    file.last = now;
    files.set(data.file, file);
    if ((type === 'test:pass' || type === 'test:fail') && data.nesting === 0) {
      file.tests++;
      if (type === 'test:fail') file.failed++;
      file.testsMs += data.details?.duration_ms ?? 0;
    }
  }
  for (const { first, last, testsMs, ...f } of files.values()) {
    yield `${JSON.stringify({ ...f, testsMs: Math.round(testsMs), spanMs: last - first })}\n`;
  }
}
