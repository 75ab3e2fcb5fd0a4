"""Quantisation reference fixture for starpo's GGUF export (no Python at test time).

Writes test/fixtures/gguf/quantize.json: seeded float32 matrices and what the `gguf` package's
`gguf.quants.quantize` (what llama.cpp's convert_hf_to_gguf.py calls) stores for them as F16 and Q8_0,
all as base64 little-endian bytes. The inputs are chosen where rounding rules show:

  normal    N(0, 1) rows of 96 (three Q8_0 blocks each);
  zero-row  a row of zeros (Q8_0's d = 0 branch) beside ordinary rows;
  q8-ties   blocks whose max |x| is 127, so d = 1 and x·(1/d) is x: halves (±0.5, ±2.5, ...) are ties that
            round away from zero, not to even;
  f16-ties  values exactly halfway between two fp16 numbers (normal and subnormal), values that round up
            into the next binade, past fp16's range (±inf) and below its smallest subnormal (±0);
  scaled    N(0, 0.02) weights, as trained models have, and a block of tiny values (fp16 subnormal d);
  reciprocal blocks (found by a seeded search, ~1 in 40,000) where multiplying by the float32 1/d, as the
            reference does, rounds differently from dividing by d.

Run from the repository root (offline, ~1 s, byte-identical on rerun):

    .cache/torch-venv/bin/python scripts/gguf_quantize_reference.py
"""
import base64
import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf.quants import np_roundf, quantize

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "test" / "fixtures" / "gguf" / "quantize.json"


def b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")


def cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20260412)
    normal = rng.standard_normal((4, 96)).astype(np.float32)
    zero = rng.standard_normal((3, 64)).astype(np.float32)
    zero[1] = 0
    ties = np.arange(-16, 16, dtype=np.float32) + np.float32(0.5)
    q8 = np.stack([np.concatenate([[127], ties[1:]]), np.concatenate([[-127], -ties[1:]])]).astype(np.float32)
    half_ulp = [
        1 + 2**-11,  # tie between 1 and 1 + 2^-10: to even (1)
        1 + 3 * 2**-11,  # tie: to even (1 + 2^-9)
        2048 + 1,  # tie between 2048 and 2050
        2**-24 * 1.5,  # subnormal tie: to even (2^-23)
        2**-24 * 2.5,  # subnormal tie: to even (2^-23)
        2**-25,  # half the smallest subnormal: to even (0)
        2**-25 * 1.0001,  # just above: rounds up to 2^-24
        2**-26,  # below: 0
        65504,  # largest fp16
        65519.99,  # rounds down to 65504
        65520,  # tie at the top: rounds to inf
        1e6,  # inf
        2 - 2**-12,  # rounds up into the next binade (2)
        6.1e-5,  # near the smallest normal
        1 / 3,
        np.pi,
    ]
    # Padded to a whole Q8_0 block of 32 per row.
    pad = rng.standard_normal(16).tolist()
    f16 = np.array([half_ulp + pad, [-x for x in half_ulp] + pad], dtype=np.float32)
    scaled = (rng.standard_normal((2, 64)) * 0.02).astype(np.float32)
    scaled[1, :32] = (rng.standard_normal(32) * 1e-6).astype(np.float32)
    return {
        "normal": normal,
        "zero-row": zero,
        "q8-ties": q8,
        "f16-ties": f16,
        "scaled": scaled,
        "reciprocal": reciprocal_blocks(np.random.default_rng(7), 2),
    }


def reciprocal_blocks(rng: np.random.Generator, n: int) -> np.ndarray:
    found: list[np.ndarray] = []
    while len(found) < n:
        blocks = rng.standard_normal((4096, 32)).astype(np.float32)
        d = np.abs(blocks).max(axis=1, keepdims=True) / np.float32(127)
        differ = (np_roundf(blocks * (np.float32(1) / d)) != np_roundf(blocks / d)).any(axis=1)
        found.extend(blocks[differ])
    return np.stack(found[:n])


def f16(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # the values past fp16's range are there on purpose
        return quantize(x, Q.F16)


def main() -> None:
    out = {
        "versions": {"gguf": version("gguf"), "numpy": np.__version__},
        "cases": [
            {
                "name": name,
                "shape": list(x.shape),
                "f32": b64(x),
                "F16": b64(f16(x)),
                "Q8_0": b64(quantize(x, Q.Q8_0)),
            }
            for name, x in cases().items()
        ],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
