#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The main job, end to end on a fresh Debian 12 machine: install dependencies, build skforge;
# compile every example graph for the host target, install each package into a local root, run
# it fused and op-by-op (outputs compared bitwise, timings side by side), uninstall it and show
# the tree clean; then pack the example kernel package from share/, sign, check and inspect it,
# install it with skinstall, query it (info, files), damage and repair it, show its history,
# install it with the package's own scripts, uninstall it, and show the tree clean again.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
sh scripts/bootstrap.sh
BUILD=${SKFORGE_BUILD:-build/release}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSKFORGE_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j "$(nproc)"
SKC=$top/$BUILD/apps/skc/skc
SKINSTALL=$top/$BUILD/apps/skinstall/skinstall
OUT=$top/out/demo
rm -rf "$OUT"
mkdir -p "$OUT/static_kernel_compile_outputs" "$OUT/root"
step() { printf '\n== %s\n' "$*"; }

step "the example graphs on the host target: compile, install, run fused and op-by-op, uninstall"
SKFORGE_BUILD=$BUILD sh scripts/run_examples.sh --npu-arch host --out "$OUT/examples"
find "$OUT/examples/root" | sed "s|$OUT/||" | sort

step "check and plan the example graphs (share/skforge/examples)"
for g in moe_block tbe_cut two_stream decoder; do
    "$SKC" check "share/skforge/examples/$g/graph.yaml"
    "$SKC" plan "share/skforge/examples/$g/graph.yaml"
done

step "the decoder's plan as one self-contained page: streams, events, barriers, notify/wait"
"$SKC" plan share/skforge/examples/decoder/graph.yaml --format html -o "$OUT/decoder-plan.html"
echo "open $OUT/decoder-plan.html in a browser ($(wc -c <"$OUT/decoder-plan.html") bytes, nothing loaded from outside)"

step "the NPU target without CANN: each SuperKernel's AscendC entry and vendor-shaped JSON"
"$SKC" compile share/skforge/examples/moe_block/graph.yaml --npu-arch dav-2201 --sources-only \
    -o "$OUT/npu"
find "$OUT/npu/moe_block_dav-2201_sources" -type f | sed "s|$OUT/||" | sort
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("sk1.json:", {k: d[k] for k in ("coreType","magic","intercoreSync","opParaSize","taskRation","supportSuperKernel")}, "kernelList:", list(d["SuperkernelInfo"]["kernelList"]))' \
    "$OUT/npu/moe_block_dav-2201_sources/ascend910b/SuperKernel/sk1.json"

step "make a signing key"
"$SKC" keygen -o "$OUT/release"

step "pack the example package tree (share/skforge/examples/package)"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
RUN=$OUT/static_kernel_compile_outputs/demo_kernels.run
"$SKC" pack share/skforge/examples/package -o "$RUN" --package-version 1.0.0 \
    --npu-arch dav-2201 --soc Ascend910B1 --sign-key "$OUT/release.pem"

step "pack again: the same inputs give the same bytes"
mkdir -p "$OUT/again"
"$SKC" pack share/skforge/examples/package -o "$OUT/again/demo_kernels.run" --package-version 1.0.0 \
    --npu-arch dav-2201 --soc Ascend910B1 --sign-key "$OUT/release.pem" -q
cmp "$RUN" "$OUT/again/demo_kernels.run"
echo "identical: $(sha256sum "$RUN" | cut -d' ' -f1)"
rm -r "$OUT/again"

step "check it with nothing but sh"
sh "$RUN" --check

step "inspect and verify it without running it"
"$SKC" inspect "$RUN" --list --trusted-key "$OUT/release.pub.pem"

step "install it into $OUT/root with skinstall (signature required)"
"$SKINSTALL" install "$RUN" --install-path "$OUT/root" --require-signature --trusted-key "$OUT/release.pub.pem"
find "$OUT/root" | sed "s|$OUT/||" | sort

step "list and verify what is installed"
"$SKINSTALL" list --install-path "$OUT/root"
"$SKINSTALL" verify --install-path "$OUT/root"

step "query it as dpkg -s / -L would: info and files"
"$SKINSTALL" info demo_kernels --install-path "$OUT/root"
"$SKINSTALL" files demo_kernels --install-path "$OUT/root"

step "damage one installed file: verify names it, repair restores it from the .run"
installed_json=$(find "$OUT/root/opp/static_kernel/ai_core/demo_kernels" -name '*.json' -path '*AddCustom*' | head -1)
printf ' ' >>"$installed_json"
"$SKINSTALL" verify demo_kernels --install-path "$OUT/root" || echo "(verify found the damage, exit $?)"
"$SKINSTALL" repair demo_kernels --from "$RUN" --install-path "$OUT/root" \
    --require-signature --trusted-key "$OUT/release.pub.pem"
"$SKINSTALL" verify demo_kernels --install-path "$OUT/root"

step "what an upgrade would do, without doing it (--dry-run)"
"$SKINSTALL" upgrade "$RUN" --install-path "$OUT/root" --dry-run

step "the history of this tree"
"$SKINSTALL" history --install-path "$OUT/root"

step "a tampered package is refused before anything is written"
mkdir -p "$OUT/tampered"
cp "$RUN" "$OUT/tampered/demo_kernels.run"
printf 'x' >>"$OUT/tampered/demo_kernels.run"
"$SKINSTALL" install "$OUT/tampered/demo_kernels.run" --install-path "$OUT/root" || echo "(refused, exit $?)"
rm -r "$OUT/tampered"

step "uninstall it"
"$SKINSTALL" uninstall demo_kernels --install-path "$OUT/root"

step "the same with only sh: the package's own install.sh and uninstall.sh"
SKFORGE_NO_SKINSTALL=1 sh "$RUN" --install-path="$OUT/root"
SKFORGE_NO_SKINSTALL=1 sh "$OUT/root/opp/static_kernel/ai_core/demo_kernels/uninstall.sh"

step "the tree is clean again"
find "$OUT/root" | sed "s|$OUT/||" | sort
cat "$OUT/root/opp/static_kernel/ai_core/config.ini"
echo
echo "demo complete: package in $RUN"
