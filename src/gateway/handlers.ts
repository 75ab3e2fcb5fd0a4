/**
 * The gateway's routes (see server.ts for the API): each handler gets the gateway's context, the request and
 * the response, and throws RequestError for the client's mistakes (server.ts writes OpenAI's error body).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { complete, type Completion, type CompletionSettings } from './completion.ts';
import type { Episode, EpisodeStore } from './episodes.ts';
import { delivered, keyOf, readJson, readLosslessJson, sendJson } from './http-io.ts';
import { type ChatRequest, parseChatRequest, RequestError } from './request.ts';
import { completionBody, errorBody, streamWriter } from './responses.ts';
import { episodeTrajectories, type MergeMode } from './trajectories.ts';

export interface GatewayContext {
  readonly episodes: EpisodeStore;
  readonly settings: CompletionSettings;
  readonly modelName: string;
  readonly openEpisodes: boolean;
  readonly merge: MergeMode;
}

export type Handler = (
  ctx: GatewayContext,
  req: IncomingMessage,
  res: ServerResponse,
  arg: string,
) => Promise<void> | void;

/** The episode a request names; a trainer's gateway knows only the tokens it issued. */
function episodeFor(ctx: GatewayContext, req: IncomingMessage): Episode {
  const key = keyOf(req);
  const found = key === null ? undefined : ctx.episodes.find(key);
  if (found) return found;
  if (ctx.openEpisodes) return ctx.episodes.openFor(key ?? 'anonymous');
  const why = key === null ? 'no episode token (Authorization: Bearer <token>)' : 'unknown or discarded episode token';
  throw new RequestError(null, why, 401, 'invalid_api_key');
}

function ownEpisode(ctx: GatewayContext, req: IncomingMessage, id: string): Episode {
  const episode = episodeFor(ctx, req);
  if (episode.id !== id) throw new RequestError(null, `the token does not belong to episode ${id}`, 403);
  return episode;
}

/** Generates, records and writes one completion; a reply the client did not receive leaves the episode. */
async function serve(ctx: GatewayContext, episode: Episode, request: ChatRequest, res: ServerResponse): Promise<void> {
  const sent = delivered(res); // listening from the start: the client may go away during generation
  const created = Math.floor(Date.now() / 1000);
  const stream = request.stream ? streaming(res, ctx.modelName, created, request.includeUsage) : undefined;
  let c;
  try {
    c = await complete(ctx.settings, episode, request, stream?.sink);
  } catch (err) {
    if (!(err instanceof RequestError)) episode.failure ??= err as Error;
    if (!stream?.started) throw err; // before the stream began: an HTTP error status
    res.end(`data: ${JSON.stringify(errorBody(err).body)}\n\n`);
    return;
  }
  if (res.destroyed) return episode.drop(c.call);
  if (stream) stream.end(c);
  else sendJson(res, 200, completionBody(c, ctx.modelName, created));
  if (!(await sent)) episode.drop(c.call);
}

/** A server-sent event stream begun once the prompt is accepted; content deltas are written as they come. */
function streaming(res: ServerResponse, model: string, created: number, includeUsage: boolean) {
  let writer: ReturnType<typeof streamWriter> | undefined;
  const write = (chunk: unknown) => {
    if (!res.destroyed) res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  return {
    get started() {
      return writer !== undefined;
    },
    sink: {
      start(id: string) {
        writer = streamWriter(id, model, created, includeUsage);
        res.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
        });
        write(writer.opening());
      },
      text: (delta: string) => write(writer!.text(delta)),
    },
    end(c: Completion & { streamed: string }) {
      for (const chunk of writer!.ending(c, c.streamed)) write(chunk);
      res.end('data: [DONE]\n\n');
    },
  };
}

const chatCompletions: Handler = async (ctx, req, res) => {
  const episode = episodeFor(ctx, req);
  const request = parseChatRequest(await readLosslessJson(req));
  await episode.track(serve(ctx, episode, request, res));
};

const reward: Handler = async (ctx, req, res, id) => {
  const episode = ownEpisode(ctx, req, id);
  const { reward: r, call, success } = (await readJson(req)) as Record<string, unknown>;
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
};

const describe: Handler = (ctx, req, res, id) => {
  const e = ownEpisode(ctx, req, id);
  const trajectories = episodeTrajectories(e.calls, ctx.merge, e, e.truncated);
  sendJson(res, 200, { id: e.id, reward: e.reward, success: e.success, calls: e.calls.length, trajectories });
};

const issue: Handler = (ctx, _, res) => {
  if (!ctx.openEpisodes) throw new RequestError(null, 'this gateway issues episodes itself', 403);
  const e = ctx.episodes.issue(`ep-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`);
  sendJson(res, 200, { id: e.id, token: e.token });
};

const modelOf = (ctx: GatewayContext) => ({ id: ctx.modelName, object: 'model', created: 0, owned_by: 'starpo' });

/** Method, path (its first group is the handler's argument) and handler. */
export const ROUTES: readonly (readonly [string, RegExp, Handler])[] = [
  ['POST', /^\/v1\/chat\/completions$/, chatCompletions],
  ['GET', /^\/v1\/models$/, (ctx, _, res) => sendJson(res, 200, { object: 'list', data: [modelOf(ctx)] })],
  ['GET', /^\/v1\/models\/(.+)$/, (ctx, _, res) => sendJson(res, 200, modelOf(ctx))],
  ['POST', /^\/v1\/episodes$/, issue],
  ['GET', /^\/v1\/episodes\/([^/]+)$/, describe],
  ['POST', /^\/v1\/episodes\/([^/]+)\/reward$/, reward],
];
