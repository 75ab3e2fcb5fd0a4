/**
 * Loading a tokenizer from its files, whichever kind wrote them: a WordLevel tokenizer.json whose
 * pre-tokenizer isolates every character is our character-level tokenizer (char.ts); anything else is handed
 * to the Hugging Face implementation (hf.ts).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../errors.ts';
import { CHAR_SPLIT_REGEX, CharTokenizer } from './char.ts';
import { asObject, loadHfTokenizer, specialTokenText, type SpecialTokenOverrides } from './hf.ts';
import { TOKENIZER_CONFIG_FILE, TOKENIZER_FILE, type Tokenizer } from './types.ts';

/** Loads from file contents by name (as Tokenizer.toFiles and checkpoints hold them). */
export function loadTokenizer(
  files: Readonly<Record<string, string>>,
  overrides: SpecialTokenOverrides = {},
): Tokenizer {
  const text = files[TOKENIZER_FILE];
  if (text === undefined) throw new ConfigError(TOKENIZER_FILE, 'is missing');
  const json = asObject(text, TOKENIZER_FILE);
  const config =
    files[TOKENIZER_CONFIG_FILE] === undefined ? {} : asObject(files[TOKENIZER_CONFIG_FILE], TOKENIZER_CONFIG_FILE);
  return isCharTokenizerJson(json) ? charTokenizerFromHf(json, config) : loadHfTokenizer(json, config, overrides);
}

/** Loads tokenizer.json (and tokenizer_config.json when present) from a model directory. */
export async function readTokenizer(dir: string, overrides: SpecialTokenOverrides = {}): Promise<Tokenizer> {
  const files: Record<string, string> = { [TOKENIZER_FILE]: await readFile(join(dir, TOKENIZER_FILE), 'utf8') };
  try {
    files[TOKENIZER_CONFIG_FILE] = await readFile(join(dir, TOKENIZER_CONFIG_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return loadTokenizer(files, overrides);
}

function isCharTokenizerJson(json: Record<string, unknown>): boolean {
  const model = json.model as { type?: unknown } | undefined;
  const pre = json.pre_tokenizer as { type?: unknown; pattern?: { Regex?: unknown } } | null | undefined;
  return model?.type === 'WordLevel' && pre?.type === 'Split' && pre.pattern?.Regex === CHAR_SPLIT_REGEX;
}

/** Rebuilds a CharTokenizer from the tokenizer.json/tokenizer_config.json pair it wrote. */
function charTokenizerFromHf(json: Record<string, unknown>, config: Record<string, unknown>): CharTokenizer {
  const model = json.model as { vocab?: unknown; unk_token?: unknown };
  const vocab = asObject(model.vocab ?? null, 'tokenizer.json model.vocab');
  const tokens: string[] = [];
  for (const [token, id] of Object.entries(vocab)) {
    if (!Number.isSafeInteger(id) || (id as number) < 0 || tokens[id as number] !== undefined) {
      throw new ConfigError(
        'tokenizer.json model.vocab',
        `id ${JSON.stringify(id)} of ${JSON.stringify(token)} is invalid or repeated`,
      );
    }
    tokens[id as number] = token;
  }
  if (tokens.length !== Object.keys(vocab).length)
    throw new ConfigError('tokenizer.json model.vocab', 'ids are not 0…n-1');
  const required = (field: string) => {
    const text = specialTokenText(config[field], field);
    if (text === null) throw new ConfigError(field, `not set in ${TOKENIZER_CONFIG_FILE}`);
    return text;
  };
  const unk = typeof model.unk_token === 'string' ? model.unk_token : required('unk_token');
  return new CharTokenizer({
    tokens,
    pad: required('pad_token'),
    eos: required('eos_token'),
    bos: specialTokenText(config.bos_token, 'bos_token'),
    unk,
  });
}
