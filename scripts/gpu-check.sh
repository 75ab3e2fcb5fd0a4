#!/usr/bin/env bash
# The device check, for a machine with a GPU (under 5 minutes). It needs only this checkout (a few MB)
# and installs the rest where the machine reaches npm and PyPI: node_modules (npm ci), then the CUDA
# provider (starpo gpu install, ~730 MB of wheels; cached wheels are reused offline). JSON lines on stdout:
#   - one line and a non-zero exit when something is missing: setup (exit 2: node, npm ci, gpu install)
#     or device (exit 3: doctor's state for the provider, e.g. "installed, no NVIDIA driver");
#   - else the lines of scripts/gpu-check.ts: gradient and train_step (device vs CPU, float32 tolerance),
#     generate (tokens/s), scale_train_step and scale_decode (Qwen2.5-0.5B shape, timed), summary (exit 1
#     when a check failed).
#   scripts/gpu-check.sh [cuda|webgpu]     STARPO_GPU_CHECK_SCALE=quick: a small shape instead of 0.5B
# Everything else the steps print goes to the log ($STARPO_GPU_CHECK_LOG, default /tmp/starpo-gpu-check.log).
set -uo pipefail
cd "$(dirname "$0")/.."
export P="${1:-cuda}" L="${STARPO_GPU_CHECK_LOG:-${TMPDIR:-/tmp}/starpo-gpu-check.log}"
export ONNXRUNTIME_NODE_INSTALL=skip STARPO_LOG_PRETTY=0
: >"$L"

# One JSON line (check, reason, extra fields) and exit with the given code.
fail() {
  node -e 'const [check, reason, extra] = process.argv.slice(1);
    console.log(JSON.stringify({ check, ok: false, provider: process.env.P, reason, ...JSON.parse(extra || "{}"), log: process.env.L }));' \
    "$1" "$3" "${4:-}"
  exit "$2"
}

case "$P" in cuda | webgpu) ;; *) echo "{\"check\":\"setup\",\"ok\":false,\"reason\":\"provider must be cuda or webgpu, got $P\"}"; exit 2 ;; esac
if ! command -v node >/dev/null 2>&1; then
  echo '{"check":"setup","ok":false,"reason":"node not found (Node 20.3 or later)"}'
  exit 2
fi
if [ ! -d node_modules/onnxruntime-node ]; then
  npm ci --no-audit --no-fund >>"$L" 2>&1 || fail setup 2 "npm ci failed (is the npm registry reachable?): $(tail -1 "$L")"
fi
if [ "$P" = cuda ]; then
  node bin/starpo.js gpu install >>"$L" 2>&1 || fail setup 2 "starpo gpu install failed: $(grep '^starpo:' "$L" | tail -1)"
fi

row="$(node bin/starpo.js doctor --json 2>>"$L" | grep "\"name\":\"provider $P\"")"
[ -n "$row" ] || fail setup 2 "starpo doctor printed no row for provider $P"
state="$(node -e 'console.log(JSON.parse(process.argv[1]).state)' "$row")"
if [ "$state" != working ]; then
  fail device 3 "no usable $P device" "$(node -e 'const r = JSON.parse(process.argv[1]); console.log(JSON.stringify({ state: r.state, detail: r.detail }))' "$row")"
fi
echo "$row"

timeout 270 node --import tsx scripts/gpu-check.ts "$P" --scale "${STARPO_GPU_CHECK_SCALE:-0.5b}" 2>>"$L"
rc=$?
[ "$rc" -eq 124 ] && fail timeout 1 "the checks ran past 270 s; the lines above are those that finished"
exit "$rc"
