/**
 * Whether a warm start kept a pretrained model's general ability: the perplexity of a fixed English passage
 * (written for starpo, no dataset) before and after the supervised steps. A format-only warm start at too high
 * a learning rate teaches the answer tags and destroys the language model under them; its RL then starts from
 * a model that can no longer read the prompt. The warm start logs both figures and warns past GENERAL_PPL_WARN.
 */
import type { PolicyHandle } from '../policy/engine/handle.ts';
import type { TextTokenizer } from '../agent/types.ts';

export const GENERAL_TEXT =
  'The river rises in the hills to the north and reaches the sea after a journey of about two hundred miles. ' +
  'For most of its length it runs through farmland, where wheat and barley grow on the wide plains, and in ' +
  'spring the fields along its banks are often flooded. The largest town on the river was founded as a market ' +
  'more than eight hundred years ago. Today it has a university, a railway station and a busy port, and many ' +
  'of the old stone houses near the bridge have been turned into shops and restaurants. Visitors who walk ' +
  'along the water in the evening can watch the boats come in and hear the bells of the cathedral ring across ' +
  'the town.';

/** A warm start that multiplies the passage's perplexity by more than this is reported as damaging the model. */
export const GENERAL_PPL_WARN = 1.5;

/** exp(−mean log p) of every token of the passage after the first, at temperature 1. */
export async function generalPerplexity(
  actor: Pick<PolicyHandle, 'score'>,
  tokenizer: TextTokenizer,
  text = GENERAL_TEXT,
): Promise<number> {
  const ids = tokenizer.encode(text);
  const tokens = Int32Array.from(ids);
  const attentionMask = new Float32Array(ids.length).fill(1);
  const { logprobs } = await actor.score({ batch: 1, seqLen: ids.length, tokens, attentionMask }, 1);
  let sum = 0;
  for (let t = 1; t < ids.length; t++) sum += logprobs![t]!;
  return Math.exp(-sum / (ids.length - 1));
}
