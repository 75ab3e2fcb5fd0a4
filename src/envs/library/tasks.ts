/**
 * Library tasks: a short dialogue about one user, one question per turn, each with its ground-truth
 * call sequence (what a careful agent calls, in order, given what earlier turns already returned) and
 * its final answer. Questions build on each other: the user's loans (turn 1) give the due days the
 * fee needs (turn 2) and the book whose author turn 3 asks about.
 */
import type { ExpectedCall } from '../tool-provider.ts';
import type { Prng } from '../prng.ts';
import { bookById, lateFeeCents, loansOf, type LibraryDb } from './database.ts';

export interface LibraryQuestion {
  question: string;
  expectedCalls: ExpectedCall[];
  /** The answer as the agent should give it (a number or a title). */
  answer: string;
}

/** The questions of an episode (at most 3), about a user drawn among those with at least one loan. */
export function libraryQuestions(db: LibraryDb, prng: Prng, count: number): LibraryQuestion[] {
  const borrowers = db.users.filter((u) => loansOf(db, u.id).length > 0);
  const user = prng.pick(borrowers.length > 0 ? borrowers : db.users);
  const loans = loansOf(db, user.id);
  const all: LibraryQuestion[] = [
    {
      question: `How many books does ${user.name} have borrowed?`,
      expectedCalls: [
        { name: 'find_user', arguments: { name: user.name } },
        { name: 'get_borrowed_books', arguments: { user_id: user.id } },
      ],
      answer: String(loans.length),
    },
    {
      question: `What late fee, in cents, does ${user.name} owe if all the books are returned today (day ${db.today})?`,
      expectedCalls: loans.map((l) => ({
        name: 'compute_late_fee',
        arguments: { due_day: l.dueDay, return_day: db.today },
      })),
      answer: String(loans.reduce((sum, l) => sum + lateFeeCents(db, l.dueDay, db.today), 0)),
    },
  ];
  const first = loans[0];
  const book = first && bookById(db, first.bookId);
  if (book) {
    const oldest = db.books.filter((b) => b.author === book.author).reduce((a, b) => (b.year < a.year ? b : a));
    all.push({
      question: `What is the oldest book in the library by the author of "${book.title}"?`,
      expectedCalls: [
        { name: 'get_book', arguments: { book_id: book.id } },
        { name: 'search_books', arguments: { author: book.author } },
      ],
      answer: oldest.title,
    });
  }
  return all.slice(0, count);
}

/** How answers are compared: case, spacing, quotes, a trailing period and a \boxed{} wrapper do not count. */
export function normalizeAnswer(text: string): string {
  let t = text.trim();
  const boxed = /^\\boxed\{([\s\S]*)\}$/.exec(t);
  if (boxed) t = (boxed[1] as string).trim();
  // A period may sit inside or outside the quotes: strip it on both sides of the quote removal.
  t = t
    .replace(/\.$/, '')
    .replace(/^["'“”]+|["'“”]+$/g, '')
    .replace(/\.$/, '')
    .replace(/\s+/g, ' ')
    .trim();
  return t.toLowerCase();
}
