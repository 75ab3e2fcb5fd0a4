/**
 * A model's own chat template: the Jinja source from tokenizer_config.json (`chat_template`, a string or a
 * list of named templates) or chat_template.jinja, rendered with @huggingface/jinja (the renderer
 * transformers.js uses) in the context transformers' `apply_chat_template` builds: the messages, `tools`,
 * `add_generation_prompt`, the tokenizer's special tokens (bos_token, eos_token, …) and extra switches such
 * as Qwen3's `enable_thinking`.
 */
import { Template } from '@huggingface/jinja';
import { ConfigError, StarpoError } from '../errors.ts';
import { markNumbers } from './template-numbers.ts';

/** A message as chat templates read it (OpenAI-style; tool calls and reasoning are optional). */
export interface ChatMessage {
  readonly role: string;
  readonly content: string;
  readonly tool_calls?: readonly unknown[];
  readonly reasoning_content?: string;
  readonly name?: string;
}

export interface RenderOptions {
  readonly addGenerationPrompt?: boolean;
  /** OpenAI-style function schemas, passed as the template's `tools`. */
  readonly tools?: readonly unknown[];
  /** Qwen3's thinking switch; undefined = leave the template's default (not passed). */
  readonly enableThinking?: boolean;
}

const SPECIAL_TOKEN_FIELDS = [
  'bos_token',
  'eos_token',
  'unk_token',
  'pad_token',
  'sep_token',
  'cls_token',
  'mask_token',
];

export class ChatTemplate {
  private readonly template: Template;
  private readonly specials: Readonly<Record<string, string>>;

  /** @param specials the tokenizer's special tokens by field name (bos_token: '<|begin_of_text|>', …) */
  constructor(
    readonly source: string,
    specials: Readonly<Record<string, string>> = {},
  ) {
    try {
      this.template = new Template(source);
    } catch (cause) {
      throw new ConfigError('chat_template', `does not parse: ${(cause as Error).message}`, { cause });
    }
    this.specials = { ...specials };
  }

  /** Numbers given as LosslessNumbers (lossless-json) are printed as Python prints them (template-numbers.ts). */
  render(messages: readonly ChatMessage[], o: RenderOptions = {}): string {
    const numbers = markNumbers({ messages, tools: o.tools });
    const marked = numbers.value as { messages: ChatMessage[]; tools?: unknown[] };
    const context: Record<string, unknown> = {
      ...this.specials,
      messages: marked.messages,
      add_generation_prompt: o.addGenerationPrompt ?? false,
    };
    if (o.tools) context.tools = marked.tools;
    if (o.enableThinking !== undefined) context.enable_thinking = o.enableThinking;
    try {
      return numbers.restore(this.template.render(context));
    } catch (cause) {
      throw new StarpoError(`chat template failed to render: ${(cause as Error).message}`, { cause });
    }
  }
}

/**
 * The template a model directory defines: chat_template.jinja wins (as in transformers), else
 * tokenizer_config.json's `chat_template` (the "default" entry of a list); null when there is none.
 */
export function chatTemplateFrom(
  tokenizerConfig: Readonly<Record<string, unknown>>,
  jinjaFile?: string,
): ChatTemplate | null {
  const specials: Record<string, string> = {};
  for (const field of SPECIAL_TOKEN_FIELDS) {
    const v = tokenizerConfig[field];
    const text = typeof v === 'string' ? v : (v as { content?: unknown } | null)?.content;
    if (typeof text === 'string') specials[field] = text;
  }
  const source = jinjaFile ?? pickTemplate(tokenizerConfig.chat_template);
  return source === null ? null : new ChatTemplate(source, specials);
}

function pickTemplate(value: unknown): string | null {
  if (value == null) return null;
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    const entry = value.find((t) => (t as { name?: unknown })?.name === 'default');
    const template = (entry as { template?: unknown } | undefined)?.template;
    if (typeof template === 'string') return template;
  }
  throw new ConfigError('chat_template', 'is neither a string nor a list with a "default" template');
}
