/*
 * The mask audit of a trajectory: every token as trained, coloured by its owner (template, system,
 * user, observation, assistant, tool), the tokens with loss (the assistant's) outlined, a legend that
 * counts each role, and per turn whether the model's span ends with a stop token. Text comes from the
 * run's shared table (src/report/tokens.ts); the section's tokens are built when it is first opened,
 * since a long trajectory is thousands of elements.
 */
(function (S) {
  'use strict';
  const LOSS_ROLE = 'assistant';
  const GLYPHS = { ' ': '·', '\n': '⏎', '\t': '→', '\r': '␍' };

  /** Text with whitespace made visible: each blank a subtle glyph of its own, a newline also breaks the line. */
  function visibleText(text) {
    const nodes = [];
    let plain = '';
    for (const ch of text) {
      if (!GLYPHS[ch]) {
        plain += ch;
        continue;
      }
      if (plain) nodes.push(plain);
      plain = '';
      nodes.push(S.el('span', { class: 'ws' }, GLYPHS[ch]));
    }
    if (plain) nodes.push(plain);
    return nodes;
  }

  /** What a token is shown as, and its hover text (id, role, loss, then the exact text JSON-escaped). */
  function tokenFace(id, tokens) {
    const text = tokens.text[id];
    if (text !== undefined) {
      return { nodes: visibleText(text), detail: JSON.stringify(text), newline: text.includes('\n') };
    }
    const bytes = tokens.bytes[id];
    if (bytes !== undefined) {
      const detail = 'bytes ' + bytes + ' (part of a UTF-8 character)';
      return { nodes: ['‹' + bytes + '›'], detail: detail, kind: 'bytes' };
    }
    return { nodes: ['#' + id], detail: 'text unknown', kind: 'id-only' };
  }

  function tokenNode(i, id, role, turn, tokens, special) {
    const face = tokenFace(id, tokens);
    const loss = role === LOSS_ROLE ? 1 : 0;
    const classes = ['tok', 'r-' + role, loss ? 'loss' : '', special.has(id) ? 'special' : '', face.kind || ''];
    const node = S.el(
      'span',
      {
        class: classes.filter(Boolean).join(' '),
        'data-i': i,
        'data-id': id,
        'data-role': role,
        'data-loss': loss,
        'data-turn': turn,
        title: 'id ' + id + ' · ' + role + ' · loss ' + loss + '\n' + face.detail,
      },
      face.nodes,
    );
    return face.newline ? [node, S.el('br')] : [node];
  }

  /** turnOf[i]: the turn whose model-written span holds token i, else undefined. */
  function turnsByToken(audit) {
    const turnOf = [];
    audit.responses.forEach((r, k) => {
      for (let i = r.start; i < r.end; i++) turnOf[i] = k + 1;
    });
    return turnOf;
  }

  function stream(tokens, run) {
    const special = new Set(run.tokens.special);
    const turnOf = turnsByToken(tokens.audit);
    const marks = new Map(tokens.audit.responses.map((r, k) => [r.start, k + 1]));
    const nodes = [];
    tokens.ids.forEach((id, i) => {
      if (marks.has(i)) nodes.push(S.el('span', { class: 'turn-mark' }, 'turn ' + marks.get(i)));
      nodes.push(...tokenNode(i, id, run.tokens.roles[Number(tokens.roles[i])] || '?', turnOf[i], run.tokens, special));
    });
    return S.el('div', { class: 'token-stream' }, nodes);
  }

  function legend(tokens, run) {
    const items = run.tokens.roles.map((role, r) =>
      S.el(
        'span',
        {
          class: 'legend-item r-' + role + (role === LOSS_ROLE ? ' loss' : ''),
          'data-role': role,
          'data-count': tokens.audit.counts[r],
        },
        S.el('span', { class: 'swatch' }),
        role + ' ' + tokens.audit.counts[r],
      ),
    );
    items.push(
      S.el(
        'span',
        { class: 'legend-item loss-key', 'data-role': 'loss', 'data-count': tokens.audit.loss },
        S.el('span', { class: 'swatch' }),
        'loss 1 (outlined): ' + tokens.audit.loss + ' · every other token loss 0',
      ),
    );
    return S.el('div', { class: 'token-legend' }, items);
  }

  function stopText(r) {
    if (r.stop === null) return 'stop tokens unknown';
    return r.stop
      ? 'ends with the stop token'
      : 'no stop token at its end (cut at the length limit, or ended otherwise)';
  }

  function turnList(audit) {
    return S.el(
      'ul',
      { class: 'token-turns' },
      audit.responses.map((r, k) =>
        S.el(
          'li',
          {
            class: r.stop === false ? 'warn' : '',
            'data-turn': k + 1,
            'data-stop': r.stop === null ? 'unknown' : r.stop ? 'yes' : 'no',
          },
          'turn ' + (k + 1) + ': ' + (r.end - r.start) + ' model-written tokens, ' + stopText(r),
        ),
      ),
    );
  }

  function sourceLine(run) {
    const t = run.tokens;
    return t.tokenizer
      ? S.el('p', { class: 'token-source' }, 'text: each token decoded alone with the tokenizer of ' + t.tokenizer)
      : S.el('p', { class: 'token-note warn' }, 'ids only, no text: ' + t.note);
  }

  function body(t, run) {
    const problems = t.tokens.audit.problems;
    return [
      sourceLine(run),
      legend(t.tokens, run),
      turnList(t.tokens.audit),
      problems.length
        ? S.el(
            'ul',
            { class: 'token-problems warn' },
            problems.map((p) => S.el('li', {}, p)),
          )
        : null,
      stream(t.tokens, run),
    ];
  }

  function summaryText(t) {
    if (!t.tokens) return 'Tokens · no token log (the events predate schema v4)';
    const a = t.tokens.audit;
    const unstopped = a.responses.filter((r) => r.stop === false).length;
    return (
      'Tokens · ' +
      t.tokens.ids.length +
      ' tokens, ' +
      a.loss +
      ' with loss' +
      (unstopped ? ' · ' + unstopped + ' turn(s) without a stop token' : '') +
      (a.problems.length ? ' · ' + a.problems.length + ' problem(s)' : '')
    );
  }

  /** The section for trajectory t of run; `open` and `onToggle` keep it open across picks. */
  S.tokenSection = function tokenSection(t, run, open, onToggle) {
    const details = S.el(
      'details',
      { class: 'tokens', 'data-state': t.tokens ? 'logged' : 'no-log', open: open },
      S.el('summary', {}, summaryText(t)),
    );
    let filled = false;
    const fill = () => {
      if (filled || !details.open) return;
      filled = true;
      details.append(
        ...(t.tokens
          ? body(t, run)
          : [
              S.el(
                'p',
                { class: 'token-note' },
                'This trajectory was logged without its tokens, so its loss mask cannot be shown.',
              ),
            ]
        ).filter(Boolean),
      );
    };
    details.addEventListener('toggle', () => {
      fill();
      onToggle(details.open);
    });
    fill();
    return details;
  };
})((window.StarpoReport = window.StarpoReport || {}));
