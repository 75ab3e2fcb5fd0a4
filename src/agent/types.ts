/** Types shared by the agent-protocol modules. */

/**
 * What the context builder needs from a tokenizer. The policy's tokenizers (src/policy/tokenizer)
 * satisfy it structurally; tests use a tiny character-level one.
 */
export interface TextTokenizer {
  encode(text: string): number[];
  decode(ids: readonly number[]): string;
}

export type Role = 'system' | 'user' | 'assistant';

export interface Message {
  role: Role;
  content: string;
}
