#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Compiles every example graph in share/skforge/examples for one target. For `host` it also
# installs each package into a local root, runs it fused and op-by-op with skrun (every output
# compared bitwise), uninstalls it and checks the tree is clean. The NPU targets compile and
# package what they can without the CANN toolkit and say what they skipped.
set -eu

usage() {
    cat <<'USAGE'
Usage: scripts/run_examples.sh --npu-arch host|dav-2201|dav-3510 [--out DIR] [--iterations N]

  --npu-arch A     the target (required): host builds, installs, runs and verifies every
                   example; dav-2201 and dav-3510 compile and package what they can
  --out DIR        where outputs and the install root go (default: out/examples-<arch>)
  --iterations N   timed runs per mode for skrun (default 20)
  -h, --help       this text

Binaries come from $SKFORGE_BUILD (default build/release); build them first with
scripts/demo.sh or cmake. Exit status: 0 when every example did what its target can, 1 when one
failed, 2 for a usage error.
USAGE
}

arch="" out="" iterations=20
while [ $# -gt 0 ]; do
    case $1 in
    -h | --help) usage; exit 0 ;;
    --npu-arch) [ $# -ge 2 ] || { echo "ERROR: --npu-arch needs a value." >&2; exit 2; }; arch=$2; shift ;;
    --npu-arch=*) arch=${1#--npu-arch=} ;;
    --out) [ $# -ge 2 ] || { echo "ERROR: --out needs a value." >&2; exit 2; }; out=$2; shift ;;
    --out=*) out=${1#--out=} ;;
    --iterations) [ $# -ge 2 ] || { echo "ERROR: --iterations needs a value." >&2; exit 2; }; iterations=$2; shift ;;
    --iterations=*) iterations=${1#--iterations=} ;;
    *) echo "ERROR: unknown argument '$1'." >&2; usage >&2; exit 2 ;;
    esac
    shift
done
if [ -z "$arch" ]; then
    echo "ERROR: --npu-arch is required." >&2
    usage >&2
    exit 2
fi
case $arch in
host | dav-2201 | dav-3510) ;;
*) echo "ERROR: unsupported NPU architecture '$arch' (host, dav-2201 or dav-3510)." >&2; exit 2 ;;
esac
case $iterations in
'' | *[!0-9]*) echo "ERROR: --iterations must be a number." >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SKFORGE_BUILD:-build/release}
case $BUILD in /*) ;; *) BUILD=$top/$BUILD ;; esac
SKC=${SKC:-$BUILD/apps/skc/skc}
SKINSTALL=${SKINSTALL:-$BUILD/apps/skinstall/skinstall}
SKRUN=${SKRUN:-$BUILD/apps/skrun/skrun}
for b in "$SKC" "$SKINSTALL" "$SKRUN"; do
    [ -x "$b" ] || { echo "ERROR: $b is not built (run scripts/demo.sh, or cmake --build $BUILD)." >&2; exit 1; }
done
out=${out:-$top/out/examples-$arch}
rm -rf "$out"
mkdir -p "$out/root"
outputs=$out/static_kernel_compile_outputs
examples=$top/share/skforge/examples
failed=0 done_list="" skipped="" unsupported=""

for dir in "$examples"/*/; do
    g=$(basename "$dir")
    [ -f "$dir/graph.yaml" ] || continue
    name=${g}_$arch
    printf '\n== %s (%s)\n' "$g" "$arch"
    if ! "$SKC" compile "$dir/graph.yaml" --npu-arch "$arch" -o "$outputs" --name "$name" \
        >"$out/$name.compile.txt" 2>&1; then
        # What an NPU target cannot do here is a skip with its reason, not a failure: fusion
        # without the CANN compiler, or an example that ships no precompiled NPU kernels.
        if [ "$arch" != host ] && grep -q "needs the CANN compiler 'bisheng'\|has no kernel binary (bin_path)" "$out/$name.compile.txt"; then
            echo "skipped: $(grep -m1 'error:' "$out/$name.compile.txt" | sed 's/^.*error: //')"
            skipped="$skipped $g"
            continue
        fi
        # An example that needs what the target lacks (tiling sink on dav-3510) is no failure
        # either.
        if [ "$arch" != host ] && grep -q "cannot run on $arch" "$out/$name.compile.txt"; then
            echo "not for $arch: $(grep -m1 "cannot run on $arch" "$out/$name.compile.txt" | sed 's/^.*error: //')"
            unsupported="$unsupported $g"
            continue
        fi
        cat "$out/$name.compile.txt" >&2
        failed=1
        continue
    fi
    cat "$out/$name.compile.txt"
    if [ "$arch" != host ]; then
        "$SKC" inspect "$outputs/$name.run" --verify >/dev/null
        echo "packaged $outputs/$name.run (static kernels; verified)"
        done_list="$done_list $g"
        continue
    fi
    "$SKINSTALL" install "$outputs/$name.run" --install-path "$out/root" --quiet
    if "$SKRUN" "$name" --install-path "$out/root" --compare-unfused --iterations "$iterations"; then
        done_list="$done_list $g"
    else
        echo "FAILED: $g gives different results fused and op-by-op" >&2
        failed=1
    fi
    "$SKINSTALL" uninstall "$name" --install-path "$out/root" --quiet
done

printf '\n== summary (%s)\n' "$arch"
echo "done:   ${done_list:- none}"
[ -z "$skipped" ] || echo "skipped (SuperKernel fusion needs the CANN toolkit's bisheng on PATH and precompiled NPU kernels):$skipped"
[ -z "$unsupported" ] || echo "not for $arch (it lacks what they need):$unsupported"
if [ "$arch" = host ]; then
    # What the tree keeps for itself: config/, config.ini, version.info, uninstall.sh and log/
    # (skinstall's history).
    left=$(find "$out/root/opp/static_kernel/ai_core" -mindepth 1 -maxdepth 1 ! -name config ! -name config.ini ! -name version.info ! -name uninstall.sh ! -name log | wc -l)
    if [ "$left" -ne 0 ]; then
        echo "FAILED: packages left installed under $out/root" >&2
        failed=1
    else
        echo "install root clean: $out/root/opp/static_kernel/ai_core holds no package"
    fi
fi
exit $failed
