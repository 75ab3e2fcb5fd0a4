"""PyTorch reference for `starpo bench engine`: the same train step on the same CPU.

The model is the engine benchmark's (Qwen2 layout: vocab 256, width 256, SwiGLU 704, 4 layers, 4 heads,
q/k/v bias, RMSNorm, rotary embeddings, tied embeddings), the step the same one starpo compiles into one
ONNX graph: forward, token-mean cross-entropy, backward, global gradient-norm clip 1.0 and AdamW.
Prints one JSON line: best and median seconds per step over timed steps (after warm-up), in eager mode,
and with torch.compile when --compile is given and it works here. With --serve it answers timing
requests on stdin instead, so `starpo bench engine` can interleave PyTorch's steps with its own.

    python scripts/torch_train_step.py --threads 2 --batch 16 --seq 128
"""
import argparse
import json
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotary(T, dim, theta=10000.0):
    inv = 1.0 / theta ** (torch.arange(0, dim, 2).float() / dim)
    freqs = torch.outer(torch.arange(T).float(), inv)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat([-b, a], dim=-1)


class Block(nn.Module):
    def __init__(self, d, heads, kv_heads, ffn):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.ln1, self.ln2 = RMSNorm(d), RMSNorm(d)
        self.q = nn.Linear(d, heads * self.hd, bias=True)
        self.k = nn.Linear(d, kv_heads * self.hd, bias=True)
        self.v = nn.Linear(d, kv_heads * self.hd, bias=True)
        self.o = nn.Linear(heads * self.hd, d, bias=False)
        self.gate = nn.Linear(d, ffn, bias=False)
        self.up = nn.Linear(d, ffn, bias=False)
        self.down = nn.Linear(ffn, d, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        h = self.ln1(x)
        q = self.q(h).view(B, T, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v(h).view(B, T, self.kv_heads, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        if rep > 1:
            k, v = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(B, T, -1))
        h = self.ln2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Model(nn.Module):
    def __init__(self, vocab=256, d=256, ffn=704, layers=4, heads=4, kv_heads=4, T=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(Block(d, heads, kv_heads, ffn) for _ in range(layers))
        self.norm = RMSNorm(d)
        cos, sin = rotary(T, d // heads)
        self.register_buffer('cos', cos, persistent=False)
        self.register_buffer('sin', sin, persistent=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for b in self.blocks:
            x = b(x, self.cos, self.sin)
        return self.norm(x) @ self.embed.weight.T  # tied head


def make_step(args, compiled):
    """A fresh model + AdamW and its train step (returns the loss); compiled with torch.compile if asked."""
    B, T = args.batch, args.seq
    tokens = (torch.arange(B * T) * 7919 % 256).view(B, T)
    inputs, targets = tokens, torch.roll(tokens, -1, dims=1)
    torch.manual_seed(1)
    model = Model(T=T)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01, foreach=True)
    forward = torch.compile(model) if compiled else model

    def step():
        logits = forward(inputs)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, 256), targets[:, :-1].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    return model, step


def timed(step, n):
    """n steps: wall-clock and process-CPU seconds of each."""
    wall, cpu = [], []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return wall, cpu


def serve(args):
    """Line protocol for interleaved timing: stdin `<mode> <n>` (mode eager|compiled) → one JSON line of
    per-step wall and CPU seconds; the first line out lists the modes that built and warmed up."""
    steps, errors, params = {}, {}, None
    for mode in ['eager', 'compiled'] if args.compile else ['eager']:
        try:
            model, step = make_step(args, mode == 'compiled')
            step()
            step()
            steps[mode] = step
            params = sum(p.numel() for p in model.parameters())
        except Exception as err:  # inductor needs a C++ toolchain; report, do not fail the benchmark
            errors[mode] = str(err).splitlines()[0][:200]
    print(json.dumps({'torch': torch.__version__, 'params': params, 'modes': list(steps), 'errors': errors}), flush=True)
    for line in sys.stdin:
        mode, n = line.split()
        wall, cpu = timed(steps[mode], int(n))
        print(json.dumps({'mode': mode, 'wall': wall, 'cpu': cpu}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--batch', type=int, default=16)
    ap.add_argument('--seq', type=int, default=128)
    ap.add_argument('--steps', type=int, default=8)
    ap.add_argument('--compile', action='store_true')
    ap.add_argument('--serve', action='store_true')
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.serve:
        return serve(args)

    def measure(compiled):
        model, step = make_step(args, compiled)
        t0 = time.perf_counter()
        step()
        first = time.perf_counter() - t0
        step()
        times = sorted(timed(step, args.steps)[0])
        params = sum(p.numel() for p in model.parameters())
        return {'params': params, 'firstStepSeconds': round(first, 3), 'stepSeconds': round(times[0], 4),
                'medianStepSeconds': round(times[len(times) // 2], 4)}

    out = {'torch': torch.__version__, 'threads': args.threads, 'batch': args.batch, 'seqLen': args.seq, 'eager': measure(False)}
    if args.compile:
        try:
            out['compiled'] = measure(True)
        except Exception as err:  # inductor needs a C++ toolchain; report, do not fail the benchmark
            out['compiled'] = {'error': str(err).splitlines()[0][:200]}
    print(json.dumps(out))


if __name__ == '__main__':
    main()
