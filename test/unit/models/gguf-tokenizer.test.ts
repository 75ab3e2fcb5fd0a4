/**
 * The GGUF tokenizer builder on the real Qwen3 and Llama 3 vocabularies: each tokenizer.json is written as the
 * `tokenizer.ggml.*` metadata llama.cpp's converter stores (tokens by id, merges as "a b", token types:
 * control for special added tokens, user-defined for the others) and rebuilt; the rebuilt tokenizer must give
 * the original's ids on the multilingual corpus (NFC-normalised: GGUF has no normalizer, Qwen's file does).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { GgufValue } from '../../../src/models/gguf/reader.ts';
import { ggufTokenizerFiles } from '../../../src/models/gguf/tokenizer.ts';
import { loadTokenizer } from '../../../src/policy/tokenizer/load.ts';
import { realTokenizer, realTokenizerFiles, type RealTokenizerName } from '../agent/real-tokenizers.ts';

const CORPUS = readFileSync(new URL('../../fixtures/gguf/corpus.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l)
  .map((l) => l.replaceAll('\\n', '\n').replaceAll('\\t', '\t').normalize('NFC'));

interface TokenizerJson {
  model: { vocab: Record<string, number>; merges: (string | [string, string])[] };
  added_tokens: { id: number; content: string; special: boolean }[];
}

/** What llama.cpp's converter would store for this tokenizer. */
function asGgufMetadata(name: RealTokenizerName, pre: string): Map<string, GgufValue> {
  const files = realTokenizerFiles(name);
  const json = JSON.parse(files['tokenizer.json']!) as TokenizerJson;
  const config = JSON.parse(files['tokenizer_config.json']!) as { eos_token: string };
  const tokens: string[] = [];
  const types: number[] = [];
  for (const [t, id] of Object.entries(json.model.vocab)) [tokens[id], types[id]] = [t, 1];
  for (const a of json.added_tokens) [tokens[a.id], types[a.id]] = [a.content, a.special ? 3 : 4];
  return new Map<string, GgufValue>([
    ['tokenizer.ggml.model', 'gpt2'],
    ['tokenizer.ggml.pre', pre],
    ['tokenizer.ggml.tokens', tokens],
    ['tokenizer.ggml.token_type', types],
    ['tokenizer.ggml.merges', json.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : m))],
    ['tokenizer.ggml.eos_token_id', tokens.indexOf(config.eos_token)],
  ]);
}

for (const [name, pre] of [
  ['qwen3', 'qwen2'],
  ['llama3', 'llama-bpe'],
] as const) {
  test(`${name}'s vocabulary through GGUF metadata (pre "${pre}") tokenizes the corpus as the original`, () => {
    const rebuilt = loadTokenizer(ggufTokenizerFiles(asGgufMetadata(name, pre), name).files);
    const original = realTokenizer(name);
    for (const line of CORPUS) assert.deepEqual(rebuilt.encode(line), original.encode(line), JSON.stringify(line));
  });
}

test('a pre-tokenizer name starpo does not know is refused: its split would change the tokens', () => {
  const meta = asGgufMetadata('qwen3', 'tekken');
  assert.throws(() => ggufTokenizerFiles(meta, 'x.gguf'), /x\.gguf: tokenizer\.ggml\.pre "tekken" is not known/);
});

test('a SentencePiece vocabulary is refused in one line', () => {
  const meta = new Map<string, GgufValue>([['tokenizer.ggml.model', 'llama']]);
  assert.throws(() => ggufTokenizerFiles(meta, 'x.gguf'), /tokenizer\.ggml\.model "llama" is not supported/);
});
