/*
 * The trajectory browser: pick run / iteration / split / group / rollout and read the episode turn by
 * turn — the state as a coloured grid (or as text), the model's response, executed actions, rewards
 * and tool calls with their outputs — then, folded, its tokens as trained (tokens.js).
 */
(function (S) {
  'use strict';

  /** The state as a grid of cells, or null when a character is not in the legend (then it is shown as text). */
  S.renderGrid = function renderGrid(observation, legend) {
    if (!legend || legend.length === 0) return null;
    const styles = new Map(legend.map((entry) => [entry.symbol, entry]));
    const rows = observation.split('\n').map((row) => Array.from(row));
    if (rows.some((row) => row.length === 0 || row.some((ch) => !styles.has(ch)))) return null;
    return S.el(
      'div',
      { class: 'grid', 'data-rows': rows.length, 'data-cols': rows[0].length },
      rows.map((row) =>
        S.el(
          'div',
          { class: 'grid-row' },
          row.map((ch) => {
            const entry = styles.get(ch);
            return S.el('span', { class: 'cell cell-' + entry.style, title: entry.meaning, 'data-symbol': ch }, ch);
          }),
        ),
      ),
    );
  };

  function toolCallView(call) {
    return S.el(
      'details',
      { class: 'tool-call', open: true },
      S.el('summary', {}, call.name + (call.ok ? '' : ' (failed)')),
      S.el('div', { class: 'label' }, 'input'),
      S.el('pre', { class: 'tool-input' }, call.input),
      S.el('div', { class: 'label' }, 'output'),
      S.el('pre', { class: 'tool-output' }, call.output),
    );
  }

  function turnView(turn, index, legend) {
    const grid = S.renderGrid(turn.observation, legend);
    const penalty = turn.formatPenalty ? ' · format penalty ' + S.fmt(turn.formatPenalty) : '';
    const reward = 'reward ' + S.fmt(turn.envReward) + penalty;
    return S.el(
      'article',
      { class: 'turn', 'data-turn': index + 1 },
      S.el('h4', {}, 'Turn ' + (index + 1) + ' · ' + reward),
      S.el(
        'div',
        { class: 'turn-body' },
        S.el('div', { class: 'state' }, grid || S.el('pre', { class: 'observation' }, turn.observation)),
        S.el(
          'div',
          { class: 'io' },
          S.el('div', { class: 'label' }, 'response'),
          S.el('pre', { class: 'response' }, turn.response),
          S.el(
            'div',
            { class: 'actions' },
            'actions: ',
            turn.actions.length ? turn.actions.map((a) => S.el('code', {}, a)) : S.el('em', {}, 'none executed'),
          ),
          turn.toolCalls.length ? turn.toolCalls.map(toolCallView) : null,
        ),
      ),
    );
  }

  /** The state after the last turn, when the report could re-enact it. */
  function finalView(t, legend) {
    if (t.finalObservation === undefined) return null;
    const grid = S.renderGrid(t.finalObservation, legend);
    return S.el(
      'article',
      { class: 'turn final' },
      S.el('h4', {}, 'Final state · ' + (t.success ? 'success' : 'no success')),
      grid || S.el('pre', { class: 'observation' }, t.finalObservation),
    );
  }

  const unique = (xs) => Array.from(new Set(xs)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const numeric = (xs) => unique(xs.map(Number)).sort((a, b) => a - b);

  /** The current choice, kept valid: each level falls back to its first (iteration: last) option. */
  function normalise(choice, model) {
    const runs = model.runs.filter((r) => r.trajectories.length > 0);
    const run = runs.find((r) => r.runId === choice.run) || runs[0];
    if (!run) return null;
    const iterations = run.trajectoryIterations;
    const iteration = iterations.includes(Number(choice.iteration))
      ? Number(choice.iteration)
      : iterations[iterations.length - 1];
    const atIteration = run.trajectories.filter((t) => t.iteration === iteration);
    const splits = unique(atIteration.map((t) => t.split));
    const split = splits.includes(choice.split) ? choice.split : splits[0];
    const inSplit = atIteration.filter((t) => t.split === split);
    const groups = numeric(inSplit.map((t) => t.group));
    const group = groups.includes(Number(choice.group)) ? Number(choice.group) : groups[0];
    const rollouts = inSplit.filter((t) => t.group === group);
    const indices = numeric(rollouts.map((t) => t.rollout));
    const rollout = indices.includes(Number(choice.rollout)) ? Number(choice.rollout) : indices[0];
    return {
      runs,
      run,
      iterations,
      splits,
      groups,
      indices,
      trajectory: rollouts.find((t) => t.rollout === rollout),
      choice: { run: run.runId, iteration, split, group, rollout },
    };
  }

  function pickers(view, onPick) {
    const opts = (xs) => xs.map((x) => ({ value: x, label: String(x) }));
    const c = view.choice;
    return S.el(
      'div',
      { class: 'pickers' },
      view.runs.length > 1
        ? S.select('pick-run', 'run', opts(view.runs.map((r) => r.runId)), c.run, (v) => onPick({ run: v }))
        : null,
      S.select('pick-iteration', 'iteration', opts(view.iterations), c.iteration, (v) => onPick({ iteration: v })),
      S.select('pick-split', 'split', opts(view.splits), c.split, (v) => onPick({ split: v })),
      S.select('pick-group', 'group', opts(view.groups), c.group, (v) => onPick({ group: v })),
      S.select('pick-rollout', 'rollout', opts(view.indices), c.rollout, (v) => onPick({ rollout: v })),
    );
  }

  function summary(run, t) {
    const note =
      run.trajectoryIterations.length < run.trajectoryIterationsTotal
        ? ' (trajectories of ' +
          run.trajectoryIterations.length +
          ' of ' +
          run.trajectoryIterationsTotal +
          ' iterations kept)'
        : '';
    return S.el(
      'p',
      { class: 'trajectory-summary', 'data-seed': t.seed },
      'env ' +
        (run.env || '?') +
        ' · seed ' +
        t.seed +
        ' · return ' +
        S.fmt(t.return) +
        ' · ' +
        (t.success ? 'success' : 'no success') +
        ' · ' +
        t.turns.length +
        ' turn(s)' +
        note,
    );
  }

  S.TrajectoryBrowser = class TrajectoryBrowser {
    constructor(root) {
      this.root = root;
      this.choice = {};
      this.model = null;
      this.tokensOpen = false;
    }

    update(model) {
      this.model = model;
      this.render();
    }

    pick(change) {
      Object.assign(this.choice, change);
      this.render();
    }

    render() {
      const view = this.model && normalise(this.choice, this.model);
      // The section's own state, read now: its toggle event is queued, so a pick right after a click would
      // otherwise render the next trajectory's section as the click left the flag, not the section.
      const shown = this.root.querySelector('details.tokens');
      if (shown) this.tokensOpen = shown.open;
      this.root.replaceChildren();
      if (!view) {
        this.root.append(S.el('p', { class: 'empty' }, 'no trajectories yet'));
        return;
      }
      this.choice = view.choice;
      const t = view.trajectory;
      this.root.append(
        pickers(view, (change) => this.pick(change)),
        summary(view.run, t),
        S.el(
          'div',
          { class: 'turns' },
          t.turns.map((turn, i) => turnView(turn, i, view.run.legend)),
          finalView(t, view.run.legend),
        ),
        S.tokenSection(t, view.run, this.tokensOpen, (open) => {
          this.tokensOpen = open;
        }),
      );
    }
  };
})((window.StarpoReport = window.StarpoReport || {}));
