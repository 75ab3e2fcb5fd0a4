/**
 * The cases of `starpo bench learning` and of its seed comparison (`starpo bench learning-seeds`): what
 * each trains, from which warm start, and the target it is measured against. Two kinds of warm start:
 * solver demonstrations (imitation of the oracle; RL then adds what it can), and format-only ones
 * (random legal answers: the model learns the answer format and nothing about solving, so everything it
 * knows about solving comes from reward).
 */
import type { PresetName } from '../rl/presets.ts';

export interface WarmStart {
  name: string;
  /** The warm-start run's config (model settings included: the RL runs starting from it use them too). */
  overrides: readonly string[];
}

export interface LearningCase {
  name: string;
  preset: PresetName;
  overrides: string[];
  /** Success as a share of the oracle ceiling on the same seeds that counts as reaching the target. */
  target: number;
  /** Instead of `target`: an absolute validation success to reach (Sokoban-Large: 10× RAGEN's 2.3%). */
  targetSuccess?: number;
  /** A warm-start shared by the cases that name it: trained once per bench run, each case's RL starts from it. */
  warmStart?: WarmStart;
}

const SCRATCH = ['valEvery=5', 'valSeeds=128', 'threads=0'];
const SMALL_MODEL = ['modelHidden=96', 'modelFfn=256'];
/** The protocol for learning from reward: 256 validation seeds (the paper's), format-only warm starts. */
const FROM_REWARD = ['valEvery=5', 'valSeeds=256', 'threads=0', ...SMALL_MODEL];
/**
 * Format-only, trained on every token of the random-play episodes (sftTarget=episode): the model also learns to
 * read the board (it predicts the observations that follow random moves) and still nothing about solving. A warm
 * start on the answers alone leaves the model blind to the state (its answers never depended on it), and from there
 * RL found nothing within the budget: FrozenLake without slipping stayed at 18-22% over 30-60 iterations of StarPO-S
 * or GRPO at lrActor 1e-4…1e-3, larger batches, a shorter warm start (measured, 2026-12).
 */
const FORMAT_WORLD = ['sftSteps=1500', 'sftPolicy=random', 'sftEpisodes=3000', 'sftTarget=episode', 'threads=1'];

/**
 * The real pretrained SmolLM2-135M-Instruct (the packaged model), LoRA rank 16. Untrained it writes no answer at all
 * (Bandit: parsed 0%, it echoes the prompt), so RL gets only format penalties; a format-only warm start of 20 steps
 * of random legal answers (5e-4) takes parsed turns to 100% and Bandit to 87.5% (the model's own prior: dragons are
 * stronger), while the perplexity of a general text moves 20.8 → 22.8 (measured, 2026-12). Both Bandit cases share
 * it: the reversed bandit has the same arm names with the payouts swapped, so RL must overturn that prior. GRPO from it
 * took Bandit from 84.4% to 100% in 30 iterations (64 validation seeds, 1806 s at load 2–3; measured, 2026-12-06).
 */
const SMOLLM2 = ['model=smollm2-135m-instruct', 'loraRank=16', 'loraAlpha=32', 'valSeeds=64', 'valEvery=10'];
const SMOLLM2_FORMAT = {
  name: 'smollm2-bandit-format',
  overrides: [
    ...SMOLLM2,
    'env=bandit',
    'sftSteps=20',
    'sftPolicy=random',
    'sftEpisodes=256',
    'sftBatchSize=8',
    'sftLr=5e-4',
  ],
} as const satisfies WarmStart;
/**
 * The same format warm start on another bandit's names (Trader / Librarian, RAGEN's bandit-test): it teaches the
 * answer format and no preference between Phoenix and Dragon, so on BanditReversed the arm comes from the model's own
 * prior and from reward. (On Bandit's own names, 8 steps left a model that picks Phoenix and 20 one that picks
 * Dragon: the warm start, not the reward, chose the arm.)
 */
const SMOLLM2_FORMAT_OTHER_NAMES = {
  name: 'smollm2-bandit-test-format',
  overrides: SMOLLM2_FORMAT.overrides.map((o) => (o === 'env=bandit' ? 'env=bandit-test' : o)),
} as const satisfies WarmStart;
/** The same format warm start on FrozenLake (slippery, RAGEN's setting): random legal moves in the model's template. */
const SMOLLM2_FROZENLAKE_FORMAT = {
  name: 'smollm2-frozenlake-format',
  overrides: SMOLLM2_FORMAT.overrides.map((o) => (o === 'env=bandit' ? 'env=frozenlake' : o)),
} as const satisfies WarmStart;
/** The same format warm start on Sokoban (RAGEN's levels): random legal moves. */
const SMOLLM2_SOKOBAN_FORMAT = {
  name: 'smollm2-sokoban-format',
  overrides: SMOLLM2_FORMAT.overrides.map((o) => (o === 'env=bandit' ? 'env=sokoban' : o)),
} as const satisfies WarmStart;
/**
 * The same format warm start on Countdown: random expressions over the given numbers (the right numbers, so RAGEN's
 * 0.1 for them, and a random value).
 */
const SMOLLM2_COUNTDOWN_FORMAT = {
  name: 'smollm2-countdown-format',
  overrides: SMOLLM2_FORMAT.overrides.map((o) => (o === 'env=bandit' ? 'env=countdown' : o)),
} as const satisfies WarmStart;
/**
 * RAGEN's SFT baseline on SmolLM2: the solver's moves on 1,600 levels, one pass in batches of 8. A demonstration is
 * short (median 274 tokens: RAGEN's levels take 1–2 turns of up to 5 moves), ~190 of them the shared prompt; a step
 * of 8 took 7–11 s here with LoRA (other runs paused, load 4.6 falling to 2.7, prefixes packed; 10–13 s apart),
 * 30 s or more beside two other runs, so 200 steps fit a session.
 */
const SMOLLM2_SOKOBAN_SOLVER = {
  name: 'smollm2-sokoban-solver',
  overrides: [
    ...SMOLLM2,
    'env=sokoban',
    'sftSteps=200',
    'sftPolicy=expert',
    'sftEpisodes=1600',
    'sftBatchSize=8',
    'sftLr=5e-4',
  ],
} as const satisfies WarmStart;
/** GRPO on 4 groups × 4: ~70 s an iteration on 2 cores (measured, load ~2). */
const SMOLLM2_RL = ['iterations=30', 'envGroups=4', 'groupSize=4', 'miniBatchSize=8', 'lrActor=2e-4'];

/** SmolLM2 on RAGEN's FrozenLake (slippery): GRPO on 4 groups × 8. */
const SMOLLM2_FROZENLAKE_RL = [
  ...SMOLLM2_RL,
  'env=frozenlake',
  'envGroups=4',
  'groupSize=8',
  // The warm start writes `<think>I will take: Up, Down.</think><answer>Up || Down</answer>`: at 24 tokens 75% of
  // its turns were cut before the answer closed (measured, 2026-12-06).
  'maxResponseTokens=64',
  // RAGEN's own: no KL term (so no reference pass); the rollout's log-probs are the old ones (no actor pass).
  'klCoef=0',
  'oldLogprobs=behaviour',
  // The probe scored 64 first turns after each of the 8 prompts: 254 s, a third of iteration 1 at 8 groups.
  'collapseEvery=10',
  // At Bandit's 2e-4 one update took the format penalty rate from 2% to 74% (the answers lost their `||`
  // separators: most multi-action answers fall in a hole, so the separator sat mostly in failed trajectories).
  'lrActor=5e-5',
];

/** SmolLM2 on RAGEN's Sokoban: StarPO-S on 8 groups × 8 (it keeps the top quarter: 2 groups, one mini-batch). */
const SMOLLM2_SOKOBAN_RL = [
  ...SMOLLM2_RL,
  'env=sokoban',
  'envGroups=8',
  'groupSize=8',
  'iterations=20',
  // As FrozenLake's: a warm start's `<think>…</think><answer>…</answer>` with several moves outgrows 24 tokens.
  'maxResponseTokens=64',
  'collapseEvery=10',
  'lrActor=5e-5',
];

/**
 * SmolLM2 on Countdown (one turn): GRPO on 8 groups × 8, four mini-batches of 16. As FrozenLake's, no KL term and
 * the rollout's log-probs as the old ones (RAGEN's own).
 */
const SMOLLM2_COUNTDOWN_RL = [
  ...SMOLLM2_RL,
  'env=countdown',
  'envGroups=8',
  'groupSize=8',
  'miniBatchSize=16',
  'iterations=40',
  // `<think>I will take: 3*5-2.</think><answer>3*5-2</answer>` is ~30 tokens; room for a longer expression.
  'maxResponseTokens=64',
  'klCoef=0',
  'oldLogprobs=behaviour',
  'collapseEvery=10',
  'lrActor=1e-4',
];

/** Warm-starts on solver demonstrations. */
const EXPERT = {
  // Measured (128 seeds, temperature 0.5): 1500 steps on 6000 episodes 43.0%, 3000 on 10000 45.3% (oracle 50.0%).
  frozenlake: {
    name: 'frozenlake',
    overrides: [...SCRATCH, ...SMALL_MODEL, 'env=frozenlake', 'sftSteps=3000', 'sftPolicy=expert', 'sftEpisodes=10000'],
  },
  sokoban: {
    name: 'sokoban',
    overrides: [...SCRATCH, ...SMALL_MODEL, 'env=sokoban', 'sftSteps=1500', 'sftPolicy=expert', 'sftEpisodes=6000'],
  },
} as const satisfies Record<string, WarmStart>;

/**
 * Format-only warm-starts, one per environment (RAGEN-comparable settings), all on the episode target. Countdown's
 * random answers do read the input (the given numbers in random order with random operators), but 300 steps on
 * them did not teach the model to copy the numbers: its answers earned 0 (not the 0.1 of right numbers), so RL had
 * no signal (measured, 2026-12).
 */
export const FORMAT_WARM_STARTS = {
  sokoban: { name: 'sokoban-world', overrides: [...FROM_REWARD, 'env=sokoban', ...FORMAT_WORLD] },
  frozenlake: { name: 'frozenlake-world', overrides: [...FROM_REWARD, 'env=frozenlake', ...FORMAT_WORLD] },
  'sokoban-large': {
    name: 'sokoban-large-world',
    overrides: [...FROM_REWARD, 'env=sokoban-large', ...FORMAT_WORLD],
  },
  countdown: { name: 'countdown-world', overrides: [...FROM_REWARD, 'env=countdown', ...FORMAT_WORLD] },
  // The coordinate list makes a 5-turn episode ~850 characters in the compact template.
  'coord-frozenlake': {
    name: 'coord-frozenlake-world',
    overrides: [...FROM_REWARD, 'env=coord-frozenlake', 'modelContext=1536', ...FORMAT_WORLD],
  },
} as const satisfies Record<string, WarmStart>;

/**
 * RL settings with which FrozenLake learned from reward (GRPO, more groups of fewer rollouts, one thread). RAGEN-2's
 * collapse metrics every 10th iteration: every iteration they took 14 of Countdown's 30 s (32 distinct prompts), and
 * they only observe (their pairs come from a stream of their own), so the schedule changes no trajectory.
 */
const FROM_REWARD_RL = [
  'iterations=100',
  'lrActor=2e-4',
  'lrCritic=1e-3',
  'envGroups=32',
  'groupSize=8',
  'threads=1',
  'collapseEvery=10',
];
/**
 * Sokoban on half the groups for half the iterations: at the full budget an iteration took 43 s against
 * FrozenLake's 11-16 s (3 runs sharing 2 cores), beyond the 30 minutes per case (measured, 2026-12).
 */
const SOKOBAN_RL = [...FROM_REWARD_RL, 'envGroups=16', 'iterations=50', 'valEvery=10'];

export const LEARNING_CASES: LearningCase[] = [
  {
    name: 'bandit',
    preset: 'starpo-s',
    target: 0.95,
    overrides: [
      ...SCRATCH,
      'env=bandit',
      'iterations=50',
      'sftSteps=60',
      'sftPolicy=random',
      'sftEpisodes=256',
      'lrActor=3e-4',
      'lrCritic=1e-3',
    ],
  },
  // Slips make FrozenLake's returns noisy: lrActor 1e-4 on 2 kept groups drifted from 45% to 38%; 16 groups
  // with half kept and lrActor 1e-5 hold the warm start's level.
  {
    name: 'frozenlake',
    preset: 'starpo-s',
    target: 0.9,
    warmStart: EXPERT.frozenlake,
    overrides: ['iterations=40', 'lrActor=1e-5', 'lrCritic=1e-3', 'envGroups=16', 'filterFraction=0.5'],
  },
  {
    name: 'sokoban',
    preset: 'starpo-s',
    target: 0.9,
    warmStart: EXPERT.sokoban,
    overrides: ['iterations=40', 'lrActor=1e-4', 'lrCritic=1e-3'],
  },
  // Asynchronous iterations (iteration i plays version i − 2) beside the on-policy 'sokoban' case, same warm start.
  {
    name: 'sokoban-async',
    preset: 'starpo-s',
    target: 0.9,
    warmStart: EXPERT.sokoban,
    overrides: ['iterations=40', 'lrActor=1e-4', 'lrCritic=1e-3', 'asyncStaleness=1'],
  },
  {
    name: 'sokoban-async-tis',
    preset: 'starpo-s',
    target: 0.9,
    warmStart: EXPERT.sokoban,
    overrides: ['iterations=40', 'lrActor=1e-4', 'lrCritic=1e-3', 'asyncStaleness=1', 'offPolicyCorrection=tis'],
  },
  {
    name: 'sokoban-vanilla',
    preset: 'starpo',
    target: 0.9,
    warmStart: EXPERT.sokoban,
    overrides: ['iterations=40', 'lrActor=1e-4', 'lrCritic=1e-3'],
  },
  // Echo-Trap: a learning rate 300× too large collapses the policy; the detector should fire here and not above.
  {
    name: 'frozenlake-collapse',
    preset: 'starpo',
    target: 0.9,
    warmStart: EXPERT.frozenlake,
    overrides: ['iterations=40', 'lrActor=3e-3', 'lrCritic=1e-3', 'gradClip=1000'],
  },
  // The same collapse with onCollapse=fork: it must end above frozenlake-collapse (all checkpoints kept to go back to).
  // Each fork divides the learning rates by 10: halving twice leaves 75× the rate that holds (measured with halving,
  // before the first sign counted success's peak: it collapsed again after both forks and stopped at 26.6%, against
  // 25.0% without forking; with ÷10 it forked once, to checkpoint 0, and ended at 32.8%).
  {
    name: 'frozenlake-collapse-fork',
    preset: 'starpo',
    target: 0.9,
    warmStart: EXPERT.frozenlake,
    overrides: [
      'iterations=40',
      'lrActor=3e-3',
      'lrCritic=1e-3',
      'gradClip=1000',
      'onCollapse=fork',
      'forkLrScale=0.1',
      'keepEveryCheckpoint=1',
    ],
  },
  // A pretrained model learning from reward (RAGEN's Bandit targets for Qwen2.5-0.5B: 100% and 67.6%).
  {
    name: 'smollm2-bandit',
    preset: 'grpo',
    target: 0,
    targetSuccess: 0.95,
    warmStart: SMOLLM2_FORMAT,
    overrides: [...SMOLLM2_RL],
  },
  {
    name: 'smollm2-bandit-reversed',
    preset: 'grpo',
    target: 0,
    targetSuccess: 0.676,
    warmStart: SMOLLM2_FORMAT,
    overrides: [...SMOLLM2_RL, 'env=bandit-reversed'],
  },
  // Dr. GRPO (no division by the group's std): with GRPO from the same start the runs went to the safe arm (train
  // success 62.5% → 100% at iteration 2 → 16% at 10, validation 0%); Dr. GRPO took it from 64.1% to 100% in 20
  // iterations (+35.9 pts [24.1, 47.8], 2220 s; measured, 2026-12-06).
  {
    name: 'smollm2-bandit-reversed-other-names',
    preset: 'grpo',
    target: 0,
    targetSuccess: 0.676,
    warmStart: SMOLLM2_FORMAT_OTHER_NAMES,
    overrides: [...SMOLLM2_RL, 'env=bandit-reversed', 'groupSize=8', 'groupNormByStd=false', 'iterations=20'],
  },
  // RAGEN's FrozenLake (slippery) from a format-only warm start: 19.9% for Qwen2.5-0.5B. Measured (2026-12-06): the
  // warm start 23.4% at 64 tokens, after RL 18.75% (−4.7 pts, 95% CI [−17.4, 8.0]); 4,468 s of RL.
  {
    name: 'smollm2-frozenlake',
    preset: 'grpo',
    target: 0,
    targetSuccess: 0.199,
    warmStart: SMOLLM2_FROZENLAKE_FORMAT,
    overrides: [...SMOLLM2_FROZENLAKE_RL, 'iterations=24'],
  },
  // RAGEN's Sokoban (its levels, 10 moves): StarPO-S 21.5% from reward and 74.6% after solver SFT for Qwen2.5-0.5B.
  // Measured (2026-12-06/07, resumed from its checkpoint 17): the format warm start 18.75% (random legal moves), after
  // 20 iterations 18.75% (+0 pts, 95% CI [-7.6, 7.6]; 20.3% at iteration 10).
  {
    name: 'smollm2-sokoban',
    preset: 'starpo-s',
    target: 0,
    targetSuccess: 0.215,
    warmStart: SMOLLM2_SOKOBAN_FORMAT,
    overrides: SMOLLM2_SOKOBAN_RL,
  },
  // Measured (2026-12-06, resumed from its checkpoint 6): the solver SFT 26.6%, after 20 iterations 32.8% (+6.3 pts,
  // 95% CI [-4.3, 16.8]); the SFT, a third of RAGEN's 74.6%, sets the level.
  {
    name: 'smollm2-sokoban-solver',
    preset: 'starpo-s',
    target: 0,
    targetSuccess: 0.746,
    warmStart: SMOLLM2_SOKOBAN_SOLVER,
    overrides: SMOLLM2_SOKOBAN_RL,
  },
  // RAGEN-2's Countdown: 23% for Qwen2.5-0.5B (base) from reward. Measured (2026-12-06, resumed from its checkpoint
  // 4): the format warm start 3.1%, after 40 iterations 18.75% (+15.6 pts, 95% CI [4.7, 26.5]; 23.4% at iteration 10),
  // the entropy down to 0.006-0.01 a token from iteration 26.
  {
    name: 'smollm2-countdown',
    preset: 'grpo',
    target: 0,
    targetSuccess: 0.23,
    warmStart: SMOLLM2_COUNTDOWN_FORMAT,
    overrides: SMOLLM2_COUNTDOWN_RL,
  },
  // Learning from reward: format-only warm starts. Targets are the (ratio to the oracle on the same seeds).
  {
    name: 'sokoban-format',
    preset: 'starpo-s',
    target: 0.8,
    warmStart: FORMAT_WARM_STARTS.sokoban,
    overrides: [...SOKOBAN_RL],
  },
  // From the world-model warm start (23% before RL; ~7.5 min), GRPO at lrActor 2e-4 on 32 groups × 8: FrozenLake
  // without slipping learns from reward (23.4% → 64.1% in 100 iterations, +40.6 pts [34.0, 47.2], 432 s; → 71.1%
  // in 200, +47.7 [41.2, 54.1], 0.71 of the oracle, 837 s); the slippery one did not move in 100 iterations
  // (20.7% → 19.9%, oracle 50.2%): the slips drown the signal at this budget.
  {
    name: 'frozenlake-format',
    preset: 'grpo',
    target: 0.9,
    warmStart: FORMAT_WARM_STARTS.frozenlake,
    overrides: [...FROM_REWARD_RL],
  },
  {
    name: 'frozenlake-noslip-format',
    preset: 'grpo',
    target: 0.9,
    warmStart: FORMAT_WARM_STARTS.frozenlake,
    overrides: [...FROM_REWARD_RL, 'env=frozenlake-noslip', 'iterations=200', 'collapseEvery=0'],
  },
  {
    name: 'sokoban-large-format',
    preset: 'starpo-s',
    target: 0,
    targetSuccess: 0.23,
    warmStart: FORMAT_WARM_STARTS['sokoban-large'],
    overrides: [...SOKOBAN_RL],
  },
  {
    name: 'countdown-format',
    preset: 'grpo',
    target: 0.8,
    warmStart: FORMAT_WARM_STARTS.countdown,
    overrides: [...FROM_REWARD_RL],
  },
  {
    name: 'coord-frozenlake-format',
    preset: 'grpo',
    target: 0.9,
    warmStart: FORMAT_WARM_STARTS['coord-frozenlake'],
    // Its coordinate observations make conversations several times FrozenLake's: at 32 groups on one thread an
    // iteration took ~2 min here (scoring 41 s, update 60 s), 100 iterations 3.3 h. Half the groups on both cores
    // took 30–90 s (60 iterations: 54 min, a second run beside it for 25 of them): still over the 30 minutes.
    overrides: [...FROM_REWARD_RL, 'envGroups=16', 'iterations=60', 'threads=2', 'valEvery=10'],
  },
];

/**
 * Item 4 of the issue: StarPO-S, vanilla StarPO and GRPO with 3 training seeds each, the same budget for every
 * algorithm of one environment. Models from scratch: Sokoban and FrozenLake from each one's episode-target
 * format-only warm start, with the RL settings under which FrozenLake learned from reward. FrozenLake without
 * slipping (RAGEN-2's main-table setting): on the slippery v1 no algorithm moved from the warm start within this
 * budget, which would compare three flat lines. Sokoban at its smaller budget (SOKOBAN_RL): at the full one its 9
 * runs would take ~11 hours. The pretrained SmolLM2 on the issue's three tasks, from the warm starts of their
 * `bench learning` cases, at shorter budgets (Bandit was at 100% from iteration 2; 9 runs of FrozenLake at 24
 * iterations would take ~10 hours here). Case names: `seeds-<env>-<preset>-s<seed>`.
 */
const SEED_STUDY_ENV = {
  sokoban: { warmStart: FORMAT_WARM_STARTS.sokoban, overrides: SOKOBAN_RL },
  frozenlake: { warmStart: FORMAT_WARM_STARTS.frozenlake, overrides: [...FROM_REWARD_RL, 'env=frozenlake-noslip'] },
  // 8 groups: StarPO-S keeps the top quarter, 2 groups = one mini-batch of 8.
  'smollm2-bandit': { warmStart: SMOLLM2_FORMAT, overrides: [...SMOLLM2_RL, 'envGroups=8', 'iterations=10'] },
  'smollm2-bandit-reversed': {
    warmStart: SMOLLM2_FORMAT_OTHER_NAMES,
    overrides: [...SMOLLM2_RL, 'env=bandit-reversed', 'groupSize=8', 'iterations=10'],
  },
  'smollm2-frozenlake': {
    warmStart: SMOLLM2_FROZENLAKE_FORMAT,
    overrides: [...SMOLLM2_FROZENLAKE_RL, 'iterations=12'],
  },
} as const satisfies Record<string, { warmStart: WarmStart; overrides: readonly string[] }>;

export const SEED_STUDY = {
  envs: Object.keys(SEED_STUDY_ENV) as (keyof typeof SEED_STUDY_ENV)[],
  presets: ['starpo-s', 'starpo', 'grpo'] as const satisfies readonly PresetName[],
  seeds: [0, 1, 2],
};

export function seedStudyCases(): LearningCase[] {
  return SEED_STUDY.envs.flatMap((env) =>
    SEED_STUDY.presets.flatMap((preset) =>
      SEED_STUDY.seeds.map((seed) => ({
        name: `seeds-${env}-${preset}-s${seed}`,
        preset,
        target: 0,
        warmStart: SEED_STUDY_ENV[env].warmStart,
        overrides: [...SEED_STUDY_ENV[env].overrides, `seed=${seed}`],
      })),
    ),
  );
}

/**
 * STARPO_BENCH_TINY=1 (or --tiny): every case and warm start at a size that runs end to end in a
 * minute or two, to check the benchmark itself before launching the real runs.
 */
export const TINY = [
  'iterations=2',
  'envGroups=4',
  'groupSize=4',
  'miniBatchSize=4',
  'valSeeds=8',
  'valEvery=1',
  'sftSteps=4',
  'sftEpisodes=16',
  'sftBatchSize=4',
  'collapseSamples=8',
  'modelLayers=1',
  'modelHidden=32',
  'modelFfn=64',
  'threads=1',
];
