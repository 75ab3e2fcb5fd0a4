/*
 * Boots the report page from the embedded model; in dashboard mode (body[data-endpoint]) it polls the
 * server for a fresh model and redraws when a run has moved on. window.starpoReport exposes the charts
 * (tests read their point counts) and `ready` once the first render is done.
 */
(function (S) {
  'use strict';
  const state = { charts: {}, fingerprint: '', browser: null };
  window.starpoReport = { charts: state.charts, ready: false, model: null };

  function runsTable(model) {
    const header = [
      'run',
      'env',
      'env spec',
      'iterations',
      'train success',
      'val success',
      'oracle ceiling',
      'echo-trap warnings',
      'forks',
    ];
    const rows = model.runs.map((r) => {
      const last = r.iterations[r.iterations.length - 1];
      const lastVal = r.iterations.filter((p) => p.metrics['val/success_rate'] !== undefined).pop();
      return S.el(
        'tr',
        { 'data-run': r.runId },
        [
          r.runId,
          r.env || '?',
          r.envSpecId || '–',
          r.lastIteration + ' / ' + (r.plannedIterations || '?'),
          S.fmt(last && last.metrics.success_rate),
          S.fmt(lastVal && lastVal.metrics['val/success_rate']),
          r.oracle ? S.fmt(r.oracle.successRate) : '–',
          String(r.warnings.length),
          String((r.forks || []).length),
        ].map((c) => S.el('td', {}, c)),
      );
    });
    return S.el(
      'table',
      { class: 'runs' },
      S.el(
        'thead',
        {},
        S.el(
          'tr',
          {},
          header.map((h) => S.el('th', {}, h)),
        ),
      ),
      S.el('tbody', {}, rows),
    );
  }

  /** One run: its whole config, folded. Several: only the knobs whose values differ, side by side. */
  function configView(model) {
    const runs = model.runs;
    if (runs.length === 1) {
      return S.el(
        'details',
        { class: 'config' },
        S.el('summary', {}, 'config'),
        S.el('pre', {}, JSON.stringify(runs[0].config, null, 1)),
      );
    }
    const keys = Array.from(new Set(runs.flatMap((r) => Object.keys(r.config))))
      .sort()
      .filter((k) => new Set(runs.map((r) => JSON.stringify(r.config[k]))).size > 1);
    if (!keys.length) return S.el('p', {}, 'configs are identical');
    return S.el(
      'details',
      { class: 'config', open: true },
      S.el('summary', {}, 'config differences'),
      S.el(
        'table',
        { class: 'runs' },
        S.el(
          'thead',
          {},
          S.el(
            'tr',
            {},
            S.el('th', {}, 'knob'),
            runs.map((r) => S.el('th', {}, r.runId)),
          ),
        ),
        S.el(
          'tbody',
          {},
          keys.map((k) =>
            S.el(
              'tr',
              {},
              S.el('td', {}, k),
              runs.map((r) => S.el('td', {}, r.config[k] === undefined ? '–' : JSON.stringify(r.config[k]))),
            ),
          ),
        ),
      ),
    );
  }

  function warningsList(model) {
    const items = model.runs.flatMap((r) =>
      r.warnings.map((w) =>
        S.el(
          'li',
          { 'data-iteration': w.iteration },
          (model.runs.length > 1 ? r.runId + ' · ' : '') + 'iteration ' + w.iteration + ': ' + w.message,
        ),
      ),
    );
    const forks = model.runs.flatMap((r) =>
      (r.forks || []).map((f) =>
        S.el(
          'li',
          { 'data-iteration': f.fromIteration },
          (model.runs.length > 1 ? r.runId + ' · ' : '') +
            'lineage ' +
            f.lineageId +
            ' from ' +
            (f.parentLineageId || '?') +
            '@' +
            f.fromIteration +
            ': ' +
            f.reason,
        ),
      ),
    );
    return [
      ...(items.length ? [S.el('h2', {}, 'Echo-Trap warnings'), S.el('ul', { class: 'warnings' }, items)] : []),
      ...(forks.length
        ? [S.el('h2', {}, 'Forks (onCollapse=fork)'), S.el('ul', { class: 'warnings forks' }, forks)]
        : []),
    ];
  }

  function statusText(model) {
    const done = Math.max(0, ...model.runs.map((r) => r.lastIteration));
    if (!model.live) return { done, text: done + ' iteration(s) · generated ' + model.generatedAt };
    const parts = model.live.map(
      (l) =>
        (model.runs.length > 1 ? l.runId + ' ' : '') +
        'iteration ' +
        l.iteration +
        ' / ' +
        (l.iterations || '?') +
        (l.stage ? ' (' + l.stage + ')' : ''),
    );
    return { done, text: 'live · ' + parts.join(' · ') + ' · updated ' + new Date().toLocaleTimeString() };
  }

  function renderStatus(model) {
    const status = document.getElementById('status');
    const s = statusText(model);
    status.dataset.iteration = String(s.done);
    status.textContent = s.text;
  }

  function renderCharts(model) {
    for (const chart of Object.values(state.charts)) chart.destroy();
    for (const key of Object.keys(state.charts)) delete state.charts[key];
    const box = document.getElementById('charts');
    box.replaceChildren();
    const runIds = model.runs.map((r) => r.runId);
    for (const chartModel of model.charts) {
      const figure = S.chartFigure(chartModel);
      box.append(figure);
      state.charts[chartModel.id] = S.drawChart(figure, chartModel, runIds);
    }
  }

  /** What changes when a run moves on; a poll that returns the same fingerprint redraws only the status. */
  function fingerprintOf(model) {
    return model.runs
      .map((r) => [r.runId, r.lastIteration, r.trajectories.length, r.warnings.length, !!r.oracle].join(':'))
      .join('|');
  }

  function render(model) {
    window.starpoReport.model = model;
    renderStatus(model);
    const fingerprint = fingerprintOf(model);
    if (fingerprint === state.fingerprint) return;
    state.fingerprint = fingerprint;
    document.getElementById('title').textContent = model.title;
    document.getElementById('runs').replaceChildren(runsTable(model), configView(model));
    document.getElementById('warnings').replaceChildren(...warningsList(model));
    renderCharts(model);
    state.browser.update(model);
  }

  function poll(endpoint, pollMs) {
    const again = () => setTimeout(() => poll(endpoint, pollMs), pollMs);
    fetch(endpoint, { cache: 'no-store' })
      .then((response) => (response.ok ? response.json() : Promise.reject(new Error('HTTP ' + response.status))))
      .then((model) => {
        render(model);
        document.body.dataset.connected = 'yes';
      })
      // A dashboard outlives restarts of its server: show the gap and keep trying.
      .catch(() => {
        document.body.dataset.connected = 'no';
      })
      .finally(again);
  }

  function boot() {
    const model = JSON.parse(document.getElementById('starpo-model').textContent);
    state.browser = new S.TrajectoryBrowser(document.getElementById('browser'));
    render(model);
    window.starpoReport.ready = true;
    document.body.dataset.ready = 'yes';
    const endpoint = document.body.dataset.endpoint;
    const pollMs = Number(document.body.dataset.pollMs) || 2000;
    if (endpoint) setTimeout(() => poll(endpoint, pollMs), pollMs);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})((window.StarpoReport = window.StarpoReport || {}));
