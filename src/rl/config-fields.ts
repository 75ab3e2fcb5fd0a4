/**
 * The RL configuration, defined once: every knob's type, range, unit, default and the reason for the
 * default, in one table. The `RlConfig` type is derived from the table, so a knob cannot exist without its
 * documentation. Defaults are the published StarPO-S configuration (docs/spec.md §4); presets override a few.
 * Names are flat camelCase; `filter.fraction`, `filter_fraction` and `filter-fraction` all mean `filterFraction`.
 */
import { ADVANTAGE_NAMES } from './advantages.ts';
import { FILTER_NAMES } from './filters.ts';
import { AGGREGATION_NAMES, KL_ESTIMATOR_NAMES } from '../policy/programs/loss.ts';
import { REWARD_PLACEMENT_NAMES } from './reward.ts';
import { ENV_PRESETS } from '../envs/registry.ts';
import { TEMPLATE_NAMES } from '../agent/templates.ts';
import { FORMAT_CHECK_NAMES } from './rewards/format.ts';
import { TOOL_REWARD_NAMES } from './rewards/registry.ts';
import { TOOL_FORMAT_NAMES } from '../tools/formats.ts';
import { PROVIDER_NAMES } from '../gpu/providers.ts';

const TOOL_USE_NAMES = ['none', ...TOOL_FORMAT_NAMES] as const;

interface Documented {
  /** What the knob means, its unit and why the default is what it is. */
  readonly doc: string;
}
export interface IntField extends Documented {
  readonly kind: 'int';
  readonly default: number;
  readonly min: number;
  /** Inclusive; every count has one (see COUNT_MAX). */
  readonly max: number;
}
export interface NumberField extends Documented {
  readonly kind: 'number';
  readonly default: number;
  /** Inclusive bounds unless the matching `open*` flag is set; every number has a max (see NUMBER_MAX). */
  readonly min?: number;
  readonly max: number;
  readonly openMin?: boolean;
  readonly openMax?: boolean;
}
export interface BoolField extends Documented {
  readonly kind: 'bool';
  readonly default: boolean;
}
export interface EnumField<V extends string = string> extends Documented {
  readonly kind: 'enum';
  readonly default: V;
  readonly values: readonly V[];
  /** The values that `false` and `true` stand for, where the field was a boolean once (stored runs keep those). */
  readonly fromBoolean?: readonly [V, V];
}
export interface StringField extends Documented {
  readonly kind: 'string';
  readonly default: string;
  /** A comma-separated list: a config file may give it as a JSON array of these items. */
  readonly items?: readonly string[];
}
export type Field = IntField | NumberField | BoolField | EnumField | StringField;

/**
 * Upper bounds where a field names none of its own. Every value is bounded, so a typo such as
 * `envGroups=1e9` is refused by its field before anything is written instead of exhausting memory later;
 * fields the engine sizes buffers by carry tighter bounds, and src/rl/capacity.ts checks their product
 * against this machine's memory. Seeds are 32-bit (SEED_MAX): larger ones would wrap onto another run's.
 */
export const COUNT_MAX = 1_000_000;
export const NUMBER_MAX = 1e6;
export const SEED_MAX = 2 ** 32 - 1;
/** Rollouts per batch, tokens per sequence, model widths: sizes the engine allocates buffers by. */
const BATCH_MAX = 65_536;
const CONTEXT_MAX = 131_072;

const int = (def: number, min: number, doc: string, max = COUNT_MAX): IntField => ({
  kind: 'int',
  default: def,
  min,
  max,
  doc,
});
type NumberRange = Omit<NumberField, 'kind' | 'default' | 'doc' | 'max'> & { readonly max?: number };
const num = (def: number, range: NumberRange, doc: string): NumberField => ({
  kind: 'number',
  default: def,
  ...range,
  max: range.max ?? NUMBER_MAX,
  doc,
});
const bool = (def: boolean, doc: string): BoolField => ({ kind: 'bool', default: def, doc });
const oneOf = <const V extends string>(
  values: readonly V[],
  def: V,
  doc: string,
  fromBoolean?: readonly [V, V],
): EnumField<V> => ({
  kind: 'enum',
  default: def,
  values,
  doc,
  ...(fromBoolean ? { fromBoolean } : {}),
});
const str = (def: string, doc: string, items?: readonly string[]): StringField => ({
  kind: 'string',
  default: def,
  doc,
  items,
});
const unit = { min: 0, max: 1 } as const;
const positive = { min: 0, openMin: true } as const;

export const FIELDS = {
  // What to train on, and the model (tiny models trained from scratch by default)
  env: oneOf(
    Object.keys(ENV_PRESETS),
    'sokoban',
    'Environment preset (src/envs/registry.ts). Training default: Simple Sokoban 6×6.',
  ),
  model: str(
    '',
    'The pretrained model the actor, critic and reference start from: a Hugging Face model directory ' +
      '(config.json, safetensors, tokenizer.json, tokenizer_config.json with its chat template), a .gguf file ' +
      '(imported once into the cache), a packaged model name (smollm2-135m-instruct) or a hub id ' +
      'org/name[@revision] (the Hugging Face cache, pulled when missing); empty = a tiny model trained from ' +
      "scratch (the model* fields). With a model the template defaults to full, wrapped by the model's own chat " +
      'template.',
  ),
  template: oneOf(
    TEMPLATE_NAMES,
    'compact',
    'Prompt template; compact suits character-level models trained from scratch (default full when model is set).',
  ),
  chatThinking: oneOf(
    ['default', 'on', 'off'] as const,
    'default',
    "The chat template's enable_thinking switch (Qwen3): default leaves the template's own default (thinking on).",
  ),
  loraRank: int(
    0,
    0,
    'LoRA rank r: train low-rank adapters on the targets with the base weights frozen; 0 = full fine-tuning.',
    4096,
  ),
  loraAlpha: num(32, positive, "LoRA alpha: the adapters are scaled by alpha / rank (PEFT's convention)."),
  loraDropout: num(0, { min: 0, max: 0 }, 'LoRA dropout: must be 0 (dropout would make runs non-deterministic).'),
  loraTargets: str('q,k,v,o,gate,up,down', 'LoRA targets: projections given adapters (q, k, v, o, gate, up, down).', [
    'q',
    'k',
    'v',
    'o',
    'gate',
    'up',
    'down',
  ]),
  modelLayers: int(2, 1, 'Decoder layers of a model trained from scratch (ignored when loading a checkpoint).', 1024),
  modelHidden: int(64, 8, 'Hidden size of a model trained from scratch.', BATCH_MAX),
  modelHeads: int(4, 1, 'Attention heads (hidden size must divide evenly).', 4096),
  modelKvHeads: int(2, 1, 'Key/value heads (grouped-query attention; must divide modelHeads).', 4096),
  modelFfn: int(192, 8, 'SwiGLU intermediate size.', 4 * BATCH_MAX),
  modelContext: int(1024, 64, 'Longest token sequence (prompt + all turns) the model accepts.', CONTEXT_MAX),
  maxResponseTokens: int(
    24,
    1,
    'Tokens one assistant turn may write before it is cut (compact answers are short).',
    CONTEXT_MAX,
  ),
  kvCacheMb: int(
    8192,
    0,
    "Keys and values the rollout engine keeps between generate calls (MB, at most; taken as rows' prompts need it): " +
      "a turn prefills only what its row's previous turn lacks (the answer and the new observation), and rows " +
      "sharing a prefix (a group's first prompt, the system prompt) compute it once. Tokens and log-probs are the " +
      'same bit for bit at any size (rows that do not fit re-prefill their whole context). SmolLM2 Sokoban 8x16 ' +
      'holds 3.7 GiB by turn 5 (46 KB a token); at 1024 half the rows re-prefilled from turn 3 on. 0 = off.',
    1 << 20,
  ),
  rolloutWeights: oneOf(
    ['float32', 'int8'] as const,
    'float32',
    "Weights the rollout engine's decode step reads: float32 (the trained weights) or int8 (every projection and the " +
      'LM head in blocks of 32, quantized once per weight version: SmolLM2-135M decodes one row 2-2.8x faster, 32 ' +
      'rows 1.1x). The prompt prefill, scoring and training stay float32. The sampled log-probs then differ from the ' +
      "trainer's (|gap| 0.04-0.06 mean on SmolLM2): pair with offPolicyCorrection tis. CPU only.",
  ),
  packPrefixes: oneOf(
    ['auto', 'on', 'off'],
    'auto',
    "Score and train a group's rows with their shared prompt computed once (one packed row: the prompt, then each " +
      "row's own tokens, attending only the prompt and themselves). The same log-probs and gradients to float " +
      'rounding; SmolLM2 Bandit 8x16 LoRA: score 17.1 -> 5.1 s, update 43.6 -> 14.7 s. auto packs models of 2^25 ' +
      'parameters or more (base included): on the small from-scratch models packing costs more than it saves ' +
      '(0.1M: 4.9x slower, 25M: 1.06x). Token-mean losses only (others train the rows apart); off = every row whole. ' +
      'true and false (older configs) mean on and off.',
    ['off', 'on'],
  ),
  topP: num(1, { ...positive, max: 1 }, 'Nucleus sampling mass for rollouts; 1 = off (published).'),
  topK: int(0, 0, 'Top-k sampling for rollouts; 0 = off (published).', 1 << 20),
  valEvery: int(5, 0, 'Validate every this many iterations (and at the end); 0 = only at the end.'),
  checkpointEvery: int(1, 1, 'Write a checkpoint every this many iterations (a crash loses at most this many).'),
  keepLastCheckpoints: int(3, 1, 'Retention: keep the newest this many checkpoints ...'),
  keepEveryCheckpoint: int(0, 0, '... plus every n-th iteration (0 = none).'),
  sftSteps: int(
    0,
    0,
    'Supervised warm-start steps on demonstration episodes before RL (0 = none); tiny scratch models need it.',
  ),
  sftPolicy: oneOf(
    ['expert', 'random'] as const,
    'expert',
    'Demonstrations: solver-optimal (expert) or random legal actions (teaches only the format).',
  ),
  sftEpisodes: int(
    512,
    1,
    'Demonstration episodes generated for the warm-start (seeds disjoint from training and validation).',
  ),
  sftTarget: oneOf(
    ['assistant', 'episode'] as const,
    'assistant',
    'Warm-start tokens trained: the answers only (assistant), or every token of the episode after the first ' +
      '(episode: observations too, so with sftPolicy random the model learns to read and predict the board, the ' +
      'dynamics of random play, and still nothing about solving: a format-only start that is not blind to the state).',
  ),
  sftBatchSize: int(32, 1, 'Episodes per warm-start optimiser step.', BATCH_MAX),
  sftLr: num(1e-3, positive, 'Warm-start learning rate (cross-entropy on the model-written tokens).'),
  threads: int(0, 0, 'onnxruntime intra-op threads; 0 = one per core. Fix it for bitwise-reproducible runs.', 1024),
  rolloutProvider: oneOf(
    PROVIDER_NAMES,
    'cpu',
    'Execution provider of the rollout and validation engines: cpu, cuda or webgpu (`starpo doctor` says which ' +
      'work here; `starpo worker --provider` overrides it for that worker). No fallback: a session that cannot get ' +
      'it fails. Runs on different providers are not bitwise comparable with each other (other kernels, ' +
      'other summation orders).',
  ),
  updateProvider: oneOf(
    PROVIDER_NAMES,
    'cpu',
    'Execution provider of the update engines (actor updates, critic, reference: scoring, train_step, ' +
      'warm-start), e.g. cuda on the durable update worker while rollouts stay on CPU workers. The embedded driver ' +
      'trains and samples one actor, so there it must equal rolloutProvider.',
  ),
  heartbeatTimeoutMs: int(
    10_000,
    1000,
    'Durable driver, milliseconds: how long an activity may go without a heartbeat before Temporal retries it ' +
      'elsewhere, so a killed worker costs this plus a 1 s retry backoff (the embedded driver ignores it). ' +
      'Workers heartbeat every fifth of it (`starpo worker --heartbeat-interval` sets another interval); 10 s ' +
      "retries a dead worker's activity within 15 s yet allows its event loop an 8 s stall. Raise it when " +
      'worker logs show activities timing out while their worker lives.',
    3_600_000,
  ),
  eventRetentionMs: int(
    -1,
    -1,
    'Durable driver, milliseconds: retention.ms of the Kafka events topic, set when it is created and checked on ' +
      "every connect. -1 = forever (the default): the topic is the run's event log (the store seals a copy of " +
      "each completed iteration), and the broker's own default (7 days) would delete it. The embedded driver's " +
      'local log is never expired.',
    Number.MAX_SAFE_INTEGER,
  ),
  // Rollout shape
  envGroups: int(8, 1, 'Environment groups per iteration (N); each group plays one seed. Published: 8.', BATCH_MAX),
  groupSize: int(
    16,
    1,
    'Rollouts per group (M), all from the same seed; 8 × 16 = 128 trajectories. Published: 16.',
    BATCH_MAX,
  ),
  iterations: int(200, 1, 'Training iterations (rollout → update cycles). Published: 200.'),
  seed: int(0, 0, 'Run seed: environment seeds, sampling and initialisation derive from it.', SEED_MAX),
  trainTemperature: num(1.0, positive, 'Sampling temperature for training rollouts; 1.0 samples the policy itself.'),
  valTemperature: num(0.5, { min: 0 }, 'Sampling temperature for validation (0 = greedy). Published: 0.5.'),
  valSeeds: int(256, 1, 'Fixed validation seeds (episodes). Published: 256.'),
  valSamples: int(1, 1, 'Samples per validation seed; pass@k is reported for k = 1 and k = valSamples.', 1024),
  maxTurns: int(
    0,
    0,
    "Assistant turns per episode; 0 = the environment preset's own (paper: 5 Sokoban/FrozenLake, 1 Bandit).",
  ),
  maxActionsPerTurn: int(
    0,
    0,
    "Actions kept from one answer; 0 = the preset's own (paper: 5; 6 was best for Sokoban).",
  ),
  maxActionsPerTrajectory: int(0, 0, "Actions executed per episode; 0 = the preset's own (paper: 10)."),
  // Rewards
  formatPenalty: num(-0.1, { max: 0 }, 'Added to a turn with a dropped or unparsable action (reward units, ≤ 0).'),
  rewardPlacement: oneOf(
    REWARD_PLACEMENT_NAMES,
    'trajectory-end',
    'Where rewards land: the whole return on the last assistant token (published), or each turn on its last token.',
  ),
  // Tools (docs/spec.md §6): calls inside a turn, their results appended as template tokens (never trained)
  tools: oneOf(
    TOOL_USE_NAMES,
    'none',
    'Tool-call format the agent may use inside a turn: none; code-fence or code-inline (JavaScript in the sandbox; ' +
      "code-inline for the compact chat, whose turn ends at a newline); function-call (the environment's functions).",
  ),
  toolMaxCalls: int(4, 1, 'C: tool calls run per response; later calls are recorded, not run.', 1024),
  toolLimitNotice: bool(false, 'Append a notice to a response that wrote calls past toolMaxCalls.'),
  toolReward: oneOf(
    ['env', ...TOOL_REWARD_NAMES] as const,
    'env',
    "Reward of a tool run: env = the environment's own; torl, toolrl, tool-n1, artist, otc = docs/spec.md §6 rules " +
      '(replacing env rewards and format penalties; the last turn carries the return).',
  ),
  toolCodeFailPenalty: num(0, { min: 0 }, 'ToRL: subtracted when a code call failed (ToRL: 0.5; 0 = off).'),
  toolFormatCheck: oneOf(
    ['auto', ...FORMAT_CHECK_NAMES] as const,
    'auto',
    "ToolRL / ARTIST format term: which structure counts as well-formed (auto = each reward's own default).",
  ),
  otcC: num(1, positive, 'OTC: smoothing constant c of cos(m·π/(2m+c)) when the best correct answer used no call.'),
  sandboxProcesses: int(2, 1, 'Sandbox child processes (calls of one generation round run side by side).', 64),
  sandboxTimeoutMs: int(2000, 10, 'CPU time per code call (ms); past it the call fails with a timeout.', 600_000),
  sftExtraToolCalls: int(
    0,
    0,
    'Tool demonstrations repeat a call 0..n extra times (uniform per turn), as untuned models over-call; ' +
      'what OTC is meant to remove. 0 = the minimal calls.',
  ),
  // External agents (src/gateway/): the rollout is an agent program's OpenAI-API calls, served by the actor
  agent: str(
    '',
    'Command line of an external agent program (run with sh -c), played once per episode instead of the ' +
      'built-in environment: it gets the gateway URL, an episode token and the task seed in its environment ' +
      '(STARPO_BASE_URL, STARPO_EPISODE_TOKEN, STARPO_TASK_SEED, and OPENAI_BASE_URL / OPENAI_API_KEY for the ' +
      'openai SDK) and reports its reward to POST <url>/episodes/<id>/reward. Needs model (the calls go through ' +
      'its chat template). Empty = no agent.',
  ),
  agentConcurrency: int(8, 1, 'Agent processes running at once (per rollout activity in the durable driver).', 4096),
  agentRetries: int(
    2,
    0,
    'Reruns of an episode whose agent process crashed, exited non-zero or timed out; its calls are discarded, once.',
  ),
  agentTimeoutMs: int(
    600_000,
    1000,
    'Wall-clock limit of one agent episode (ms); past it the process group is killed and the episode rerun.',
  ),
  agentMerge: oneOf(
    ['prefix', 'transition'] as const,
    'prefix',
    "How an episode's calls become trajectories: prefix = a call that continues an earlier one (its prompt extends " +
      "that call's tokens exactly) joins its trajectory, any other starts one; transition = one trajectory per call.",
  ),
  // Filtering and sampling
  filter: oneOf(FILTER_NAMES, 'top-std', 'Rollout filter. StarPO-S keeps the groups whose returns vary most.'),
  filterFraction: num(
    0.25,
    { ...positive, max: 1 },
    'Fraction of groups top/bottom-std keep, ⌈fraction·N⌉. Published: 0.25.',
  ),
  filterBandLow: num(0, unit, 'accuracy-band: keep groups with mean success strictly above this (ZeroTIR: 0).'),
  filterBandHigh: num(0.8, unit, 'accuracy-band: ... and strictly below this (ZeroTIR: 0.8).'),
  filterTopP: num(
    0.9,
    { ...positive, max: 1 },
    "snr-top-p (RAGEN-2): keep the highest-std groups until their std sum reaches this share of all groups' " +
      '(0.9, its recommended value).',
  ),
  filterTopPEps: num(0.01, { min: 0 }, 'snr-top-p: the threshold is filterTopP · Σ std − this (RAGEN-2: 0.01).'),
  dynamicSampling: bool(false, 'DAPO: drop groups with all-equal returns and sample more groups to refill the batch.'),
  dynamicSamplingMaxTries: int(
    10,
    1,
    'DAPO: most sampling rounds per iteration before training on what was found.',
    1000,
  ),
  // Collapse: RAGEN-2's metrics, and what to do when the Echo-Trap detector fires
  collapseEvery: int(
    5,
    0,
    "RAGEN-2's collapse metrics (mutual information, retrieval accuracy of first-turn responses) at iteration 1 " +
      'and every n-th (RAGEN-2: 5); 0 = off. They cost one scoring pass of collapseSamples × groups ' +
      'prompt-response pairs: on SmolLM2-135M (2 cores) ~40 s at Bandit, about what the rest of its iteration takes.',
  ),
  collapseSamples: int(
    64,
    0,
    'Collapse metrics: first-turn pairs sampled per iteration (RAGEN-2: 64); 0 = every trajectory.',
  ),
  onCollapse: oneOf(
    ['warn', 'stop', 'fork'] as const,
    'warn',
    'When the Echo-Trap detector fires: warn (record the warning, go on); stop (end the run after that ' +
      'iteration); fork (rewind to the newest checkpoint before its first warning sign and go on as a new lineage ' +
      'with both learning rates scaled by forkLrScale; keep enough checkpoints: keepEveryCheckpoint).',
  ),
  forkLrScale: num(
    0.5,
    { ...positive, max: 1, openMax: true },
    'onCollapse=fork: learning-rate factor each fork applies.',
  ),
  maxForks: int(2, 1, 'onCollapse=fork: forks per run; a collapse after the last one stops the run.'),
  // Advantages
  advantage: oneOf(ADVANTAGE_NAMES, 'gae', 'Advantage estimator. StarPO-S: GAE with a critic.'),
  gamma: num(1, unit, 'Per-assistant-token discount of GAE and REINFORCE++. Published: 1 (episodic, short).'),
  lambda: num(1, unit, 'GAE λ. Published: 1 (Monte-Carlo returns minus the critic baseline).'),
  groupNormByStd: bool(true, 'GRPO/GiGPO: divide by (group std + 1e-6); false = Dr.GRPO (centre only).'),
  whitenAdvantages: bool(true, 'Whiten advantages over the loss mask after the estimator (published GAE: yes).'),
  skipNoSignal: bool(
    true,
    'Skip the actor step when every trained advantage is 0 (RAGEN-2): entropy and KL alone would move the policy ' +
      'with no reward signal. Counted in actor/no_signal.',
  ),
  gigpoStepGamma: num(0.95, unit, 'GiGPO: per-turn discount of step returns. Published: 0.95.'),
  gigpoOmega: num(1, { min: 0 }, 'GiGPO: weight of the step advantage. Published: 1.'),
  gigpoForm: oneOf(
    ['paper', 'verl-agent'] as const,
    'paper',
    'GiGPO: paper = Eq. 3 (episode statistics over trajectories, penalties inside the discounted step returns); ' +
      "verl-agent = its trainer (statistics over step rows, each turn's format penalty subtracted after " +
      "discounting; the gigpo preset's).",
  ),
  // Policy loss
  clipLow: num(0.2, { ...positive, max: 1, openMax: true }, 'PPO ratio lower clip ε: ratio ≥ 1 − clipLow (0.2).'),
  clipHigh: num(0.28, positive, 'PPO ratio upper clip ε: ratio ≤ 1 + clipHigh. StarPO-S/DAPO clip-higher: 0.28.'),
  dualClip: num(3.0, { min: 0 }, 'Dual-clip constant c (> 1) bounding the loss of negative-advantage tokens; 0 = off.'),
  entropyCoef: num(0.001, { min: 0 }, 'Entropy bonus coefficient (loss −= coef·entropy). Published: 0.001.'),
  klCoef: num(0, { min: 0 }, 'KL-to-reference loss coefficient. StarPO-S: 0 (no reference); vanilla: 0.001.'),
  klEstimator: oneOf(KL_ESTIMATOR_NAMES, 'k1', 'KL estimator: k1 = logp − ref, or the low-variance k3.'),
  lossAggregation: oneOf(AGGREGATION_NAMES, 'token-mean', 'How per-token losses become one number (published).'),
  valueClip: num(0.5, positive, 'Critic: predictions clipped to v_old ± valueClip in the value loss. Published: 0.5.'),
  oldLogprobs: oneOf(
    ['recompute', 'behaviour'] as const,
    'recompute',
    "PPO's old log-probs: recomputed by the actor on the trained rows before the update (published), " +
      'or the log-probs the rollout sampled with (no scoring pass; the metrics logprobs/behaviour_gap_mean|max say ' +
      'how far the two are apart when recomputing).',
  ),
  asyncStaleness: int(
    0,
    0,
    'Asynchronous iterations: iteration i plays its rollouts with policy version i − 1 − k (the checkpoint of ' +
      'that iteration; 0 for the first ones) on a separate rollout engine, so they run while the updates of ' +
      'iterations i − k … i − 1 train. 0 = on-policy (each rollout waits for the previous update; ' +
      'published). Which version plays which iteration is fixed by this schedule, so resumed and durable runs ' +
      'stay bitwise equal; needs checkpointEvery 1 and keepLastCheckpoints ≥ k + 1 (a resumed run reads those ' +
      'versions back). See docs/async.md.',
    64,
  ),
  offPolicyCorrection: oneOf(
    ['none', 'tis'] as const,
    'none',
    'Off-policy correction of the policy gradient: tis = truncated importance sampling, each model-written ' +
      "token's PPO term weighted by min(exp(old − behaviour log-prob), tisCap) (old: recomputed by the training " +
      'policy; behaviour: what the rollout sampled with). Metrics tis/ratio_mean, tis/ratio_max, ' +
      'tis/capped_share. Needs oldLogprobs recompute.',
  ),
  tisCap: num(
    2,
    { min: 1 },
    "TIS: cap C of the importance weight min(ratio, C) (verl's documented token-level threshold: 2).",
  ),
  critic: bool(true, 'Train a critic (same architecture, separate weights). Required by, and only used by, gae.'),
  // Optimiser
  lrActor: num(
    1e-6,
    positive,
    'Actor learning rate (constant): 1e-6 for a 0.5B pretrained model; tiny ones need more.',
  ),
  lrCritic: num(1e-5, positive, 'Critic learning rate (constant). 1e-5 for a 0.5B pretrained model.'),
  adamBeta1: num(0.9, { min: 0, max: 1, openMax: true }, 'AdamW β1. Published: 0.9.'),
  adamBeta2: num(0.999, { min: 0, max: 1, openMax: true }, 'AdamW β2. Published: 0.999.'),
  adamEps: num(1e-8, positive, 'AdamW ε (PyTorch default).'),
  weightDecay: num(0.01, { min: 0 }, 'AdamW decoupled weight decay. Published: 0.01.'),
  gradClip: num(1.0, positive, 'Gradient-norm clip; a non-finite norm skips the step. Published: 1.0.'),
  miniBatchSize: int(32, 1, 'Trajectories per optimiser step. Published: 32.', BATCH_MAX),
  ppoEpochs: int(1, 1, 'Passes over each rollout batch. Published: 1.'),
  onlineK: int(
    0,
    0,
    "Optimiser steps per rollout batch and epoch (the paper's online-k). 0 = derived: ⌈trained trajectories / " +
      'miniBatchSize⌉. When set, the trained batch must be exactly onlineK × miniBatchSize (checked when known).',
  ),
} as const satisfies Record<string, Field>;

export type FieldName = keyof typeof FIELDS;
type ValueOf<F> =
  F extends EnumField<infer V> ? V : F extends BoolField ? boolean : F extends StringField ? string : number;

/** The resolved, flat RL configuration (see FIELDS for each knob's meaning, unit and default). */
export type RlConfig = { readonly [K in FieldName]: ValueOf<(typeof FIELDS)[K]> };

export const FIELD_NAMES = Object.keys(FIELDS) as FieldName[];

export const DEFAULTS: RlConfig = Object.freeze(
  Object.fromEntries(FIELD_NAMES.map((k) => [k, FIELDS[k].default])) as unknown as RlConfig,
);
