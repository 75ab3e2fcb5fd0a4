/**
 * Runs an external agent program once per episode against a gateway: `sh -c <command>` in its own process
 * group, with the episode's base URL, token and task seed in its environment (AGENT_ENV below; the OPENAI_*
 * pair makes an unmodified `new OpenAI()` talk to the gateway). An attempt succeeds when the program exits 0.
 * A crash, a non-zero exit or running past the timeout kills the whole process group, discards the attempt's
 * episode (its token stops working, its recorded calls are dropped) and runs the episode again with a fresh
 * token — so each episode's calls are kept exactly once. A retried attempt samples what the first would have
 * (seeds derive from the episode and call number, not the attempt). Past `retries` the rollout fails.
 */
import { spawn } from 'node:child_process';
import { AgentError } from '../errors.ts';
import { log } from '../log.ts';
import type { Episode } from './episodes.ts';
import type { Gateway } from './server.ts';

export interface AgentTask {
  readonly group: number;
  readonly index: number;
  readonly seed: number;
}

export interface AgentRunSettings {
  readonly command: string;
  /** Agent processes at once. */
  readonly concurrency: number;
  readonly retries: number;
  readonly timeoutMs: number;
  /** Names the episodes (`<label>-g<group>-r<index>-a<attempt>`) and is passed as STARPO_SPLIT / STARPO_ITERATION. */
  readonly split: string;
  readonly iteration: number;
  readonly cwd?: string;
}

export interface EpisodeResult {
  readonly task: AgentTask;
  /** The attempt that succeeded. */
  readonly episode: Episode;
  readonly attempts: number;
  /** Calls recorded by failed attempts, discarded with them. */
  readonly discardedCalls: number;
}

/** The environment an agent process gets (besides the runner's own). */
export function agentEnv(
  gatewayUrl: string,
  episode: Episode,
  task: AgentTask,
  s: AgentRunSettings,
  attempt: number,
): Record<string, string> {
  return {
    STARPO_BASE_URL: gatewayUrl,
    STARPO_EPISODE_ID: episode.id,
    STARPO_EPISODE_TOKEN: episode.token,
    STARPO_REWARD_URL: `${gatewayUrl}/episodes/${encodeURIComponent(episode.id)}/reward`,
    STARPO_TASK_SEED: String(task.seed),
    STARPO_GROUP: String(task.group),
    STARPO_ROLLOUT_INDEX: String(task.index),
    STARPO_ATTEMPT: String(attempt),
    STARPO_SPLIT: s.split,
    STARPO_ITERATION: String(s.iteration),
    OPENAI_BASE_URL: gatewayUrl,
    OPENAI_API_KEY: episode.token,
  };
}

interface Exit {
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  output: string;
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  live.delete(pid);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Process groups of running agents: each is its own group (detached), so the trainer ends them if it exits first. */
const live = new Set<number>();
process.once('exit', () => {
  for (const pid of live) killGroup(pid);
});

/** Runs the command to its exit (or the timeout), then kills whatever of its process group is left. */
function runProcess(command: string, env: Record<string, string>, s: AgentRunSettings): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: s.cwd,
      env: { ...process.env, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) live.add(child.pid);
    let output = '';
    const keep = (b: Buffer) => {
      output = (output + b.toString('utf8')).slice(-4000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, s.timeoutMs);
    const done = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      killGroup(child.pid);
      resolve({ code, signal, timedOut, output });
    };
    child.once('error', (err) => done(null, `spawn failed: ${err.message}`));
    child.once('exit', done);
  });
}

const describeExit = (e: Exit): string =>
  e.timedOut ? 'timed out' : e.signal ? `killed by ${e.signal}` : `exit code ${e.code}`;

async function runEpisode(gateway: Gateway, task: AgentTask, s: AgentRunSettings): Promise<EpisodeResult> {
  let discardedCalls = 0;
  for (let attempt = 0; ; attempt++) {
    const id = `${s.split}${s.iteration}-g${task.group}-r${task.index}-a${attempt}`;
    const episode = gateway.episodes.issue(id, { ...task, attempt });
    const exit = await runProcess(s.command, agentEnv(gateway.url, episode, task, s, attempt), s);
    await episode.settled();
    if (episode.failure) throw episode.failure;
    if (exit.code === 0 && !exit.timedOut) return { task, episode, attempts: attempt + 1, discardedCalls };
    discardedCalls += gateway.episodes.discard(episode);
    const why = describeExit(exit);
    log.warn({ episode: id, why, output: exit.output.slice(-500) }, 'agent episode failed; its calls are discarded');
    if (attempt >= s.retries) {
      throw new AgentError(
        `agent episode ${task.group}/${task.index} failed ${attempt + 1} time(s), last: ${why}; ` +
          `its output ended: ${JSON.stringify(exit.output.slice(-300))}`,
      );
    }
  }
}

/** Plays every task (at most `concurrency` at once) and returns their results in task order. */
export async function runAgentEpisodes(
  gateway: Gateway,
  tasks: readonly AgentTask[],
  s: AgentRunSettings,
): Promise<EpisodeResult[]> {
  const results = new Array<EpisodeResult>(tasks.length);
  let next = 0;
  let failed: unknown = null;
  const worker = async () => {
    while (next < tasks.length && failed === null) {
      const k = next++;
      try {
        results[k] = await runEpisode(gateway, tasks[k], s);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(s.concurrency, tasks.length) }, worker));
  if (failed !== null) throw failed;
  return results;
}
