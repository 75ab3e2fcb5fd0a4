/**
 * The agent protocol: prompts, response parsing, token contexts with loss masks, episodes, expert data.
 * A rollout, with environment text and tokens kept apart:
 *   const episode = new Episode(createEnv(config), config, TEMPLATES.full);
 *   const ctx = new ContextBuilder(tokenizer, CHATML);       // or jinjaChatFormat(...): the model's own template
 *   for (const m of episode.start(seed)) ctx.addMessage(m);
 *   while (!episode.done) {
 *     const { ids, stopped } = generate(ctx.beginResponse());   // ids include the stop if generated
 *     ctx.addResponse(ids, stopped);
 *     const turn = episode.respond(tokenizer.decode(stopped ? ids.slice(0, -1) : ids));
 *     ctx.addUser(turn.userMessage, 'observation');             // reward report (+ next turn)
 *   }
 *   const { ids, mask, turnEnds } = ctx.build();               // turns' rewards go at turnEnds
 */
export {
  CHATML,
  COMPACT_CHAT,
  CHAT_FORMATS,
  TOKEN_ROLES,
  roleCode,
  type ChatFormat,
  type Piece,
  type TokenRole,
} from './chat-format.ts';
export { ChatTemplate, chatTemplateFrom, type ChatMessage, type RenderOptions } from './chat-template.ts';
export { jinjaChatFormat, type JinjaFormatOptions } from './jinja-format.ts';
export { ContextBuilder, tokenizeMessages, type TokenizedContext } from './context.ts';
export { Episode, type EpisodeOptions, type TurnRecord } from './episode.ts';
export {
  DEFAULT_FORMAT_PENALTY,
  loggedReturn,
  signedPenalty,
  trajectoryReturn,
  turnReward,
  type RewardParts,
} from './reward.ts';
export {
  expertEpisode,
  writeExpertDataset,
  writeRecords,
  type ExpertDatasetOptions,
  type ExpertRecord,
} from './expert.ts';
export { MAX_PARSE_CHARS, parseResponse, type AnswerStyle, type ParseOptions, type ParsedResponse } from './parse.ts';
export { TEMPLATES, formatReward, type PromptTemplate, type TemplateName, type TurnView } from './templates.ts';
export type { Message, Role, TextTokenizer } from './types.ts';
