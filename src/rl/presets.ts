/**
 * Named starting points for resolveConfig. Each preset lists only what differs from DEFAULTS (the published
 * StarPO-S configuration), so reading a preset tells you exactly what makes the algorithm what it is.
 */
import type { RlConfig } from './config-fields.ts';

export type PresetName = 'starpo' | 'starpo-s' | 'grpo' | 'gigpo' | 'dapo';

/** Group-relative estimators: no critic, advantages already normalised (no whitening), every group trained. */
const CRITIC_FREE = { critic: false, whitenAdvantages: false, filter: 'none' } as const;

export const PRESETS = {
  /** Vanilla StarPO (RAGEN paper): PPO with a critic (GAE), every group trained, KL 0.001, symmetric clip. */
  starpo: { advantage: 'gae', critic: true, filter: 'none', klCoef: 0.001, clipLow: 0.2, clipHigh: 0.2 },
  /** StarPO-S: keep the top 25% of groups by return std, critic, no KL, clip-higher 0.2/0.28 (= DEFAULTS). */
  'starpo-s': {
    advantage: 'gae',
    critic: true,
    filter: 'top-std',
    filterFraction: 0.25,
    klCoef: 0,
    clipLow: 0.2,
    clipHigh: 0.28,
  },
  /** GRPO as run in RAGEN: group-normalised outcome advantages, no critic, no filter, KL 0.001, clip 0.2/0.2. */
  grpo: { ...CRITIC_FREE, advantage: 'grpo', klCoef: 0.001, clipLow: 0.2, clipHigh: 0.2 },
  /**
   * GiGPO as verl-agent's trainer runs it: episode + anchor-state step advantages (γ 0.95, ω 1) with
   * episode statistics over step rows and penalties after discounting (gigpoForm verl-agent), mean-only
   * normalisation (its default mode mean_norm), no critic, no filter, KL 0.01 and clip 0.2/0.2 as in its
   * example scripts. The paper's Eq. 3: gigpoForm=paper (with groupNormByStd=true for its std division).
   */
  gigpo: {
    ...CRITIC_FREE,
    advantage: 'gigpo',
    klCoef: 0.01,
    clipLow: 0.2,
    clipHigh: 0.2,
    gigpoStepGamma: 0.95,
    gigpoOmega: 1,
    gigpoForm: 'verl-agent',
    groupNormByStd: false,
  },
  /** DAPO: GRPO advantages, clip-higher 0.2/0.28, dynamic sampling (≤ 10 tries), token-mean, no KL or entropy bonus. */
  dapo: {
    ...CRITIC_FREE,
    advantage: 'grpo',
    klCoef: 0,
    clipLow: 0.2,
    clipHigh: 0.28,
    dynamicSampling: true,
    dynamicSamplingMaxTries: 10,
    lossAggregation: 'token-mean',
    entropyCoef: 0,
  },
} as const satisfies Record<PresetName, Partial<RlConfig>>;

export const PRESET_NAMES = Object.keys(PRESETS) as PresetName[];

/**
 * The preset a resolved config is (every field the preset sets has the preset's value; the most specific when more
 * than one fits), whatever named it: a --preset flag, a config file spelling the fields out, a resumed run's saved
 * config. Undefined when none fits.
 */
export function presetOf(c: RlConfig): PresetName | undefined {
  const fits = PRESET_NAMES.filter((name) =>
    Object.entries(PRESETS[name]).every(([field, value]) => c[field as keyof RlConfig] === value),
  );
  return fits.sort((a, b) => Object.keys(PRESETS[b]).length - Object.keys(PRESETS[a]).length)[0];
}
