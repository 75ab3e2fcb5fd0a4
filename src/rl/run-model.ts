/**
 * The model a run trains, resolved once from its config: a tiny model trained from scratch (character
 * tokenizer, the prompt template's own chat wrapping, seeded weights) or a Hugging Face model directory
 * (`model`: its tokenizer, its own chat template, its config and pretrained weights). Both drivers, the
 * warm-start, evaluation and export call this one function, so they cannot disagree about tokens.
 */
import { CHATML, type ChatFormat } from '../agent/chat-format.ts';
import { chatTemplateFrom } from '../agent/chat-template.ts';
import { jinjaChatFormat } from '../agent/jinja-format.ts';
import { TEMPLATES, type TemplateName } from '../agent/templates.ts';
import { ConfigError } from '../errors.ts';
import { type ModelConfig, parseModelConfig } from '../policy/io/config.ts';
import type { Tensor } from '../policy/io/dtype.ts';
import {
  CHAT_TEMPLATE_FILE,
  type ModelDirectory,
  openModelDirectory,
  weightsFingerprint,
} from '../policy/io/model-dir.ts';
import type { LoraSpec, LoraTarget } from '../policy/model/lora.ts';
import type { PolicyState } from '../policy/engine/state.ts';
import { VALUE_HEAD } from '../policy/model/layout.ts';
import { Rng } from '../policy/model/rng.ts';
import { asObject } from '../policy/tokenizer/hf.ts';
import { loadTokenizer } from '../policy/tokenizer/load.ts';
import type { Tokenizer } from '../policy/tokenizer/types.ts';
import type { RlConfig } from './config.ts';
import { scratchTokenizer } from './vocabulary.ts';
import { checkAgentChat } from './agent-config.ts';
import { log } from '../log.ts';
import { resolveModel } from '../models/resolve.ts';

/** What the stages need to turn text into tokens: the tokenizer, and how messages are wrapped. */
export interface RunText {
  readonly tokenizer: Tokenizer;
  readonly chat: ChatFormat;
}

export interface RunModel extends RunText {
  readonly modelConfig: ModelConfig;
  /** LoRA adapters on a frozen base instead of full fine-tuning (loraRank > 0); null = every weight trained. */
  readonly lora: LoraSpec | null;
  /** The pretrained directory the weights start from; null = seeded initialisation. */
  readonly pretrained: ModelDirectory | null;
  /**
   * Files checkpoints carry beside the actor's weights (tokenizer files, chat template, generation config;
   * with LoRA on a pretrained base, base_model.json: its directory and weights' sha256). A resumed run's
   * must equal these: a model directory changed under a run is refused, not silently mixed in.
   */
  readonly assets: Readonly<Record<string, string>>;
}

export const BASE_MODEL_FILE = 'base_model.json';

/** The run's LoRA settings (loraRank 0 = none). */
export function loraOf(c: RlConfig): LoraSpec | null {
  if (c.loraRank === 0) return null;
  return { rank: c.loraRank, alpha: c.loraAlpha, dropout: 0, targets: c.loraTargets.split(',') as LoraTarget[] };
}

const cache = new Map<string, Promise<RunModel>>();

/** The run's model (cached per process: loading a 150k-token tokenizer takes about a second). */
export function resolveRunModel(c: RlConfig): Promise<RunModel> {
  const key = JSON.stringify([
    c.model,
    c.template,
    c.chatThinking,
    c.modelLayers,
    c.modelHidden,
    c.modelHeads,
    c.modelKvHeads,
    c.modelFfn,
    c.modelContext,
    c.loraRank,
    c.loraAlpha,
    c.loraTargets,
  ]);
  let found = cache.get(key);
  if (!found) {
    found = c.model ? pretrainedModel(c) : Promise.resolve(scratchModel(c));
    found.catch(() => cache.delete(key));
    cache.set(key, found);
  }
  return found;
}

/** The HF-layout config of a model trained from scratch, sized by the run config (Llama family: no biases). */
export function scratchModelConfig(c: RlConfig, tokenizer: Tokenizer): ModelConfig {
  return parseModelConfig({
    model_type: 'llama',
    vocab_size: tokenizer.vocabSize,
    hidden_size: c.modelHidden,
    intermediate_size: c.modelFfn,
    num_hidden_layers: c.modelLayers,
    num_attention_heads: c.modelHeads,
    num_key_value_heads: c.modelKvHeads,
    max_position_embeddings: c.modelContext,
    rms_norm_eps: 1e-6,
    rope_theta: 10000,
    tie_word_embeddings: true,
    hidden_act: 'silu',
    eos_token_id: tokenizer.eosId,
    pad_token_id: tokenizer.padId,
  });
}

function scratchModel(c: RlConfig): RunModel {
  const tokenizer = scratchTokenizer();
  const modelConfig = scratchModelConfig(c, tokenizer);
  const chat = TEMPLATES[c.template as TemplateName].chat;
  return { tokenizer, chat, modelConfig, lora: loraOf(c), pretrained: null, assets: tokenizer.toFiles() };
}

async function pretrainedModel(c: RlConfig): Promise<RunModel> {
  const dir = await openModelDirectory(await resolveModel(c.model, { say: (line) => log.info(line) }));
  if (!dir.assets['tokenizer.json']) throw new ConfigError('model', `${dir.dir} has no tokenizer.json`);
  const tokenizer = loadTokenizer(dir.assets);
  if (tokenizer.vocabSize > dir.config.vocabSize) {
    throw new ConfigError(
      'model',
      `the tokenizer has ${tokenizer.vocabSize} tokens, more than config.json's vocab_size ${dir.config.vocabSize}`,
    );
  }
  if (c.modelContext > dir.config.maxPositionEmbeddings) {
    throw new ConfigError(
      'modelContext',
      `${c.modelContext} exceeds the model's max_position_embeddings ${dir.config.maxPositionEmbeddings}`,
    );
  }
  const eosTokenIds = dir.eosTokenIds;
  const lora = loraOf(c);
  const assets = { ...dir.assets };
  if (lora)
    assets[BASE_MODEL_FILE] = `${JSON.stringify({ path: dir.dir, sha256: await weightsFingerprint(dir) }, null, 2)}\n`;
  const chat = modelChatFormat(c, dir.assets, tokenizer, eosTokenIds);
  checkAgentChat(c, chat);
  return { tokenizer, chat, modelConfig: dir.config, lora, pretrained: dir, assets };
}

/**
 * How a pretrained run wraps messages, from its model's files (a model directory's, or the copies a
 * checkpoint carries): the model's own template, or the written-out ChatML for a directory without one.
 */
export function modelChatFormat(
  c: Pick<RlConfig, 'chatThinking'>,
  files: Readonly<Record<string, string>>,
  tokenizer: Tokenizer,
  eosTokenIds: readonly number[],
): ChatFormat {
  const config = files['tokenizer_config.json']
    ? asObject(files['tokenizer_config.json'], 'tokenizer_config.json')
    : {};
  const template = chatTemplateFrom(config, files[CHAT_TEMPLATE_FILE]);
  if (!template) return CHATML;
  const enableThinking = c.chatThinking === 'default' ? undefined : c.chatThinking === 'on';
  return jinjaChatFormat({
    name: 'model',
    template,
    tokenizer,
    eosTokenIds: [...new Set([...eosTokenIds, tokenizer.eosId])],
    enableThinking,
  });
}

/**
 * The starting state of a pretrained run, by model: the directory's weights for the actor and reference; the
 * critic takes the same body (its lm_head goes unused) and a fresh value head, drawn like HF's
 * AutoModelForTokenClassification head (N(0, initializer_range), bias 0) from the critic's seed.
 */
export async function pretrainedStates(
  m: RunModel,
  criticSeed: number,
): Promise<Record<'actor' | 'critic' | 'ref', PolicyState>> {
  if (!m.pretrained) throw new ConfigError('model', 'no pretrained directory');
  const lm = await m.pretrained.readWeights();
  const { hiddenSize: D, initializerRange: std } = m.modelConfig;
  const rng = new Rng(criticSeed);
  const head = Float32Array.from({ length: D }, () => std * rng.normal());
  const critic = new Map(lm);
  critic.set(VALUE_HEAD.weight, { dtype: 'F32', shape: [1, D], data: head });
  critic.set(VALUE_HEAD.bias, { dtype: 'F32', shape: [1], data: new Float32Array(1) });
  const state = (weights: Map<string, Tensor>): PolicyState => ({ weights, optimizer: null, step: 0 });
  return { actor: state(lm), critic: state(critic), ref: state(lm) };
}
