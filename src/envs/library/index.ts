/**
 * Function calling in a small library domain: a seeded in-memory database of users, books and loans,
 * five JSON-schema tools over it (src/envs/library/tools.ts), and a multi-turn dialogue of questions,
 * each with its ground-truth call sequence and answer. The environment is a ToolProvider: the tool
 * protocol runs the agent's <tool_call>s against it within a turn; the turn's answer is the action.
 * Reward 1 per correct answer; success = every question answered correctly.
 */
import { StarpoError } from '../../errors.ts';
import { checkBudget, checkInteger, episodeOver } from '../common.ts';
import { Prng } from '../prng.ts';
import type { Env, EnvConfigBase, EnvDefinition, EnvSnapshot, Json, StepResult, TaskDescription } from '../types.ts';
import type { ExpectedCall, ToolProvider, ToolResult, ToolSchema } from '../tool-provider.ts';
import { generateLibrary, type LibraryDb } from './database.ts';
import { LIBRARY_TOOLS, callLibraryTool } from './tools.ts';
import { libraryQuestions, normalizeAnswer, type LibraryQuestion } from './tasks.ts';

export { LIBRARY_TOOLS, callLibraryTool, checkArguments } from './tools.ts';
export { libraryQuestions, normalizeAnswer, type LibraryQuestion } from './tasks.ts';
export { generateLibrary, type Book, type LibraryDb, type Loan, type User } from './database.ts';

export interface LibraryConfig extends EnvConfigBase {
  type: 'library';
  /** Questions per episode (1–3), one per turn. */
  questions: number;
  users: number;
  books: number;
  authors: number;
}

const MAX_ANSWER_CHARS = 200;

/** Database and questions of `seed`: a pure function, so rewards can recompute the ground truth. */
export function libraryTask(config: LibraryConfig, seed: number): { db: LibraryDb; questions: LibraryQuestion[] } {
  const db = generateLibrary(new Prng(seed, 0), config);
  return { db, questions: libraryQuestions(db, new Prng(seed, 1), config.questions) };
}

function instruction(): string {
  return (
    'You are a library assistant. Answer each question using the library tools. Call a tool by writing ' +
    '<tool_call>{"name": "...", "arguments": {...}}</tool_call>; its result comes back in <tool_response>. ' +
    'Answer with the number or the title only.\nTools: ' +
    JSON.stringify(LIBRARY_TOOLS)
  );
}

export class LibraryEnv implements Env, ToolProvider {
  readonly type = 'library';
  private db: LibraryDb | null = null;
  private questions: LibraryQuestion[] = [];
  private answers: string[] = [];
  private correct = 0;

  constructor(private readonly config: LibraryConfig) {}

  get done(): boolean {
    return this.db !== null && this.answers.length >= this.questions.length;
  }

  get success(): boolean {
    return this.done && this.correct === this.questions.length;
  }

  describe(): TaskDescription {
    const actionHint = 'a number or a book title';
    return { env: this.type, instruction: instruction(), legend: [], actions: [], actionHint };
  }

  reset(seed: number): string {
    ({ db: this.db, questions: this.questions } = libraryTask(this.config, seed));
    this.answers = [];
    this.correct = 0;
    return this.render();
  }

  /** Any short non-empty text is an answer (normalised: case, spaces, quotes, a \boxed{} wrapper). */
  matchAction(text: string): string | null {
    const t = normalizeAnswer(text);
    return t.length > 0 && t.length <= MAX_ANSWER_CHARS ? t : null;
  }

  step(action: string): StepResult {
    const q = this.current();
    if (!q) throw episodeOver(this.type);
    const right = normalizeAnswer(action) === normalizeAnswer(q.answer);
    this.answers.push(action);
    if (right) this.correct++;
    return {
      observation: this.render(),
      reward: right ? 1 : 0,
      done: this.done,
      success: this.success,
      info: { valid: true, effective: true, correct: right },
    };
  }

  render(): string {
    const db = this.database();
    const q = this.current();
    const n = this.answers.length;
    if (!q) return 'All questions answered.';
    return `Today is day ${db.today}.\nQ${n + 1}/${this.questions.length}: ${q.question}`;
  }

  anchor(): string {
    return this.render();
  }

  snapshot(): EnvSnapshot {
    this.database();
    const q = this.current();
    return {
      kind: 'library',
      question: this.answers.length,
      questions: this.questions.map((x) => x.question),
      answer: q ? q.answer : null,
      expectedCalls: (q ? q.expectedCalls : []) as unknown as Json,
      answers: this.answers,
    };
  }

  toolSchemas(): ToolSchema[] {
    return LIBRARY_TOOLS;
  }

  callTool(name: string, args: { [key: string]: Json }): ToolResult {
    return callLibraryTool(this.database(), name, args);
  }

  private current(): LibraryQuestion | undefined {
    this.database();
    return this.questions[this.answers.length];
  }

  private database(): LibraryDb {
    if (!this.db) throw new StarpoError('library: reset(seed) before use');
    return this.db;
  }
}

export const LIBRARY: EnvDefinition<LibraryConfig> = {
  defaults: {
    type: 'library',
    questions: 3,
    users: 8,
    books: 18,
    authors: 6,
    maxTurns: 3,
    maxActionsPerTurn: 1,
    maxActionsPerTrajectory: 3,
  },
  validate(c) {
    checkBudget(c);
    checkInteger('env.questions', c.questions, 1, 3);
    checkInteger('env.users', c.users, 1, 100);
    // Titles and years are drawn without replacement from 256 titles and 120 years.
    checkInteger('env.books', c.books, 1, 120);
    checkInteger('env.authors', c.authors, 1, c.books);
  },
  create: (c) => new LibraryEnv(c),
  /** Every question has its answer in the database: a perfect agent always succeeds. */
  oracle: (c, seed) => ({ success: 1, detail: { answers: libraryTask(c, seed).questions.map((q) => q.answer) } }),
  expert: (_c, snapshot) => (snapshot.answer === null ? [] : [String(snapshot.answer)]),
  expertCalls: (_c, snapshot) =>
    (snapshot.expectedCalls as unknown as ExpectedCall[]).map((e) => ({
      kind: 'function',
      name: e.name,
      arguments: e.arguments,
    })),
  /** The questions the episode asks (its budget may cut them short), their calls in order. */
  expectedCalls: (c, seed) =>
    libraryTask(c, seed)
      .questions.slice(0, Math.min(c.maxTurns, c.maxActionsPerTrajectory))
      .flatMap((q) => q.expectedCalls),
};
