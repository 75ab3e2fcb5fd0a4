import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, renderHtml, scriptJson } from '../../../src/report/html.ts';
import type { ReportModel } from '../../../src/report/model.ts';

const model: ReportModel = {
  title: 'run <a> & "b"',
  generatedAt: '2025-06-01T00:00:00.000Z',
  charts: [],
  live: null,
  runs: [
    {
      runId: 'a',
      env: 'sokoban',
      envSpecId: '',
      forks: [],
      plannedIterations: 1,
      lastIteration: 0,
      config: {},
      iterations: [],
      warnings: [],
      oracle: null,
      legend: [],
      trajectoryIterations: [],
      trajectoryIterationsTotal: 0,
      trajectories: [
        {
          iteration: 1,
          split: 'train',
          group: 0,
          rollout: 0,
          seed: 1,
          return: 0,
          success: false,
          turns: [
            {
              observation: 'x',
              response: '</script><script>alert(1)</script>\u2028',
              actions: [],
              envReward: 0,
              formatPenalty: 0,
              toolCalls: [],
            },
          ],
          tokens: null,
        },
      ],
      tokens: {
        roles: ['template'],
        tokenizer: 'test',
        note: null,
        stop: [],
        text: { 7: '</script>' },
        bytes: {},
        special: [],
      },
    },
  ],
};

const embedded = (html: string) =>
  html.match(/<script type="application\/json" id="starpo-model">(.*?)<\/script>/s)![1];

test('the model survives embedding even when a response contains </script>', async () => {
  const html = await renderHtml(model);
  assert.deepEqual(JSON.parse(embedded(html)), model);
  assert.ok(!embedded(html).includes('<'));
  assert.equal(scriptJson('\u2028'), '"\\u2028"');
});

test('the file is self-contained: Chart.js inlined, no external URL loaded, network blocked by CSP', async () => {
  const html = await renderHtml(model);
  assert.match(html, /Chart\.js v4/);
  assert.doesNotMatch(html, /<script[^>]+src=|<link[^>]+href=|sourceMappingURL/);
  assert.match(html, /connect-src 'none'/);
  assert.match(html, /<title>run &#60;a&#62; &#38; &#34;b&#34;<\/title>/);
});

test('the dashboard page names its endpoint and may fetch from its own origin', async () => {
  const html = await renderHtml({ ...model, live: [] }, { endpoint: 'api/model', pollMs: 500 });
  assert.match(html, /<body data-endpoint="api\/model" data-poll-ms="500">/);
  assert.match(html, /connect-src 'self'/);
  assert.equal(escapeHtml(`'`), '&#39;');
});
