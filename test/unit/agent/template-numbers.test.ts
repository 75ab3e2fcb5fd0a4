/**
 * Numbers through a chat template as transformers prints them: Python's json.dumps / str of what json.loads reads
 * (test/fixtures/chat/python-numbers.json, from scripts/python_numbers_reference.py), kept from the JSON source text.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'lossless-json';
import { ChatTemplate } from '../../../src/agent/chat-template.ts';
import { pythonNumberText } from '../../../src/agent/template-numbers.ts';

const FIXTURE = JSON.parse(
  readFileSync(new URL('../../fixtures/chat/python-numbers.json', import.meta.url), 'utf8'),
) as { cases: { text: string; dumps: string; str: string }[] };

test('every JSON number is printed as Python prints it: ints exact, floats in repr form', () => {
  assert.ok(FIXTURE.cases.length > 300);
  for (const c of FIXTURE.cases) {
    assert.equal(pythonNumberText(c.text), c.dumps, c.text);
    assert.equal(c.str, c.dumps, c.text); // str and json.dumps agree for JSON numbers
  }
});

test('a template prints kept numbers through tojson and bare, and leaves plain JS numbers and quotes alone', () => {
  const template = new ChatTemplate(
    '{{ messages[0].args | tojson }}|{% for k, v in messages[0].args.items() %}{{ k }}={{ v }} "{{ v }}" {% endfor %}' +
      '|{{ tools | tojson }}|{{ messages[0].content }}',
  );
  const { args, plain } = parse(
    '{"args": {"w": 1.0, "big": 12345678901234567890, "tiny": 1e-7, "n": 3, "x": 0.5}, "plain": 1}',
  ) as {
    args: Record<string, unknown>;
    plain: unknown;
  };
  const tools = parse('[{"minimum": 2.0, "maximum": 1.5e20}]') as unknown[];
  const text = template.render([{ role: 'user', content: 'w is 1.0', args, plain } as never], { tools });
  assert.equal(
    text,
    '{"w": 1.0, "big": 12345678901234567890, "tiny": 1e-07, "n": 3, "x": 0.5}|' +
      'w=1.0 "1.0" big=12345678901234567890 "12345678901234567890" tiny=1e-07 "1e-07" n=3 "3" x=0.5 "0.5" |' +
      '[{"minimum": 2.0, "maximum": 1.5e+20}]|w is 1.0',
  );
  // Plain JS numbers render as the renderer prints them (there is no source text to keep).
  const plainTemplate = new ChatTemplate('{{ messages[0].x | tojson }} {{ messages[0].y }}');
  assert.equal(plainTemplate.render([{ role: 'user', content: '', x: 1.0, y: 2.5 } as never]), '1 2.5');
});
