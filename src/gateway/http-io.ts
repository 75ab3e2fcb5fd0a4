/** The HTTP plumbing of the gateway: JSON bodies in and out, the episode key of a request, delivery of a reply. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse } from 'lossless-json';
import { plainNumbers } from '../agent/template-numbers.ts';
import { RequestError } from './request.ts';

export const BODY_LIMIT = 16 * 1024 * 1024;

/**
 * A request body parsed with every number kept as its source text (lossless-json's LosslessNumber), so what the
 * chat template prints of a tool schema or of a call's arguments is what the client wrote (`1.0`, not `1`);
 * parseChatRequest turns the numbers it reads as settings into plain ones.
 */
export function readLosslessJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (b: Buffer) => {
      size += b.length;
      if (size > BODY_LIMIT) reject(new RequestError('body', `larger than ${BODY_LIMIT} bytes`, 413));
      else parts.push(b);
    });
    req.on('end', () => {
      try {
        resolve(size === 0 ? {} : parse(Buffer.concat(parts).toString('utf8')));
      } catch {
        reject(new RequestError('body', 'is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

/** A body with plain JavaScript numbers, as JSON.parse gives them. */
export async function readJson(req: IncomingMessage): Promise<unknown> {
  return plainNumbers(await readLosslessJson(req));
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Resolves true once the response is flushed, false if the connection closed first. */
export function delivered(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    res.once('finish', () => resolve(true));
    res.once('close', () => resolve(res.writableFinished));
  });
}

export function keyOf(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  const bearer = typeof auth === 'string' && /^Bearer\s+(.+)$/i.exec(auth.trim());
  const header = req.headers['x-starpo-episode'];
  return bearer ? bearer[1] : typeof header === 'string' ? header : null;
}
