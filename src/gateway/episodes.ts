/**
 * Episodes: one agent run's calls, grouped by the key it authenticates with (`Authorization: Bearer <token>`,
 * or the `X-Starpo-Episode` header). Each call the gateway serves is recorded as the model saw and wrote it —
 * prompt ids with their owners, sampled ids and log-probs, the reply as returned — together with the call it
 * continues (token-in/token-out, see prompt-plan.ts). The reward arrives per episode or per call
 * (POST /v1/episodes/<id>/reward). A discarded episode (its agent process crashed) accepts nothing more.
 */
import { randomBytes } from 'node:crypto';
import { StarpoError } from '../errors.ts';
import type { GatewayMessage } from './request.ts';

export type FinishReason = 'stop' | 'length' | 'tool_calls';

/** One served call. */
export interface CallRecord {
  /** Arrival order in the episode (0, 1, …): also what the call's sampling seed derives from. */
  readonly ordinal: number;
  /** The completion id returned to the client (chatcmpl-…). */
  readonly id: string;
  /** Ordinal of the call whose prompt and sampled tokens this call's prompt starts with; null = rendered whole. */
  readonly parent: number | null;
  readonly promptIds: readonly number[];
  /** roleCode of each prompt token's owner. */
  readonly promptRoles: readonly number[];
  /** What the model wrote, as sampled (the turn's stop included when it wrote one). */
  readonly sampled: readonly number[];
  readonly logprobs: readonly number[];
  /** The sampled ids end with the template's turn stop (then the next turn's close omits it). */
  readonly wroteStop: boolean;
  readonly finishReason: FinishReason;
  /** The request's messages and the reply returned: what a later call must repeat to continue this one. */
  readonly conversation: readonly GatewayMessage[];
  /** The tools the template rendered (JSON): a continuation must render with the same ones. */
  readonly toolsKey: string;
  /** The messages new to this call (after the last assistant message), for the trajectory's turn record. */
  readonly observation: string;
  /** The decoded sampled text (less the stop the model wrote). */
  readonly response: string;
  readonly toolNames: readonly string[];
  /** The client sent back, as a reply of an earlier call, text the model did not write: tokens were re-rendered. */
  readonly diverged: boolean;
  /** Reward reported for this call (POST …/reward with "call"); null = none. */
  reward: number | null;
}

/** Training bookkeeping of an episode the trainer issued (absent for the standalone gateway's episodes). */
export interface EpisodeTask {
  readonly group: number;
  readonly index: number;
  readonly seed: number;
  readonly attempt: number;
}

export class Episode {
  /** Calls served and delivered, by ordinal. */
  readonly calls: CallRecord[] = [];
  reward: number | null = null;
  success: boolean | null = null;
  /** A prompt did not fit the model's context (the call was refused). */
  truncated = false;
  discarded = false;
  /** An error of the gateway itself (not of the request) while serving this episode. */
  failure: Error | null = null;
  private started = 0;
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    readonly id: string,
    readonly token: string,
    readonly task: EpisodeTask | null = null,
  ) {}

  nextOrdinal(): number {
    return this.started++;
  }

  /** Keeps track of a call being served, so a collector can wait for every call to settle. */
  track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    const forget = () => this.inflight.delete(p);
    p.then(forget, forget);
    return p;
  }

  async settled(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  commit(call: CallRecord): void {
    if (this.discarded) return;
    this.calls.push(call);
    this.calls.sort((a, b) => a.ordinal - b.ordinal);
  }

  /** A reply that never reached the client is not part of the episode (unless a later call already continued it). */
  drop(call: CallRecord): void {
    if (this.calls.some((c) => c.parent === call.ordinal)) return;
    const at = this.calls.indexOf(call);
    if (at >= 0) this.calls.splice(at, 1);
  }

  /** Applies a reward report: the episode's (replacing an earlier one) or, with `callId`, one call's. */
  setReward(reward: number, o: { callId?: string; success?: boolean } = {}): void {
    if (o.callId !== undefined) {
      const call = this.calls.find((c) => c.id === o.callId);
      if (!call) throw new StarpoError(`episode ${this.id} has no call ${o.callId}`);
      call.reward = reward;
    } else {
      this.reward = reward;
    }
    if (o.success !== undefined) this.success = o.success;
  }
}

/** The episodes of one gateway, by id and by token. */
export class EpisodeStore {
  private readonly byToken = new Map<string, Episode>();
  private readonly byId = new Map<string, Episode>();

  /** A new episode with a fresh secret token. */
  issue(id: string, task: EpisodeTask | null = null): Episode {
    if (this.byId.has(id)) throw new StarpoError(`episode ${id} exists`);
    return this.add(new Episode(id, `sk-starpo-${randomBytes(16).toString('hex')}`, task));
  }

  /** The standalone gateway's episode for a key the client chose (created on first use). */
  openFor(token: string): Episode {
    return this.byToken.get(token) ?? this.add(new Episode(`ep-${this.byId.size}`, token));
  }

  find(token: string): Episode | undefined {
    return this.byToken.get(token);
  }

  get(id: string): Episode | undefined {
    return this.byId.get(id);
  }

  /** Forgets an episode's token and marks it discarded; returns how many calls it had recorded. */
  discard(episode: Episode): number {
    episode.discarded = true;
    this.byToken.delete(episode.token);
    return episode.calls.length;
  }

  private add(e: Episode): Episode {
    this.byToken.set(e.token, e);
    this.byId.set(e.id, e);
    return e;
  }
}
