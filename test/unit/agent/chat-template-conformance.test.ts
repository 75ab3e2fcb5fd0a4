/**
 * The models' own chat templates rendered by starpo against transformers' apply_chat_template on the same files
 * (test/fixtures/chat, made by scripts/hf_reference.py): the same text and the same token ids, case by case —
 * system, multi-turn, Qwen3 thinking on/off and reasoning stripping, tools and tool calls (their numbers printed as
 * Python prints them: 1.0, 1e-07, exact big ints), non-ASCII, whitespace.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parse } from 'lossless-json';
import { type ChatMessage, chatTemplateFrom } from '../../../src/agent/chat-template.ts';
import { type RealTokenizerName, realTokenizer, realTokenizerConfig } from './real-tokenizers.ts';

const FIXTURES = new URL('../../fixtures/chat/', import.meta.url).pathname;

interface Case {
  name: string;
  tokenizer: RealTokenizerName;
  messages: ChatMessage[];
  tools?: unknown[];
  add_generation_prompt: boolean;
  enable_thinking?: boolean;
}
// Parsed keeping each number's source text, as Python's json.loads keeps 1.0 a float and big ints exact.
const cases = parse(readFileSync(`${FIXTURES}conversations.json`, 'utf8')) as Case[];
const expected = (
  JSON.parse(readFileSync(`${FIXTURES}expected.json`, 'utf8')) as {
    cases: Record<string, { text: string; ids: number[] }>;
  }
).cases;

for (const name of ['qwen3', 'llama3'] as const) {
  test(`${name}: rendered text and token ids equal transformers' for every conversation`, () => {
    const template = chatTemplateFrom(realTokenizerConfig(name))!;
    const tokenizer = realTokenizer(name);
    const mine = cases.filter((c) => c.tokenizer === name);
    assert.ok(mine.length >= 7);
    for (const c of mine) {
      const text = template.render(c.messages, {
        addGenerationPrompt: c.add_generation_prompt,
        tools: c.tools,
        enableThinking: c.enable_thinking,
      });
      assert.equal(text, expected[c.name].text, c.name);
      assert.deepEqual(tokenizer.encode(text), expected[c.name].ids, c.name);
    }
  });
}
