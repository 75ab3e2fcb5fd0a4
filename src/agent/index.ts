/** The agent protocol: prompts, response parsing, token contexts with loss masks, episodes, expert data. */
export { CHATML, COMPACT_CHAT, CHAT_FORMATS, type ChatFormat } from './chat-format.ts';
export { ContextBuilder, tokenizeMessages, type TokenizedContext } from './context.ts';
export { Episode, FORMAT_PENALTY, type EpisodeOptions, type TurnRecord } from './episode.ts';
export { expertEpisode, writeExpertDataset, type ExpertDatasetOptions, type ExpertRecord } from './expert.ts';
export { MAX_PARSE_CHARS, parseResponse, type AnswerStyle, type ParseOptions, type ParsedResponse } from './parse.ts';
export { TEMPLATES, formatReward, type PromptTemplate, type TemplateName, type TurnView } from './templates.ts';
export type { Message, Role, TextTokenizer } from './types.ts';
