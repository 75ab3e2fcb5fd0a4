/**
 * Token sampling from one row of logits, with temperature, top-k and top-p (nucleus) truncation.
 *
 * The log-prob returned is always log softmax(logits / T)[token]: the log-probability under the full
 * temperature-scaled distribution, *before* top-k/top-p truncation. That is the behaviour policy PPO's old
 * log-probs must match, because the trainer recomputes log softmax(logits / T) without truncation. For greedy
 * decoding (T = 0) it is log softmax(logits)[token], i.e. T = 1, since the T → 0 limit is 0 for every argmax.
 *
 * Truncation follows HF's warpers: top-k first, then top-p over the renormalised top-k set, keeping the
 * smallest set of most likely tokens whose mass reaches p (at least one). Ties go to the lower token id.
 * A TokenSampler owns its scratch buffers, so sampling allocates nothing per token.
 */
import { ConfigError, StarpoError } from '../../errors.ts';
import type { SamplingRng } from './rng.ts';

export interface SamplingOptions {
  /** Softmax temperature; 0 means greedy (argmax). */
  readonly temperature: number;
  /** Nucleus mass in (0, 1]; 1 (default) disables it. */
  readonly topP?: number;
  /** Keep only the k most likely tokens; 0 (default) disables it. */
  readonly topK?: number;
}

export interface SampleResult {
  readonly token: number;
  /** log softmax(logits / T)[token] (T = 1 when greedy); see the module comment. */
  readonly logProb: number;
  /** Entropy of softmax(logits / T) (T = 1 when greedy), the distribution logProb is taken from. */
  readonly entropy: number;
}

export class TokenSampler {
  /** exp((logit - max) / T) per token. */
  private readonly weights: Float64Array;
  /** Candidate token ids (a heap while selecting). */
  private readonly order: Int32Array;
  /** The top-p nucleus, most likely first, when it is popped off a heap. */
  private readonly picked: Int32Array;
  private logProb = 0;
  private entropy = 0;

  constructor(readonly vocabSize: number) {
    this.weights = new Float64Array(vocabSize);
    this.order = new Int32Array(vocabSize);
    this.picked = new Int32Array(vocabSize);
  }

  /** Samples from `logits[offset … offset + vocabSize)`. */
  sample(logits: Float32Array, options: SamplingOptions, rng: SamplingRng, offset = 0): SampleResult {
    checkOptions(options);
    const token = this.sampleRow(logits, offset, options, rng);
    return { token, logProb: this.logProb, entropy: this.entropy };
  }

  /**
   * Samples every row of a [batch, vocabSize] matrix into `tokens` and `logProbs` (and each distribution's
   * entropy into `entropies`). One generator is drawn from row after row; an array gives each row its own
   * (so a row's draws do not depend on the batch it is in).
   */
  sampleBatch(
    logits: Float32Array,
    options: SamplingOptions,
    rng: SamplingRng | readonly SamplingRng[],
    tokens: Int32Array,
    logProbs: Float32Array,
    entropies?: Float32Array,
  ): void {
    checkOptions(options);
    const batch = tokens.length;
    if (
      logits.length !== batch * this.vocabSize ||
      logProbs.length !== batch ||
      (Array.isArray(rng) && rng.length !== batch)
    ) {
      throw new StarpoError(
        `sampleBatch: ${logits.length} logits, ${batch} tokens, vocab ${this.vocabSize} do not agree`,
      );
    }
    for (let b = 0; b < batch; b++) {
      const r = Array.isArray(rng) ? rng[b] : (rng as SamplingRng);
      tokens[b] = this.sampleRow(logits, b * this.vocabSize, options, r);
      logProbs[b] = this.logProb;
      if (entropies) entropies[b] = this.entropy;
    }
  }

  private sampleRow(logits: Float32Array, offset: number, options: SamplingOptions, rng: SamplingRng): number {
    const V = this.vocabSize;
    let max = -Infinity;
    let argmax = 0;
    for (let i = 0; i < V; i++) {
      const x = logits[offset + i];
      if (x !== x) throw new StarpoError(`logits contain NaN (token ${i})`);
      if (x > max) {
        max = x;
        argmax = i;
      }
    }
    if (!Number.isFinite(max)) throw new StarpoError(`the largest logit is ${max}`);
    const greedy = options.temperature === 0;
    const invT = greedy ? 1 : 1 / options.temperature;
    const w = this.weights;
    let sum = 0;
    let weighted = 0;
    for (let i = 0; i < V; i++) {
      const z = (logits[offset + i] - max) * invT;
      sum += w[i] = Math.exp(z);
      if (w[i] > 0) weighted += w[i] * z; // a masked (−∞) token adds nothing, not 0·−∞
    }
    const logSum = Math.log(sum);
    const token = greedy ? argmax : this.draw(options, sum, rng);
    this.logProb = (logits[offset + token] - max) * invT - logSum;
    this.entropy = logSum - weighted / sum; // −Σ p log p with p = w / sum, log p = z − log sum
    return token;
  }

  /** Picks a token from the weights, truncated to top-k / top-p when asked. */
  private draw(options: SamplingOptions, sum: number, rng: SamplingRng): number {
    const V = this.vocabSize;
    const topK = options.topK ?? 0;
    const topP = options.topP ?? 1;
    const w = this.weights;
    if (topK > 0 && topK < V) {
      this.selectTopK(topK);
      let kept = 0;
      for (let i = 0; i < topK; i++) kept += w[this.order[i]];
      return this.drawPrefix(this.order, this.nucleusLength(this.order, topK, topP * kept), rng);
    }
    if (topP < 1) return this.drawPrefix(this.picked, this.popNucleus(topP * sum), rng);
    const u = rng.next() * sum;
    let acc = 0;
    let last = 0;
    for (let i = 0; i < V; i++) {
      if (w[i] === 0) continue;
      acc += w[i];
      last = i;
      if (u < acc) return i;
    }
    return last; // rounding left u at the very top
  }

  /** Samples among ids[0 … count) in proportion to their weights. */
  private drawPrefix(ids: Int32Array, count: number, rng: SamplingRng): number {
    const w = this.weights;
    let mass = 0;
    for (let i = 0; i < count; i++) mass += w[ids[i]];
    const u = rng.next() * mass;
    let acc = 0;
    for (let i = 0; i < count; i++) {
      acc += w[ids[i]];
      if (u < acc) return ids[i];
    }
    return ids[count - 1];
  }

  /** Length of the shortest prefix of sorted ids[0 … n) whose weight reaches `target` (at least 1). */
  private nucleusLength(ids: Int32Array, n: number, target: number): number {
    const w = this.weights;
    let mass = w[ids[0]];
    let count = 1;
    while (count < n && mass < target && w[ids[count]] > 0) mass += w[ids[count++]];
    return count;
  }

  /** Top k by a size-k min-heap over all tokens (O(V log k)), then heap-sorted into order[0 … k), best first. */
  private selectTopK(k: number): void {
    const heap = this.order;
    for (let i = 0; i < k; i++) {
      heap[i] = i;
      this.siftUp(heap, i, -1);
    }
    for (let i = k; i < this.vocabSize; i++) {
      if (this.before(i, heap[0])) {
        heap[0] = i;
        this.siftDown(heap, 0, k, -1);
      }
    }
    for (let end = k - 1; end > 0; end--) {
      swap(heap, 0, end);
      this.siftDown(heap, 0, end, -1);
    }
  }

  /**
   * Top-p without top-k: heap the likely tokens and pop the best into picked[] until their weight reaches
   * `target`. Only tokens with weight >= tau go on the heap: they form a prefix of the sorted order, so once
   * their mass reaches the target the nucleus lies inside them (tau is lowered until it does). For peaked LLM
   * distributions this heaps a few hundred tokens instead of the whole vocabulary.
   */
  private popNucleus(target: number): number {
    const heap = this.order;
    const w = this.weights;
    let size: number;
    for (let tau = 1e-4; ; tau = tau > 1e-300 ? tau * 1e-4 : 0) {
      let mass = 0;
      size = 0;
      for (let i = 0; i < this.vocabSize; i++) {
        if (w[i] >= tau) {
          heap[size++] = i;
          mass += w[i];
        }
      }
      if (mass >= target || tau === 0) break;
    }
    for (let i = (size >> 1) - 1; i >= 0; i--) this.siftDown(heap, i, size, 1);
    let count = 0;
    let mass = 0;
    do {
      const best = heap[0];
      if (count > 0 && w[best] === 0) break;
      this.picked[count++] = best;
      mass += w[best];
      heap[0] = heap[--size];
      this.siftDown(heap, 0, size, 1);
    } while (size > 0 && mass < target);
    return count;
  }

  /** Token a ranks before token b: more likely, or as likely with a lower id. */
  private before(a: number, b: number): boolean {
    const w = this.weights;
    return w[a] > w[b] || (w[a] === w[b] && a < b);
  }

  /** Heap order: sign 1 keeps the best token on top (max-heap), -1 the worst (min-heap). */
  private above(a: number, b: number, sign: 1 | -1): boolean {
    return sign === 1 ? this.before(a, b) : this.before(b, a);
  }

  private siftUp(heap: Int32Array, i: number, sign: 1 | -1): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.above(heap[i], heap[parent], sign)) return;
      swap(heap, i, parent);
      i = parent;
    }
  }

  private siftDown(heap: Int32Array, i: number, size: number, sign: 1 | -1): void {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) return;
      const child = l + 1 < size && this.above(heap[l + 1], heap[l], sign) ? l + 1 : l;
      if (!this.above(heap[child], heap[i], sign)) return;
      swap(heap, i, child);
      i = child;
    }
  }
}

function swap(a: Int32Array, i: number, j: number): void {
  const t = a[i];
  a[i] = a[j];
  a[j] = t;
}

function checkOptions(o: SamplingOptions): void {
  if (!(o.temperature >= 0) || !Number.isFinite(o.temperature))
    throw new ConfigError('temperature', `${o.temperature} must be >= 0`);
  if (o.topP !== undefined && !(o.topP > 0 && o.topP <= 1))
    throw new ConfigError('top_p', `${o.topP} must be in (0, 1]`);
  if (o.topK !== undefined && !(Number.isSafeInteger(o.topK) && o.topK >= 0))
    throw new ConfigError('top_k', `${o.topK} must be an integer >= 0`);
}

/**
 * Plain sampling at temperature 1 from the program's unnormalised weights exp(logit − max) (`sample_weights`,
 * float32) of row `w[offset … offset + V)`, with that row's logits: the token whose cumulative weight first exceeds
 * u·Σw (u from the row's generator: one draw, as TokenSampler's plain sampling takes), its log-prob z − log Σw and
 * the distribution's entropy log Σw − Σ w·z / Σw (z = logit − max). Sums and scan run here in float64, row by row,
 * so a row's numbers do not depend on its batch (onnxruntime may split a reduction over the vocabulary differently
 * for another batch size); what the program saves is the exp per logit. A token of weight 0 is never drawn.
 */
export function drawFromWeights(
  w: Float32Array,
  logits: Float32Array,
  offset: number,
  V: number,
  rng: SamplingRng,
): SampleResult {
  const end = offset + V;
  let max = -Infinity;
  for (let i = offset; i < end; i++) if (logits[i] > max) max = logits[i];
  let sum = 0;
  let weighted = 0;
  for (let i = offset; i < end; i++) {
    if (w[i] === 0) continue; // a masked (−∞) token adds nothing, not 0·−∞
    sum += w[i];
    weighted += w[i] * (logits[i] - max);
  }
  if (!(sum >= 1 && sum < Infinity)) throw new StarpoError(`the sampling weights sum to ${sum} (NaN or ±∞ logits)`);
  const u = rng.next() * sum;
  let acc = 0;
  let last = offset;
  for (let i = offset; i < end; i++) {
    if (w[i] === 0) continue;
    acc += w[i];
    last = i;
    if (u < acc) break;
  }
  const logSum = Math.log(sum);
  return { token: last - offset, logProb: logits[last] - max - logSum, entropy: logSum - weighted / sum };
}

let cached: TokenSampler | undefined;

/** One-off sampling of a whole logits row; reuses one sampler's buffers across calls of the same vocab size. */
export function sampleToken(logits: Float32Array, options: SamplingOptions, rng: SamplingRng): SampleResult {
  if (cached?.vocabSize !== logits.length) cached = new TokenSampler(logits.length);
  return cached.sample(logits, options, rng);
}

/** log softmax(logits / T)[token] for one row (T = 1 when temperature is 0), matching SampleResult.logProb. */
export function tokenLogProb(logits: ArrayLike<number>, token: number, temperature = 1): number {
  const invT = temperature === 0 ? 1 : 1 / temperature;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] - max) * invT);
  return (logits[token] - max) * invT - Math.log(sum);
}
