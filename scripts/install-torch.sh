#!/usr/bin/env bash
# PyTorch for the side-by-side in `starpo bench engine` (not needed by anything else): a venv under
# .cache/torch-venv with torch from PyPI. PyPI's Linux wheels depend on the CUDA libraries (~3 GB),
# which are installed too even though the benchmark runs on the CPU only.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .cache/torch-venv
.cache/torch-venv/bin/pip install --quiet --upgrade pip
.cache/torch-venv/bin/pip install --quiet torch
.cache/torch-venv/bin/python -c 'import torch; print("torch", torch.__version__)'
