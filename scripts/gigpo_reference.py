"""Expected GiGPO advantages under verl-agent's trainer semantics for a small hand-made batch.

Mirrors langfengQ/verl-agent: ray_trainer.py's apply_invalid_action_penalty (the coefficient times
(1 - is_action_valid) subtracted from a step row's episode score and from its already discounted step
return), gigpo/core_gigpo.py's compute_step_discounted_returns, episode_norm_reward with
compute_mean_std_cross_steps=True, build_step_group and step_norm_reward, for both of its modes
(mean_norm, its default, and mean_std_norm), in plain Python (torch.std = sample std). In starpo a turn's
format penalty plays the invalid-action penalty. Writes test/fixtures/rl/gigpo-verl-agent.json, compared by
test/unit/rl/gigpo.test.ts. Run once: python3 scripts/gigpo_reference.py
"""
import json
import math
import os

GAMMA, OMEGA, EPS = 0.5, 1.0, 1e-6
# One row per step: (environment group, trajectory, env reward, format penalty, anchor observation).
ROWS = [
    ("g", "t1", 0.0, 0.0, "S"), ("g", "t1", 1.0, -0.1, "A"),
    ("g", "t2", 0.0, -0.1, "S"), ("g", "t2", 0.0, 0.0, "B"), ("g", "t2", 0.0, 0.0, "C"),
    ("h", "t3", 2.0, 0.0, "S"), ("h", "t3", 0.0, 0.0, "T"),
]


def mean(xs):
    return sum(xs) / len(xs)


def sample_std(xs):
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


def step_returns():
    out = [0.0] * len(ROWS)
    for traj in dict.fromkeys(r[1] for r in ROWS):
        idx = [i for i, r in enumerate(ROWS) if r[1] == traj]
        running = 0.0
        for i in reversed(idx):
            running = ROWS[i][2] + GAMMA * running
            out[i] = running
    return out


def normalise(scores, keys, remove_std):
    groups = {}
    for s, k in zip(scores, keys):
        groups.setdefault(k, []).append(s)
    out = []
    for s, k in zip(scores, keys):
        vals = groups[k]
        if len(vals) == 1:
            # episode_norm_reward: mean 0, std 1 (raw score); step_norm_reward: mean = the score itself.
            out.append(None)
        elif remove_std:
            out.append(s - mean(vals))
        else:
            out.append((s - mean(vals)) / (sample_std(vals) + EPS))
    return out


def advantages(remove_std):
    episode_reward = {t: sum(r[2] for r in ROWS if r[1] == t) for t in {r[1] for r in ROWS}}
    # apply_invalid_action_penalty: the row's episode score and its step return lose the penalty.
    scores = [episode_reward[r[1]] + r[3] for r in ROWS]
    steps = [g + r[3] for g, r in zip(step_returns(), ROWS)]
    a_e = normalise(scores, [r[0] for r in ROWS], remove_std)
    a_s = normalise(steps, [(r[0], r[4]) for r in ROWS], remove_std)
    return [e + OMEGA * (0.0 if s is None else s) for e, s in zip(a_e, a_s)]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "test", "fixtures", "rl", "gigpo-verl-agent.json")
    with open(path, "w") as f:
        json.dump({"source": "scripts/gigpo_reference.py", "gamma": GAMMA, "omega": OMEGA, "rows": ROWS,
                   "mean_norm": advantages(True), "mean_std_norm": advantages(False)}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
