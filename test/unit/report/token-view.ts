/**
 * Reading the report's token view (the mask audit) back out of a page in headless Chromium, and checking
 * it against the trajectory event it shows; shared by the browser tests in test/integration/report-*.
 */
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { TOKEN_ROLES } from '../../../src/agent/chat-format.ts';
import type { TrajectoryEvent } from '../../../src/events/index.ts';

export interface ShownToken {
  id: number;
  role: string;
  loss: number;
  turn: number | null;
  classes: string[];
  /** The exact bytes the hover text gives (its JSON-escaped text, or its bytes). */
  bytes: Uint8Array | null;
}

/** The hover text's second line: `"text"` (JSON) or `bytes e4 bd (…)`; null when the page has no text for it. */
function bytesOfTitle(title: string): Uint8Array | null {
  const detail = title.split('\n')[1] ?? '';
  if (detail.startsWith('"')) return new TextEncoder().encode(JSON.parse(detail) as string);
  const hex = /^bytes ([0-9a-f ]+) \(/.exec(detail);
  return hex ? Uint8Array.from(hex[1].split(' '), (h) => parseInt(h, 16)) : null;
}

/** Opens the token section of the trajectory on screen and reads every token shown. */
export async function openTokenView(page: Page): Promise<ShownToken[]> {
  await page.click('details.tokens > summary');
  await page.waitForSelector('details.tokens[open] .token-stream');
  const raw = await page.$$eval('details.tokens .tok', (nodes) =>
    nodes.map((n) => ({
      id: n.getAttribute('data-id'),
      role: n.getAttribute('data-role'),
      loss: n.getAttribute('data-loss'),
      turn: n.getAttribute('data-turn'),
      classes: n.className,
      title: n.getAttribute('title') ?? '',
    })),
  );
  return raw.map((t) => ({
    id: Number(t.id),
    role: t.role ?? '',
    loss: Number(t.loss),
    turn: t.turn === null ? null : Number(t.turn),
    classes: t.classes.split(' '),
    bytes: bytesOfTitle(t.title),
  }));
}

/** The text of tokens as a byte-level decoder makes it: bytes joined, then decoded (a split character whole again). */
export function textOf(tokens: readonly ShownToken[]): string {
  const bytes = tokens.flatMap((t) => [...(t.bytes ?? [])]);
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(Uint8Array.from(bytes));
}

/**
 * The view against its event: the same ids and owners in order, loss 1 exactly on assistant tokens, legend
 * counts equal to the event's roles, and each turn's assistant tokens reading as the turn's response, plus
 * the stop when the view says the model wrote it. Returns the tokens for further checks.
 */
export async function assertTokenViewMatches(page: Page, e: TrajectoryEvent): Promise<ShownToken[]> {
  const tokens = await openTokenView(page);
  assert.deepEqual(
    tokens.map((t) => t.id),
    e.tokenIds,
  );
  assert.deepEqual(
    tokens.map((t) => t.role),
    [...e.tokenRoles].map((d) => TOKEN_ROLES[Number(d)]),
  );
  assert.deepEqual(
    tokens.map((t) => t.loss),
    tokens.map((t) => (t.role === 'assistant' ? 1 : 0)),
  );
  const legend = await page.$$eval('details.tokens .legend-item', (items) =>
    Object.fromEntries(items.map((i) => [i.getAttribute('data-role'), Number(i.getAttribute('data-count'))])),
  );
  const count = (r: number) => [...e.tokenRoles].filter((d) => Number(d) === r).length;
  const expected = Object.fromEntries(TOKEN_ROLES.map((role, r) => [role, count(r)]));
  assert.deepEqual(legend, { ...expected, loss: expected.assistant });
  const stops = await page.$$eval('details.tokens .token-turns li', (items) =>
    items.map((i) => i.getAttribute('data-stop')),
  );
  assert.equal(stops.length, e.turns.length);
  e.turns.forEach((turn, k) => {
    const written = tokens.filter((t) => t.turn === k + 1 && t.role === 'assistant');
    const stop = stops[k] === 'yes' ? textOf(written.slice(-1)) : '';
    assert.equal(textOf(written), turn.response + stop, `turn ${k + 1}`);
  });
  return tokens;
}
