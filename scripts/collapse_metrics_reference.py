"""Expected values of RAGEN-2's collapse metrics for a small hand-made case.

Mirrors ragen/trainer/collapse_metrics.py (mll-lab-nu/RAGEN): _compute_log_prob_stats,
_compute_mi_estimate, the mi_seq_estimate line, _compute_retrieval_accuracy (with column signatures, the
branch RAGEN-2 always takes), _compute_reasoning_entropy and the marginal-std / z-score lines, with the
torch calls written out in plain Python (float64; RAGEN-2 runs them in float32). Writes
test/fixtures/rl/collapse-metrics.json, which test/unit/rl/collapse-metrics.test.ts compares with
src/rl/collapse-metrics.ts. Run once: python3 scripts/collapse_metrics_reference.py
"""
import json
import math
import os

# 5 sampled (x, z) pairs, 3 distinct prompt columns; columns 0 and 2 hold the same prompt tokens.
MEAN = [
    [-0.50, -1.20, -0.90],
    [-1.10, -0.40, -1.30],
    [-0.70, -0.80, -0.60],
    [-2.00, -0.30, -1.00],
    [-0.90, -1.50, -0.20],
]
LENGTHS = [4, 2, 5, 3, 1]
SUM = [[v * LENGTHS[i] for v in row] for i, row in enumerate(MEAN)]
COL_OF_ROW = [0, 1, 2, 0, 2]
PROMPTS = [[7, 8, 9], [7, 8, 1], [7, 8, 9]]
STD_EPS = 1e-3


def logsumexp(xs):
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


def stats(matrix):
    n = len(matrix[0])
    matched = [row[COL_OF_ROW[i]] for i, row in enumerate(matrix)]
    marginal = [logsumexp(row) - math.log(n) for row in matrix]
    return matched, marginal


def mean(xs):
    return sum(xs) / len(xs)


def std_population(xs):  # torch .std(unbiased=False)
    m = mean(xs)
    return math.sqrt(mean([(x - m) ** 2 for x in xs]))


def argsort_desc(row):  # torch.argmax / topk: the larger value first; ties: lower index
    return sorted(range(len(row)), key=lambda j: (-row[j], j))


def retrieval(matrix, signatures):
    n = len(signatures)
    sig_to_id, col_sig = {}, []
    for sig in signatures:
        col_sig.append(sig_to_id.setdefault(tuple(sig), len(sig_to_id)))
    k_max = min(8, n)
    counts = [col_sig.count(s) for s in range(len(sig_to_id))]
    true_sig = [col_sig[c] for c in COL_OF_ROW]
    order = [argsort_desc(row) for row in matrix]
    accuracy = mean([1.0 if col_sig[o[0]] == t else 0.0 for o, t in zip(order, true_sig)])
    chance = mean([counts[t] / n for t in true_sig])
    out = {}
    for k in (2, 4, 8):
        k_eff = min(k, k_max)
        acc_k = mean([1.0 if any(col_sig[j] == t for j in o[:k_eff]) else 0.0 for o, t in zip(order, true_sig)])
        out[f"collapse/retrieval_accuracy@{k}"] = acc_k
        out[f"collapse/retrieval_chance_level@{k}"] = min(1.0, chance * k_eff)
        out[f"collapse/retrieval_above_chance@{k}"] = acc_k - min(1.0, chance * k_eff)
    out.update({
        "collapse/retrieval_accuracy": accuracy,
        "collapse/retrieval_chance_level": chance,
        "collapse/retrieval_above_chance": accuracy - chance,
    })
    return out, col_sig


def main():
    matched, marginal = stats(MEAN)
    matched_sum, marginal_sum = stats(SUM)
    n = len(MEAN[0])
    metrics = {
        "collapse/first_turn_num_total": 6,
        "collapse/first_turn_num_valid": 5,
        "collapse/first_turn_valid_rate": 5 / 6,
        "collapse/mi_estimate": mean(matched) - mean(marginal),
        "collapse/mi_upper_bound": math.log(n),
        "collapse/matched_log_prob_mean": mean(matched),
        "collapse/marginal_log_prob_mean": mean(marginal),
        "collapse/mi_seq_estimate": mean([a - b for a, b in zip(matched_sum, marginal_sum)]),
    }
    ret, col_sig = retrieval(MEAN, PROMPTS)
    metrics.update(ret)
    metrics.update({
        "collapse/conditional_entropy_est": -mean(matched),
        "collapse/reasoning_entropy_est": -mean(marginal),
        "collapse/conditional_entropy_seq_est": -mean(matched_sum),
        "collapse/reasoning_entropy_seq_est": -mean(marginal_sum),
    })
    std, std_seq = std_population(marginal), std_population(marginal_sum)
    metrics["collapse/marginal_std"] = std
    metrics["collapse/marginal_std_seq"] = std_seq
    metrics["collapse/mi_zscore"] = mean([(a - b) / (std + STD_EPS) for a, b in zip(matched, marginal)])
    metrics["collapse/mi_zscore_seq"] = mean([(a - b) / (std_seq + STD_EPS) for a, b in zip(matched_sum, marginal_sum)])
    probe = {
        "rows": len(MEAN), "columns": n, "meanLogProb": [v for row in MEAN for v in row],
        "sumLogProb": [v for row in SUM for v in row], "columnOfRow": COL_OF_ROW, "columnSignature": col_sig,
        "firstTurnTotal": 6, "firstTurnValid": 5,
    }
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "test", "fixtures", "rl", "collapse-metrics.json")
    with open(path, "w") as f:
        json.dump({"source": "scripts/collapse_metrics_reference.py", "probe": probe, "metrics": metrics}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
