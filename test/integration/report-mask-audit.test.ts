/**
 * The mask audit on a real chat template: a tiny random-init model directory with Qwen3's tokenizer and
 * template (test/unit/rl/tiny-hf-model.ts) trained for one iteration, reported, and its token view read
 * in headless Chromium against the logged events.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLocalEventReader, replay, type TrajectoryEvent } from '../../src/events/index.ts';
import { trainEmbedded } from '../../src/embedded/driver.ts';
import { withBrowser } from '../../src/report/browser.ts';
import { renderHtml } from '../../src/report/html.ts';
import { loadReport } from '../../src/report/load.ts';
import type { ReportModel } from '../../src/report/model.ts';
import { openSource } from '../../src/report/source.ts';
import { assertTokenViewMatches, textOf } from '../unit/report/token-view.ts';
import { paperConfig, writeTinyModel } from '../unit/rl/tiny-hf-model.ts';

const root = mkdtempSync(join(tmpdir(), 'starpo-report-qwen3-'));
const html = join(root, 'report.html');
const trajectories: TrajectoryEvent[] = [];
let model: ReportModel;
after(() => rmSync(root, { recursive: true, force: true })); // the model and its checkpoints: ~100 MB

before(
  async () => {
    const dir = await writeTinyModel(join(root, 'qwen3-tiny'), 'qwen3');
    await trainEmbedded({ root, runId: 'q', config: paperConfig(dir, ['iterations=1']) });
    const reader = createLocalEventReader({ root });
    for await (const e of replay(reader, 'q')) if (e.kind === 'trajectory') trajectories.push(e);
    await reader.close();
    const source = openSource(['q'], { kind: 'local', runsDir: root });
    model = await loadReport(source);
    await source.close();
    writeFileSync(html, await renderHtml(model));
  },
  { timeout: 300_000 },
);

const IM_START = 151644;

test(
  "on Qwen3's template each turn's response is its assistant tokens, and <|im_start|> is a template chip with loss 0",
  { timeout: 120_000 },
  async () => {
    const chosen = trajectories.find((e) => e.split === 'train' && e.group === 1 && e.rolloutIndex === 1)!;
    await withBrowser(async (context) => {
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error' || msg.type() === 'warning') errors.push(msg.text());
      });
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(pathToFileURL(html).href);
      await page.waitForSelector('body[data-ready="yes"]');
      await page.selectOption('#pick-group', '1');
      await page.selectOption('#pick-rollout', '1');
      const tokens = await assertTokenViewMatches(page, chosen);
      const starts = tokens.filter((t) => t.id === IM_START);
      assert.ok(starts.length >= 1 + 2 * chosen.turns.length, 'system, user and each assistant header open with it');
      assert.deepEqual(
        starts.map((t) => [textOf([t]), t.role, t.loss, t.classes.includes('special')]),
        starts.map(() => ['<|im_start|>', 'template', 0, true]),
      );
      assert.match((await page.textContent('.token-source'))!, /tokenizer of checkpoint main\/00000001/);
      assert.deepEqual(errors, []);
    });
  },
);

test("the run's stop token is Qwen3's <|im_end|>, read from the checkpoint's own tokenizer files", () => {
  const [run] = model.runs;
  assert.deepEqual(
    [run.tokens.tokenizer, run.tokens.stop, run.tokens.text[151645]],
    ['checkpoint main/00000001', [151645], '<|im_end|>'],
  );
});

test('the token logs cost the file a few KiB per trajectory, the strings shared through one table', async (t) => {
  const bare: ReportModel = {
    ...model,
    runs: model.runs.map((r) => ({
      ...r,
      tokens: { ...r.tokens, text: {}, bytes: {}, special: [] },
      trajectories: r.trajectories.map((v) => ({ ...v, tokens: null })),
    })),
  };
  const [full, without] = [await renderHtml(model), await renderHtml(bare)].map((s) => Buffer.byteLength(s));
  const shown = model.runs[0].trajectories.length;
  const tokens = model.runs[0].trajectories.reduce((n, v) => n + v.tokens!.ids.length, 0);
  const perTrajectory = (full - without) / shown;
  t.diagnostic(
    `${shown} trajectories, ${tokens} tokens: +${full - without} bytes (${(perTrajectory / 1024).toFixed(1)} KiB ` +
      `each, ${((full - without) / tokens).toFixed(1)} bytes per token)`,
  );
  assert.equal(shown, trajectories.length);
  assert.ok(perTrajectory < 8 * 1024, `${perTrajectory} bytes per trajectory`);
  assert.ok(Object.keys(model.runs[0].tokens.text).length < tokens / 2, 'each string is stored once per run');
});
