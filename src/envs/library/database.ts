/**
 * The library domain's data: users, books and loans, generated from a seed. Small on purpose (a few
 * users, a couple of dozen books) so every tool result fits in a prompt; publication years are distinct,
 * so "the oldest book by X" always has one answer.
 */
import type { Prng } from '../prng.ts';

export interface Book {
  id: string;
  title: string;
  author: string;
  year: number;
  copies: number;
}

export interface User {
  id: string;
  name: string;
}

export interface Loan {
  userId: string;
  bookId: string;
  borrowedDay: number;
  dueDay: number;
}

export interface LibraryDb {
  /** The current day number; loans are due 14 days after borrowing. */
  today: number;
  /** Late fee per day past the due day, in cents. */
  feePerDayCents: number;
  users: User[];
  books: Book[];
  loans: Loan[];
}

export interface LibrarySizes {
  users: number;
  books: number;
  authors: number;
}

const FIRST = [
  'Ann',
  'Ben',
  'Cara',
  'Dev',
  'Eli',
  'Fay',
  'Gus',
  'Hana',
  'Ivo',
  'June',
  'Kai',
  'Lena',
  'Milo',
  'Nora',
  'Otto',
  'Pia',
];
const LAST = ['Lee', 'Moss', 'Reyes', 'Kim', 'Okafor', 'Berg', 'Costa', 'Novak', 'Shah', 'Ito', 'Frey', 'Dunn'];
const ADJECTIVES = [
  'Silent',
  'Golden',
  'Hidden',
  'Last',
  'Broken',
  'Distant',
  'Frozen',
  'Crimson',
  'Quiet',
  'Wild',
  'Hollow',
  'Bright',
  'Lost',
  'Iron',
  'Paper',
  'Salt',
];
const NOUNS = [
  'River',
  'Garden',
  'Tower',
  'Harbor',
  'Map',
  'Lantern',
  'Forest',
  'Clock',
  'Bridge',
  'Orchard',
  'Letter',
  'Island',
  'Engine',
  'Mirror',
  'Valley',
  'Crown',
];
export const LOAN_DAYS = 14;

/** `count` distinct full names, drawn without replacement from the first × last name grid. */
function names(prng: Prng, count: number): string[] {
  const all = FIRST.flatMap((f) => LAST.map((l) => `${f} ${l}`));
  return prng.shuffled(all).slice(0, count);
}

export function generateLibrary(prng: Prng, sizes: LibrarySizes): LibraryDb {
  const today = 100;
  const authors = names(prng, sizes.authors);
  const titles = prng.shuffled(ADJECTIVES.flatMap((a) => NOUNS.map((n) => `The ${a} ${n}`))).slice(0, sizes.books);
  const years = prng.shuffled(Array.from({ length: 120 }, (_, i) => 1900 + i)).slice(0, sizes.books);
  const books = titles.map((title, i): Book => ({
    id: `B${String(i + 1).padStart(2, '0')}`,
    title,
    author: authors[i % authors.length] as string,
    year: years[i] as number,
    copies: prng.range(1, 3),
  }));
  const users = names(prng, sizes.users).map((name, i): User => ({ id: `U${i + 1}`, name }));
  const loans: Loan[] = [];
  for (const user of users) {
    const count = prng.range(0, 4);
    for (const book of prng.shuffled(books).slice(0, count)) {
      const borrowedDay = prng.range(today - 40, today - 1);
      loans.push({ userId: user.id, bookId: book.id, borrowedDay, dueDay: borrowedDay + LOAN_DAYS });
    }
  }
  return { today, feePerDayCents: 25, users, books, loans };
}

export function loansOf(db: LibraryDb, userId: string): Loan[] {
  return db.loans.filter((l) => l.userId === userId);
}

export function bookById(db: LibraryDb, id: string): Book | undefined {
  return db.books.find((b) => b.id === id);
}

export function lateFeeCents(db: LibraryDb, dueDay: number, returnDay: number): number {
  return Math.max(0, returnDay - dueDay) * db.feePerDayCents;
}
