"""PyTorch side of `starpo bench scale`: one measurement per process (RSS is per process), one JSON line out.

The model is transformers' Qwen2ForCausalLM / Qwen3ForCausalLM built from a config.json (random init, no
hub: HF_HUB_OFFLINE=1), float32, eager attention, on the CPU with --threads intra-op threads; with --model-dir DIR
the same class loads DIR's weights instead (from_pretrained, float32; init = the load).

    train     init (model construction = allocation + HF's normal init), then --steps train steps of
              --batch x --seq tokens: token-mean cross-entropy over every next token (labels = inputs),
              backward, clip_grad_norm_(1.0), torch.optim.AdamW (lr 1e-5, betas 0.9/0.999, eps 1e-8, weight
              decay 0.01 on 2-D weights, 0 on norms and biases: what starpo does). With --lora R the base is
              frozen and q/k/v/o/gate/up/down get LoRA adapters as PEFT builds them (A ~ kaiming_uniform(a=sqrt 5),
              B = 0, y = base(x) + (alpha/r)·B(A(x)), dropout 0); only the adapters train. With --micro R the
              batch runs R rows per forward/backward, gradients accumulated (the same step, less memory).
    generate  greedy generation with the KV cache (generate, use_cache=True) of --new tokens for --prompts
              prompts of --prompt-len tokens (no stop token: every row generates --new tokens), after one
              small warm-up generate; tokens/s = prompts · new / seconds of the timed call.

Output: {"side": "pytorch", "initSeconds", "stepSeconds": [...], "generateSeconds", "peakRssBytes", ...}.
Peak RSS is the process's high-water mark (VmHWM in /proc/self/status).

    python scripts/torch_scale.py train --config cfg.json --batch 4 --seq 512 --steps 3 [--lora 16]
    python scripts/torch_scale.py generate --config cfg.json --prompts 16 --prompt-len 512 --new 64
"""
import argparse
import json
import math
import os
import time

os.environ.setdefault('HF_HUB_OFFLINE', '1')

import torch  # noqa: E402
from torch import nn  # noqa: E402
import transformers  # noqa: E402

TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']


def vm_hwm_bytes():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) * 1024
    return None


def build(config_path, model_dir=None):
    with open(config_path) as f:
        raw = json.load(f)
    arch = raw['architectures'][0]
    cls = {'Qwen2ForCausalLM': transformers.Qwen2ForCausalLM, 'Qwen3ForCausalLM': transformers.Qwen3ForCausalLM,
           'LlamaForCausalLM': transformers.LlamaForCausalLM}[arch]
    if model_dir:
        t0 = time.perf_counter()
        model = cls.from_pretrained(model_dir, torch_dtype=torch.float32, attn_implementation='eager')
        model.config.use_cache = True
        return model, model.config, time.perf_counter() - t0
    config = cls.config_class(**{k: v for k, v in raw.items() if k not in ('architectures', 'torch_dtype', 'transformers_version')})
    config._attn_implementation = 'eager'
    config.use_cache = True
    torch.manual_seed(1)
    t0 = time.perf_counter()
    model = cls(config).float()
    return model, config, time.perf_counter() - t0


class LoraLinear(nn.Module):
    """PEFT's LoRA Linear: base(x) + lora_B(lora_A(x)) * alpha / r, base frozen, dropout 0."""

    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


def add_lora(model, r, alpha):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.model.layers:
        for parent in (layer.self_attn, layer.mlp):
            for name in TARGETS:
                if hasattr(parent, name):
                    setattr(parent, name, LoraLinear(getattr(parent, name), r, alpha))


def tokens_for(B, T, V, salt=0):
    i = torch.arange(B * T, dtype=torch.int64)
    return ((i * 7919 + salt * 104729) % V).view(B, T)


def train(args):
    model, config, init_s = build(args.config, args.model_dir)
    if args.lora:
        add_lora(model, args.lora, 2 * args.lora)
    model.train()
    trained = [p for p in model.parameters() if p.requires_grad]
    groups = [{'params': [p for p in trained if p.dim() >= 2], 'weight_decay': 0.01},
              {'params': [p for p in trained if p.dim() < 2], 'weight_decay': 0.0}]
    opt = torch.optim.AdamW([g for g in groups if g['params']], lr=1e-5, betas=(0.9, 0.999), eps=1e-8)
    tokens = tokens_for(args.batch, args.seq, config.vocab_size)
    rows = args.micro or args.batch
    losses, wall, cpu = [], [], []
    for _ in range(args.steps):
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for start in range(0, args.batch, rows):
            chunk = tokens[start:start + rows]
            out = model(input_ids=chunk, labels=chunk, use_cache=False)
            # every row has seq - 1 targets, so the chunk's token-mean weighs rows / batch of the whole batch's
            loss = out.loss * (chunk.shape[0] / args.batch)
            loss.backward()
            total += loss.item()
            del out, loss
        torch.nn.utils.clip_grad_norm_(trained, 1.0)
        opt.step()
        losses.append(total)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {'initSeconds': init_s, 'params': sum(p.numel() for p in model.parameters()),
            'trainedParams': sum(p.numel() for p in trained), 'stepSeconds': wall, 'stepCpuSeconds': cpu, 'losses': losses,
            'microRows': args.micro or None}


@torch.inference_mode()
def generate(args):
    model, config, init_s = build(args.config, args.model_dir)
    model.eval()
    gen = dict(do_sample=False, use_cache=True, eos_token_id=None, pad_token_id=0)

    def run(B, T, new):
        ids = tokens_for(B, T, config.vocab_size, salt=1)
        mask = torch.ones_like(ids)
        t0 = time.perf_counter()
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new, min_new_tokens=new, **gen)
        return time.perf_counter() - t0, out[:, T:]

    run(2, 16, 2)  # warm-up
    seconds, new = run(args.prompts, args.prompt_len, args.new)
    assert new.shape == (args.prompts, args.new), new.shape
    return {'initSeconds': init_s, 'params': sum(p.numel() for p in model.parameters()), 'generateSeconds': seconds,
            'tokensPerSecond': args.prompts * args.new / seconds, 'firstTokens': new[:, :4].tolist()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('mode', choices=['train', 'generate'])
    ap.add_argument('--config', required=True)
    ap.add_argument('--model-dir', default=None, help='load these weights (a Hugging Face model directory)')
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--batch', type=int, default=4)
    ap.add_argument('--seq', type=int, default=512)
    ap.add_argument('--steps', type=int, default=3)
    ap.add_argument('--lora', type=int, default=0)
    ap.add_argument('--micro', type=int, default=0, help='rows per forward/backward (gradient accumulation); 0 = the whole batch')
    ap.add_argument('--prompts', type=int, default=16)
    ap.add_argument('--prompt-len', type=int, default=512)
    ap.add_argument('--new', type=int, default=64)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    out = train(args) if args.mode == 'train' else generate(args)
    out.update({'side': 'pytorch', 'torch': torch.__version__, 'transformers': transformers.__version__,
                'threads': args.threads, 'peakRssBytes': vm_hwm_bytes()})
    print(json.dumps(out), flush=True)


if __name__ == '__main__':
    main()
