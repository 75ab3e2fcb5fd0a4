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
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChatFormat } from '../agent/chat-format.ts';
import type { TextTokenizer } from '../agent/types.ts';
import { log } from '../log.ts';
import type { GenerationBackend } from '../policy/engine/handle.ts';
import { GenerationBatcher } from './batcher.ts';
import type { CompletionSettings, Sampling } from './completion.ts';
import { EpisodeStore } from './episodes.ts';
import { type GatewayContext, ROUTES } from './handlers.ts';
import { sendJson } from './http-io.ts';
import { gatewayChat } from './prompt.ts';
import { type ChatRequest, RequestError } from './request.ts';
import { errorBody } from './responses.ts';
import type { MergeMode } from './trajectories.ts';

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

const seedOf = (request: ChatRequest): number =>
  request.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : Number(BigInt.asUintN(32, BigInt(request.seed)));

function contextOf(o: GatewayOptions): GatewayContext {
  const settings: CompletionSettings = {
    chat: gatewayChat(o.chat, o.tokenizer),
    tokenizer: o.tokenizer,
    batcher: new GenerationBatcher(o.backend, o.maxBatchRows),
    maxContext: o.maxContext,
    defaultMaxTokens: o.defaultMaxTokens,
    maxTokensCap: o.maxTokensCap ?? o.maxContext,
    sampling: o.sampling ?? null,
    rowSeed: o.rowSeed ?? ((_, __, request) => seedOf(request)),
  };
  return {
    episodes: new EpisodeStore(),
    settings,
    modelName: o.modelName,
    openEpisodes: o.openEpisodes ?? false,
    merge: o.merge ?? 'prefix',
  };
}

export async function startGateway(o: GatewayOptions): Promise<Gateway> {
  const ctx = contextOf(o);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const route = ROUTES.find(([method, re]) => method === req.method && re.test(path));
    const handled = route
      ? Promise.resolve().then(() => route[2](ctx, req, res, decodeURIComponent(route[1].exec(path)![1] ?? '')))
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
    episodes: ctx.episodes,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
