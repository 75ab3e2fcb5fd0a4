/**
 * The library's functions, described by JSON schemas (OpenAI / Qwen function-calling style) and run
 * against the database. Arguments are checked against the schema first (missing, unexpected or mistyped
 * keys fail the call with a message naming the key); results are compact JSON texts.
 */
import type { Json } from '../types.ts';
import type { ToolResult, ToolSchema } from '../tool-provider.ts';
import { bookById, lateFeeCents, loansOf, type LibraryDb } from './database.ts';

type Args = { [key: string]: Json };

const str = (description: string) => ({ type: 'string' as const, description });
const int = (description: string) => ({ type: 'integer' as const, description });

export const LIBRARY_TOOLS: ToolSchema[] = [
  {
    name: 'find_user',
    description: 'Find a library user by full name.',
    parameters: { type: 'object', properties: { name: str('Full name, e.g. "Ann Lee"') }, required: ['name'] },
  },
  {
    name: 'get_borrowed_books',
    description: "List a user's borrowed books with their due days.",
    parameters: { type: 'object', properties: { user_id: str('User id, e.g. "U3"') }, required: ['user_id'] },
  },
  {
    name: 'search_books',
    description: 'List the books by an author, with publication years.',
    parameters: { type: 'object', properties: { author: str('Full author name') }, required: ['author'] },
  },
  {
    name: 'get_book',
    description: 'Details of one book: title, author, year, copies.',
    parameters: { type: 'object', properties: { book_id: str('Book id, e.g. "B07"') }, required: ['book_id'] },
  },
  {
    name: 'compute_late_fee',
    description: 'Late fee in cents for a book due on due_day and returned on return_day.',
    parameters: {
      type: 'object',
      properties: { due_day: int('Due day number'), return_day: int('Return day number') },
      required: ['due_day', 'return_day'],
    },
  },
];

const fail = (error: string, errorKind = 'arguments'): ToolResult => ({ ok: false, output: '', error, errorKind });
const ok = (value: Json): ToolResult => ({ ok: true, output: JSON.stringify(value) });

/** Null when `args` fit the schema, else the message of the first mismatch. */
export function checkArguments(schema: ToolSchema, args: Args): string | null {
  const { properties, required } = schema.parameters;
  for (const key of required) if (!Object.hasOwn(args, key)) return `missing argument "${key}"`;
  for (const [key, value] of Object.entries(args)) {
    const spec = properties[key];
    if (!spec) return `unexpected argument "${key}"`;
    const fits =
      spec.type === 'integer'
        ? Number.isInteger(value)
        : spec.type === 'number'
          ? typeof value === 'number'
          : typeof value === spec.type;
    if (!fits) return `argument "${key}" must be ${spec.type === 'integer' ? 'an integer' : `a ${spec.type}`}`;
  }
  return null;
}

const HANDLERS: Record<string, (db: LibraryDb, args: Args) => ToolResult> = {
  find_user(db, { name }) {
    const user = db.users.find((u) => u.name.toLowerCase() === String(name).trim().toLowerCase());
    return user ? ok({ user_id: user.id, name: user.name }) : fail(`no user named "${String(name)}"`, 'not-found');
  },
  get_borrowed_books(db, { user_id }) {
    if (!db.users.some((u) => u.id === user_id)) return fail(`no user with id "${String(user_id)}"`, 'not-found');
    return ok(
      loansOf(db, String(user_id)).map((l) => ({
        book_id: l.bookId,
        title: bookById(db, l.bookId)?.title ?? '',
        due_day: l.dueDay,
      })),
    );
  },
  search_books(db, { author }) {
    const wanted = String(author).trim().toLowerCase();
    const books = db.books.filter((b) => b.author.toLowerCase() === wanted);
    return ok(books.map((b) => ({ book_id: b.id, title: b.title, year: b.year })));
  },
  get_book(db, { book_id }) {
    const b = bookById(db, String(book_id));
    return b
      ? ok({ book_id: b.id, title: b.title, author: b.author, year: b.year, copies: b.copies })
      : fail(`no book with id "${String(book_id)}"`, 'not-found');
  },
  compute_late_fee(db, { due_day, return_day }) {
    const days = Math.max(0, (return_day as number) - (due_day as number));
    return ok({ days_late: days, fee_cents: lateFeeCents(db, due_day as number, return_day as number) });
  },
};

/** Runs one library function; unknown names and bad arguments are failed calls, never exceptions. */
export function callLibraryTool(db: LibraryDb, name: string, args: Args): ToolResult {
  const schema = LIBRARY_TOOLS.find((t) => t.name === name);
  const handler = HANDLERS[name];
  if (!schema || !handler) return fail(`unknown tool "${name}"`, 'unknown-tool');
  const problem = checkArguments(schema, args);
  return problem ? fail(problem) : handler(db, args);
}
