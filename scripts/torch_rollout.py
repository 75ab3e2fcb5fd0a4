"""PyTorch side of `starpo bench rollout`: the generation work of a recorded rollout, replayed with transformers.

The model is loaded from a Hugging Face directory that `starpo bench rollout` writes (the starpo model's own
weights and config, float32) with transformers' default attention, on the CPU with --threads intra-op
threads. A rollout is a list of turns; each turn is one batched `generate` call (KV cache on, as
transformers does by default) over that turn's prompts, left-padded with an attention mask, sampling at
temperature 1 with no top-k/top-p, for exactly as many new tokens as the longest row of that turn wrote in
starpo (min_new_tokens = max_new_tokens, no eos): the same prompts and at least the same tokens.

It answers one JSON line per request on stdin, so the benchmark can interleave it with starpo:
    {"turns": [{"prompts": [[ids...], ...], "newTokens": 24}, ...]}
  → {"seconds": <wall seconds of all the generate calls>, "cpuSeconds": <their process CPU seconds>,
     "generated": <new tokens>, "prompt": <prompt tokens>}
The first line out describes the setup: {"torch", "transformers", "threads", "attention", "params"}.

    python scripts/torch_rollout.py --model-dir DIR --threads 2
"""
import argparse
import json
import os
import sys
import time

os.environ.setdefault('HF_HUB_OFFLINE', '1')

import torch  # noqa: E402
import transformers  # noqa: E402


def load(model_dir):
    model = transformers.AutoModelForCausalLM.from_pretrained(model_dir, torch_dtype=torch.float32)
    model.eval()
    return model


@torch.inference_mode()
def replay(model, turns, pad_id):
    seconds, cpu, generated, prompt = 0.0, 0.0, 0, 0
    for turn in turns:
        rows = turn['prompts']
        width = max(len(p) for p in rows)
        ids = torch.full((len(rows), width), pad_id, dtype=torch.int64)
        mask = torch.zeros((len(rows), width), dtype=torch.int64)
        for i, p in enumerate(rows):
            ids[i, width - len(p):] = torch.tensor(p, dtype=torch.int64)
            mask[i, width - len(p):] = 1
        new = turn['newTokens']
        t0, c0 = time.perf_counter(), time.process_time()
        out = model.generate(input_ids=ids, attention_mask=mask, do_sample=True, temperature=1.0, top_k=None, top_p=None,
                             max_new_tokens=new, min_new_tokens=new, use_cache=True, pad_token_id=pad_id, eos_token_id=None)
        seconds += time.perf_counter() - t0
        cpu += time.process_time() - c0
        assert out.shape[1] == width + new, out.shape
        generated += len(rows) * new
        prompt += sum(len(p) for p in rows)
    return {'seconds': seconds, 'cpuSeconds': cpu, 'generated': generated, 'prompt': prompt}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--model-dir', required=True)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--pad-id', type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = load(args.model_dir)
    info = {'torch': torch.__version__, 'transformers': transformers.__version__, 'threads': args.threads,
            'attention': model.config._attn_implementation, 'params': sum(p.numel() for p in model.parameters())}
    print(json.dumps(info), flush=True)
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(replay(model, json.loads(line)['turns'], args.pad_id)), flush=True)


if __name__ == '__main__':
    main()
