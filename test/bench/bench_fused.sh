#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Fused vs op-by-op on the decoder example (test/bench/gen_decoder.py), with and without its
# prefetch stream, side by side in one run: the same installed packages, the same inputs, the
# same worker threads; skrun runs each SuperKernel as one launch, then every operator as its own
# launch, and checks the outputs are bitwise identical. Small shapes are launch-bound; the last
# shapes are compute-bound, with more weight bytes than the last-level cache holds, so that the
# next layer's weights are not in the cache when its router and experts start.
#   test/bench/bench_fused.sh [iterations] [cores] [big-iterations]
set -euo pipefail
cd "$(dirname "$0")/../.."
ITER=${1:-50}
CORES=${2:-$(nproc)}
BIG_ITER=${3:-3}
. test/bench/common.sh
bench_build
W=$(mktemp -d "${TMPDIR:-/tmp}/skforge-fused.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/root"
KERNELS=$PWD/share/skforge/examples/host_kernels
LLC=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0)
[ "$LLC" -gt 0 ] 2>/dev/null || LLC=$(getconf LEVEL2_CACHE_SIZE 2>/dev/null || echo 0)
echo "| shapes | prefetch | weights MiB | operators | SuperKernels | fused launches | op-by-op launches | fused ms/run | op-by-op ms/run | speedup | outputs |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
run_case() { # LABEL NAME ITERATIONS GEN-ARGS...
    local label=$1 name=$2 iter=$3
    shift 3
    mkdir -p "$W/$name"
    python3 test/bench/gen_decoder.py --kernels "$KERNELS" --name "$name" "$@" >"$W/$name/graph.yaml"
    "$SKC" compile "$W/$name/graph.yaml" --npu-arch host -o "$W/out" --name "$name" >/dev/null
    "$SKINSTALL" install "$W/out/$name.run" --install-path "$W/root" --quiet
    "$SKRUN" "$name" --install-path "$W/root" --compare-unfused --iterations "$iter" \
        --cores "$CORES" --json >"$W/$name.json" || true
    "$SKINSTALL" uninstall "$name" --install-path "$W/root" --quiet
    python3 - "$label" "$W/$name.json" "$W/$name/graph.yaml" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[2]))
graph = open(sys.argv[3]).read()
size = {"float16": 2, "bfloat16": 2, "float32": 4, "int32": 4, "int8": 1}
weights = 0  # every graph input but the activations x0
for name, shape, dtype in re.findall(r"\{name: (\w+), shape: \[([\d, ]+)\], dtype: (\w+)\}",
                                     graph.split("scopes:")[0]):
    if name != "x0":
        n = 1
        for d in shape.split(","):
            n *= int(d)
        weights += n * size[dtype]
print("| %s | %s | %.2f | %d | %d | %d | %d | %.3f | %.3f | %.2fx | %s |" % (
    sys.argv[1], "no" if "--no-prefetch" in graph else "yes", weights / 2**20, j["operators"],
    j["superkernels"], j["fused"]["launches"], j["unfused"]["launches"], j["fused"]["median_ms"],
    j["unfused"]["median_ms"], j["speedup"], "bitwise identical" if j["identical"] else "DIFFER"))
PY
}
both() { # LABEL NAME ITERATIONS GEN-ARGS...: with the prefetch stream, then without
    local label=$1 name=$2 iter=$3
    shift 3
    run_case "$label" "$name" "$iter" "$@"
    run_case "$label" "${name}_nopf" "$iter" --no-prefetch "$@"
}
both "small: 1 token, hidden 32, 4 layers" dec_small "$ITER" --layers 4 --tokens 1 --hidden 32 --heads 2 --experts 4 --topk 2 --moe-inter 16 --dense-inter 32
both "example: 4 tokens, hidden 64, 4 layers" dec_example "$ITER" --layers 4
both "large: 64 tokens, hidden 512, 2 layers" dec_large "$ITER" --layers 2 --tokens 64 --hidden 512 --heads 8 --experts 8 --topk 2 --moe-inter 256 --dense-inter 512
both "compute-bound: 4 tokens, hidden 2048, 16 experts, 2 layers" dec_big "$BIG_ITER" --layers 2 --tokens 4 --hidden 2048 --heads 16 --experts 16 --topk 2 --moe-inter 1024 --dense-inter 2048
echo
echo "median of $ITER runs per mode ($BIG_ITER for the compute-bound shapes) after one warm-up;"
echo "$CORES worker threads ($(nproc) CPUs); last-level cache $((LLC / 1048576)) MiB; load: $(uptime | sed 's/.*load average/load average/')"
