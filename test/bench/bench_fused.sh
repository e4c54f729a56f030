#!/bin/bash
# Fused vs op-by-op on the decoder example (test/bench/gen_decoder.py), side by side in one run:
# the same installed package, the same inputs, the same worker threads; skrun runs each
# SuperKernel as one launch, then every operator as its own launch, and checks the outputs are
# bitwise identical. Small shapes are launch-bound, large shapes compute-bound.
#   test/bench/bench_fused.sh [iterations] [cores]
set -euo pipefail
cd "$(dirname "$0")/../.."
ITER=${1:-50}
CORES=${2:-$(nproc)}
. test/bench/common.sh
bench_build
W=$(mktemp -d "${TMPDIR:-/tmp}/skforge-fused.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/root"
KERNELS=$PWD/share/skforge/examples/host_kernels
echo "| shapes | operators | SuperKernels | fused launches | op-by-op launches | fused ms/run | op-by-op ms/run | speedup | outputs |"
echo "|---|---|---|---|---|---|---|---|---|"
run_case() { # LABEL NAME GEN-ARGS...
    local label=$1 name=$2
    shift 2
    mkdir -p "$W/$name"
    python3 test/bench/gen_decoder.py --kernels "$KERNELS" --name "$name" "$@" >"$W/$name/graph.yaml"
    "$SKC" compile "$W/$name/graph.yaml" --npu-arch host -o "$W/out" --name "$name" >/dev/null
    "$SKINSTALL" install "$W/out/$name.run" --install-path "$W/root" --quiet
    "$SKRUN" "$name" --install-path "$W/root" --compare-unfused --iterations "$ITER" \
        --cores "$CORES" --json >"$W/$name.json" || true
    python3 - "$label" "$W/$name.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[2]))
print("| %s | %d | %d | %d | %d | %.3f | %.3f | %.2fx | %s |" % (
    sys.argv[1], j["operators"], j["superkernels"], j["fused"]["launches"],
    j["unfused"]["launches"], j["fused"]["median_ms"], j["unfused"]["median_ms"], j["speedup"],
    "bitwise identical" if j["identical"] else "DIFFER"))
PY
}
run_case "small: 1 token, hidden 32, 4 layers" dec_small --layers 4 --tokens 1 --hidden 32 --heads 2 --experts 4 --topk 2 --moe-inter 16 --dense-inter 32
run_case "example: 4 tokens, hidden 64, 4 layers" dec_example --layers 4
run_case "large: 64 tokens, hidden 512, 2 layers" dec_large --layers 2 --tokens 64 --hidden 512 --heads 8 --experts 8 --topk 2 --moe-inter 256 --dense-inter 512
echo
echo "median of $ITER runs per mode after one warm-up; $CORES worker threads ($(nproc) CPUs)"
