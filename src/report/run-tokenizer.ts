/**
 * The tokenizer that turns a run's logged token ids back into text, for the mask audit.
 *
 * The run's own checkpoints come first. Every checkpoint carries the actor's tokenizer files
 * (`actor.tokenizer.json`, `actor.tokenizer_config.json`, `actor.generation_config.json`) exactly as the
 * run tokenised with them; the log's CheckpointEvent says where they are, a local directory for an
 * embedded run or S3 for a durable one read from Kafka, and the checkpoint store checks their hashes;
 * the run's chat wrapping, for its stop token, is rebuilt from the same files. The run config's `model`
 * is only the fallback (through resolveRunModel, as the trainer resolves it): it names a directory on
 * the machine that trained, which a report built elsewhere (a durable run's workers, a laptop) usually
 * lacks and which may have changed since. Runs trained from scratch always resolve that way, since their
 * character tokenizer is built in.
 */
import type { ChatFormat } from '../agent/chat-format.ts';
import { TEMPLATES, type TemplateName } from '../agent/templates.ts';
import type { CheckpointEvent } from '../events/index.ts';
import { log } from '../log.ts';
import { CHAT_TEMPLATE_FILE, generationEosIds } from '../policy/io/model-dir.ts';
import { loadTokenizer } from '../policy/tokenizer/load.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';
import type { RlConfig } from '../rl/config.ts';
import { modelChatFormat, resolveRunModel } from '../rl/run-model.ts';
import { createCheckpointStore } from '../storage/index.ts';
import { iterationDir } from '../storage/layout.ts';
import type { TokenizerLookup } from './tokens.ts';

const ACTOR = 'actor.';
const FILES = ['tokenizer.json', 'tokenizer_config.json', CHAT_TEMPLATE_FILE, 'generation_config.json', 'config.json'];
type Found = Extract<TokenizerLookup, { tokenizer: unknown }>;

/** "main/00000003": how a checkpoint is named on the page. */
const label = (e: CheckpointEvent) => `${e.lineageId}/${iterationDir(e.iteration)}`;

/** The store a checkpoint lives in: its URI less `<run>/checkpoints/<lineage>/<iteration>/` (see storage/layout.ts). */
function storeRoot(e: CheckpointEvent): string {
  const tail = `${e.runId}/checkpoints/${label(e)}/`;
  if (!e.uri.endsWith(tail)) throw new Error(`checkpoint URI ${e.uri} does not end with ${tail}`);
  return e.uri.slice(0, -tail.length);
}

function eosOf(text: string | undefined): number[] {
  const v = text === undefined ? undefined : (JSON.parse(text) as { eos_token_id?: unknown }).eos_token_id;
  return (Array.isArray(v) ? v : [v]).filter((id): id is number => Number.isSafeInteger(id));
}

type Files = Readonly<Record<string, string>>;

/** The run's chat wrapping, rebuilt from the checkpoint's files as the trainer builds it from the model directory's. */
function checkpointChat(tokenizer: Tokenizer, config: Partial<RlConfig>, files: Files): ChatFormat {
  if (!config.model) return TEMPLATES[config.template as TemplateName].chat;
  const eos = generationEosIds(files['generation_config.json']) ?? eosOf(files['config.json']);
  return modelChatFormat({ chatThinking: config.chatThinking ?? 'default' }, files, tokenizer, eos);
}

/**
 * The stop token: what the trainer counts as the model ending its turn (the format's stop, one token; a
 * span ending in another eos got the stop appended as template). Empty when the stop is no single token.
 */
export function stopIdsOf(chat: ChatFormat, tokenizer: Tokenizer): number[] {
  const ids = tokenizer.encode(chat.stop);
  return ids.length === 1 ? ids : [];
}

// Keyed by the run's store and the files' hashes (the event carries them): a dashboard polling a run that
// checkpoints every iteration downloads and parses a 150k-token tokenizer once, not once per checkpoint.
type Loaded = Omit<Found, 'source'>;
const cache = new Map<string, Promise<Loaded>>();

async function loadFrom(e: CheckpointEvent, names: string[], config: Partial<RlConfig>): Promise<Loaded> {
  const loaded = await createCheckpointStore(storeRoot(e)).load(e.runId, e.lineageId, e.iteration, { only: names });
  const files = Object.fromEntries(loaded.files.map((f) => [f.name.slice(ACTOR.length), f.bytes!.toString('utf8')]));
  const tokenizer = loadTokenizer(files);
  let stopIds: number[] = [];
  try {
    stopIds = stopIdsOf(checkpointChat(tokenizer, config, files), tokenizer);
  } catch (err) {
    log.warn({ runId: e.runId, err: (err as Error).message }, "the report cannot tell this run's stop token");
  }
  return { tokenizer, stopIds };
}

async function fromCheckpoint(e: CheckpointEvent, config: Partial<RlConfig>): Promise<Found> {
  const wanted = e.files.filter((f) => FILES.some((name) => f.name === ACTOR + name));
  if (!wanted.some((f) => f.name === `${ACTOR}tokenizer.json`)) throw new Error('it has no actor.tokenizer.json');
  const hashes = wanted.map((f) => f.sha256).sort();
  const key = JSON.stringify([storeRoot(e), e.runId, hashes, config.model, config.template, config.chatThinking]);
  let found = cache.get(key);
  if (!found) {
    found = loadFrom(
      e,
      wanted.map((f) => f.name),
      config,
    );
    found.catch(() => cache.delete(key));
    cache.set(key, found);
  }
  return { ...(await found), source: `checkpoint ${label(e)}` };
}

async function fromConfig(config: Partial<RlConfig>): Promise<Found> {
  const m = await resolveRunModel(config as RlConfig);
  const source = config.model ? `the run config's model ${config.model}` : 'the built-in character tokenizer';
  return { tokenizer: m.tokenizer, source, stopIds: stopIdsOf(m.chat, m.tokenizer) };
}

const why = (err: unknown) => (err as Error).message.split('\n')[0];

/** The run's tokenizer from its latest checkpoint, else from its config; a one-line note when neither works. */
export async function findRunTokenizer(
  checkpoint: CheckpointEvent | undefined,
  config: Partial<RlConfig>,
): Promise<TokenizerLookup> {
  const failures: string[] = [];
  if (checkpoint) {
    try {
      return await fromCheckpoint(checkpoint, config);
    } catch (err) {
      failures.push(`checkpoint ${label(checkpoint)} could not be read (${why(err)})`);
    }
  } else failures.push('the log has no checkpoint');
  if (Object.keys(config).length > 0) {
    try {
      const found = await fromConfig(config);
      // The config's tokenizer may not be the one the run used: say why the checkpoint's was not read.
      if (checkpoint)
        log.warn({ runId: checkpoint.runId }, `${failures.join('; ')}: tokens decoded with ${found.source}`);
      return found;
    } catch (err) {
      failures.push(`the run config's model could not be loaded (${why(err)})`);
    }
  } else failures.push('the log has no run config');
  const note = `no tokenizer: ${failures.join('; ')}`;
  log.warn({ runId: checkpoint?.runId }, note);
  return { note };
}
