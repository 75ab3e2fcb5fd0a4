/**
 * The OpenAI-compatible gateway: an HTTP server (node:http, 127.0.0.1 by default) serving a policy through the
 * model's own chat template, recording every call on its episode.
 *   POST /v1/chat/completions        messages, tools, tool_choice, sampling, stop, seed; streaming (SSE) or not
 *   GET  /v1/models[/<id>]           the served model
 *   POST /v1/episodes                a new episode: {id, token} (standalone gateways)
 *   GET  /v1/episodes/<id>           its calls and trajectories
 *   POST /v1/episodes/<id>/reward    {"reward": r[, "call": "<completion id>"][, "success": bool]}
 * An episode is named by `Authorization: Bearer <token>` (or `X-Starpo-Episode: <token>`). A trainer's gateway
 * knows only the tokens it issued; a standalone one opens an episode for any key it has not seen.
 * A reply the client never received (its connection closed first) is dropped from the episode.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatFormat } from '../agent/chat-format.ts';
import type { TextTokenizer } from '../agent/types.ts';
import { log } from '../log.ts';
import type { GenerationBackend } from '../rl/rollout.ts';
import { GenerationBatcher } from './batcher.ts';
import { complete, type CompletionSettings, type Sampling } from './completion.ts';
import { type Episode, EpisodeStore } from './episodes.ts';
import { gatewayChat } from './prompt.ts';
import { type ChatRequest, parseChatRequest, RequestError } from './request.ts';
import { completionBody, errorBody, streamChunks } from './responses.ts';
import { episodeTrajectories, type MergeMode } from './trajectories.ts';

export interface GatewayOptions {
  readonly backend: GenerationBackend;
  readonly tokenizer: TextTokenizer;
  /** The run's chat format; it must carry the model's Jinja template. */
  readonly chat: ChatFormat;
  /** The name /v1/models lists (requests may name any model). */
  readonly modelName: string;
  readonly maxContext: number;
  readonly defaultMaxTokens: number;
  readonly maxTokensCap?: number;
  /** Fixed sampling (training), or null/absent to take each request's temperature and top_p. */
  readonly sampling?: Sampling | null;
  /** Sampling seed of a call; default: the request's seed, else a random one. */
  readonly rowSeed?: CompletionSettings['rowSeed'];
  /** Open an episode for any key not seen before (standalone); default: only issued tokens are accepted. */
  readonly openEpisodes?: boolean;
  /** How GET /v1/episodes/<id> groups calls into trajectories (default prefix). */
  readonly merge?: MergeMode;
  readonly host?: string;
  readonly port?: number;
  readonly maxBatchRows?: number;
}

export interface Gateway {
  /** Base URL of the API, e.g. http://127.0.0.1:40123/v1 (what OPENAI_BASE_URL takes). */
  readonly url: string;
  readonly episodes: EpisodeStore;
  close(): Promise<void>;
}

const BODY_LIMIT = 16 * 1024 * 1024;

function readJson(req: IncomingMessage): Promise<unknown> {
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
        resolve(size === 0 ? {} : JSON.parse(Buffer.concat(parts).toString('utf8')));
      } catch {
        reject(new RequestError('body', 'is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** Resolves true once the response is flushed, false if the connection closed first. */
function delivered(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    res.once('finish', () => resolve(true));
    res.once('close', () => resolve(res.writableFinished));
  });
}

function keyOf(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  const bearer = typeof auth === 'string' && /^Bearer\s+(.+)$/i.exec(auth.trim());
  const header = req.headers['x-starpo-episode'];
  return bearer ? bearer[1] : typeof header === 'string' ? header : null;
}

const seedOf = (request: ChatRequest): number =>
  request.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : Number(BigInt.asUintN(32, BigInt(request.seed)));

export async function startGateway(o: GatewayOptions): Promise<Gateway> {
  const episodes = new EpisodeStore();
  const settings: CompletionSettings = {
    chat: gatewayChat(o.chat, o.tokenizer), tokenizer: o.tokenizer,
    batcher: new GenerationBatcher(o.backend, o.maxBatchRows), maxContext: o.maxContext, defaultMaxTokens: o.defaultMaxTokens,
    maxTokensCap: o.maxTokensCap ?? o.maxContext,
    sampling: o.sampling ?? null, rowSeed: o.rowSeed ?? ((_, __, request) => seedOf(request)),
  };
  const episodeFor = (req: IncomingMessage): Episode => {
    const key = keyOf(req);
    const found = key === null ? undefined : episodes.find(key);
    if (found) return found;
    if (o.openEpisodes) return episodes.openFor(key ?? 'anonymous');
    const why = key === null ? 'no episode token (Authorization: Bearer <token>)' : 'unknown or discarded episode token';
    throw new RequestError(null, why, 401, 'invalid_api_key');
  };
  const ownEpisode = (req: IncomingMessage, id: string): Episode => {
    const episode = episodeFor(req);
    if (episode.id !== id) throw new RequestError(null, `the token does not belong to episode ${id}`, 403);
    return episode;
  };

  async function chatCompletions(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const episode = episodeFor(req);
    const request = parseChatRequest(await readJson(req));
    const sent = delivered(res); // listening from the start: the client may go away during generation
    await episode.track((async () => {
      let c;
      try {
        c = await complete(settings, episode, request);
      } catch (err) {
        if (!(err instanceof RequestError)) episode.failure ??= err as Error;
        throw err;
      }
      const created = Math.floor(Date.now() / 1000);
      if (res.destroyed) {
        episode.drop(c.call);
        return;
      }
      if (request.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        const chunks = streamChunks(c, o.modelName, created, request.includeUsage);
        for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        res.end('data: [DONE]\n\n');
      } else {
        sendJson(res, 200, completionBody(c, o.modelName, created));
      }
      if (!(await sent)) episode.drop(c.call);
    })());
  }

  async function reward(req: IncomingMessage, res: ServerResponse, id: string): Promise<void> {
    const episode = ownEpisode(req, id);
    const body = await readJson(req) as Record<string, unknown>;
    const { reward: r, call, success } = body;
    if (typeof r !== 'number' || !Number.isFinite(r)) throw new RequestError('reward', 'must be a finite number');
    if (call !== undefined && typeof call !== 'string') throw new RequestError('call', 'must be a completion id');
    if (success !== undefined && typeof success !== 'boolean') throw new RequestError('success', 'must be a boolean');
    await episode.settled(); // a call still being served gets its reward too
    try {
      episode.setReward(r, { callId: call, success });
    } catch (err) {
      throw new RequestError('call', (err as Error).message, 404);
    }
    sendJson(res, 200, { id, reward: episode.reward, success: episode.success });
  }

  function describe(req: IncomingMessage, res: ServerResponse, id: string): void {
    const e = ownEpisode(req, id);
    const trajectories = episodeTrajectories(e.calls, o.merge ?? 'prefix', e, e.truncated);
    sendJson(res, 200, { id: e.id, reward: e.reward, success: e.success, calls: e.calls.length, trajectories });
  }

  const model = { id: o.modelName, object: 'model', created: 0, owned_by: 'starpo' };
  const routes: [string, RegExp, (req: IncomingMessage, res: ServerResponse, arg: string) => Promise<void> | void][] = [
    ['POST', /^\/v1\/chat\/completions$/, chatCompletions],
    ['GET', /^\/v1\/models$/, (_, res) => sendJson(res, 200, { object: 'list', data: [model] })],
    ['GET', /^\/v1\/models\/(.+)$/, (_, res) => sendJson(res, 200, model)],
    ['POST', /^\/v1\/episodes$/, (_, res) => {
      if (!o.openEpisodes) throw new RequestError(null, 'this gateway issues episodes itself', 403);
      const e = episodes.issue(`ep-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`);
      sendJson(res, 200, { id: e.id, token: e.token });
    }],
    ['GET', /^\/v1\/episodes\/([^/]+)$/, describe],
    ['POST', /^\/v1\/episodes\/([^/]+)\/reward$/, reward],
  ];

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = routes.find(([method, re]) => method === req.method && re.test(path));
    const handled = route
      ? Promise.resolve().then(() => route[2](req, res, decodeURIComponent(route[1].exec(path)![1] ?? '')))
      : Promise.reject(new RequestError(null, `no route ${req.method} ${path}`, 404));
    handled.catch((err: unknown) => {
      const { status, body } = errorBody(err);
      if (status >= 500) log.error({ err: (err as Error).message, path }, 'gateway error');
      if (!res.headersSent) sendJson(res, status, body);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, o.host ?? '127.0.0.1', () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/v1`,
    episodes,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
