#!/usr/bin/env bash
# PyTorch (and transformers, for `bench scale`) for the side-by-side benchmarks `starpo bench engine` and
# `starpo bench scale` (not needed by anything else): a venv under .cache/torch-venv with both from PyPI.
# PyPI's Linux wheels depend on the CUDA libraries (~3 GB), installed too though the benchmarks use the CPU only.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .cache/torch-venv
.cache/torch-venv/bin/pip install --quiet --upgrade pip
.cache/torch-venv/bin/pip install --quiet torch transformers
.cache/torch-venv/bin/python -c 'import torch; import transformers; print("torch", torch.__version__, "transformers", transformers.__version__)'
