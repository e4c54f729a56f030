# SPDX-License-Identifier: Apache-2.0
# Shared set-up for the whole-program tests: a scratch directory per test, a small package tree,
# and helpers to corrupt files byte by byte.

setup() {
    : "${SKC:?SKC must point to the skc executable}"
    # No dot in the name: CANN's runtime cuts a kernel's absolute path at its first ".o" to find
    # its JSON, so a scratch root like /tmp/skforge-cli.oXY would break the opbase-logic reader.
    W=$(mktemp -d "${BATS_TMPDIR:-/tmp}/skforge-cli-XXXXXX")
    cd "$W"
    export SOURCE_DATE_EPOCH=1700000000
    export SKFORGE_NO_SKINSTALL=1
}

teardown() {
    cd /
    chmod -R u+rwx "$W" 2>/dev/null || true
    rm -rf "$W"
}

# wait_until CMD...: runs CMD every 0.05 s until it succeeds, for up to 60 s. A test waits so for
# what a background process does, never for a fixed time (a loaded machine is slower).
wait_until() {
    local i
    for i in $(seq 1200); do
        "$@" && return 0
        sleep 0.05
    done
    echo "timed out waiting for: $*" >&2
    return 1
}

# make_tree DIR: a package tree like a compiled kernel directory.
make_tree() {
    mkdir -p "$1/ascend910b/AddCustom" "$1/config/ascend910b"
    printf '{"kernelName":"AddCustom_1"}\n' >"$1/ascend910b/AddCustom/AddCustom_1.json"
    head -c 50000 /dev/urandom >"$1/ascend910b/AddCustom/AddCustom_1.o"
    printf '{"AddCustom":{}}\n' >"$1/config/ascend910b/binary_info_config.json"
    printf '#!/bin/sh\necho tool\n' >"$1/tool.sh"
    chmod 0755 "$1/tool.sh"
}

# pack_tree NAME [skc pack options...]: packs ./tree into ./NAME.run.
pack_tree() {
    local name=$1
    shift
    [ -d tree ] || make_tree tree
    "$SKC" pack tree -o "$name.run" --package-version 1.2.3 --npu-arch dav-2201 --soc Ascend910B1 -q "$@"
}

# flip_byte FILE OFFSET: xor the byte at OFFSET with 0x01.
flip_byte() {
    python3 - "$1" "$2" <<'PY'
import sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, 'r+b') as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 1]))
PY
}

# header_value FILE KEY: a SKF_ value from a package's header.
header_value() {
    sed -n "s/^SKF_$2=//p" "$1" | head -n 1 | tr -d "' "
}

# tree_digest DIR: one line per entry with type, mode and content digest, for before/after checks.
tree_digest() {
    (cd "$1" && find . -printf '%y %m %s %p %l\n' | sort && find . -type f -exec sha256sum {} + | sort) | sha256sum
}

# static_kernel DIR NAME TYPE [BLOCKDIM] [EXTRA_JSON]: a precompiled kernel DIR/NAME.{o,json} as
# the op compiler writes one: kernelName NAME_k, the kernel type TYPE (KERNEL_TYPE_AIV_ONLY, ...),
# blockDim BLOCKDIM (default 8), one 64-byte workspace, the binary's sha256, and EXTRA_JSON
# (',"key":value...') added at the end.
static_kernel() {
    mkdir -p "$1"
    head -c 2000 /dev/urandom >"$1/$2.o"
    printf '{"kernelName":"%s_k","blockDim":%s,"magic":"RT_DEV_BINARY_MAGIC_ELF","sub_operator_kernel_type":"%s","supportSuperKernel":1,"sha256":"%s","workspace":{"num":1,"size":[64],"type":[0]}%s}\n' \
        "$2" "${4:-8}" "$3" "$(sha256sum "$1/$2.o" | cut -d' ' -f1)" "${5:-}" >"$1/$2.json"
}

# npu_kernels DIR NAME...: a precompiled vector kernel DIR/NAME.o (random bytes) with its
# metadata DIR/NAME.json (kernelName NAME_k, blockDim 8, the binary's sha256) for each NAME.
npu_kernels() {
    local dir=$1 k sha
    shift
    mkdir -p "$dir"
    for k in "$@"; do
        head -c 3000 /dev/urandom >"$dir/$k.o"
        sha=$(sha256sum "$dir/$k.o" | cut -d' ' -f1)
        printf '{"kernelName":"%s_k","blockDim":8,"magic":"RT_DEV_BINARY_MAGIC_ELF_AIVEC","sub_operator_kernel_type":"KERNEL_TYPE_AIV_ONLY","supportSuperKernel":1,"sha256":"%s"}\n' "$k" "$sha" >"$dir/$k.json"
    done
}

# fake_bisheng: stand-ins for the CANN toolchain on PATH (bisheng, ld.lld, llvm-objcopy) that
# record every command line in bisheng.log and write their output files; BISHENG_FAIL=1 makes
# the compile step fail like a real compiler error.
fake_bisheng() {
    mkdir -p fakebin
    cat >fakebin/bisheng <<'EOF2'
#!/bin/sh
echo "bisheng $*" >>"$BISHENG_LOG"
[ "$1" = --version ] && { echo "fake bisheng 0.0"; exit 0; }
if [ "${BISHENG_FAIL:-0}" = 1 ] && [ "$1" = -c ]; then
    echo "gen/s.cpp:12:5: error: use of undeclared identifier" >&2
    exit 1
fi
out="" symbols=""
while [ $# -gt 0 ]; do
    [ "$1" = -o ] && out=$2
    # FAKE_BISHENG_SYMBOLS=1: the object names the entry's exported symbol, as a real one's
    # string table does (-Dauto_gen_<K>_kernel=<K>_mix_<aic|aiv>).
    case $1 in -Dauto_gen_*=*) symbols="$symbols ${1#*=}" ;; esac
    shift
done
printf 'device object %s\n' "$out" >"$out"
if [ "${FAKE_BISHENG_SYMBOLS:-0}" = 1 ]; then for s in $symbols; do printf '%s\n' "$s" >>"$out"; done; fi
EOF2
    cat >fakebin/ld.lld <<'EOF2'
#!/bin/sh
echo "ld.lld $*" >>"$BISHENG_LOG"
out="" inputs=""
while [ $# -gt 0 ]; do
    case $1 in -o) out=$2; shift ;; *.o) inputs="$inputs $1" ;; esac
    shift
done
# FAKE_BISHENG_SYMBOLS=1: the output holds its inputs, so their symbols stay in it.
if [ "${FAKE_BISHENG_SYMBOLS:-0}" = 1 ]; then
    for f in $inputs; do [ "$f" = "$out" ] || cat "$f" >>"$out.link"; done
    [ -f "$out" ] && cat "$out" >>"$out.link"
    mv "$out.link" "$out"
fi
printf 'linked object %s\n' "$out" >>"$out"
EOF2
    # llvm-objcopy [options] IN [OUT]: OUT is a copy of IN; without OUT, IN changes in place.
    cat >fakebin/llvm-objcopy <<'EOF2'
#!/bin/sh
echo "llvm-objcopy $*" >>"$BISHENG_LOG"
in="" out=""
for a in "$@"; do
    case $a in -*) ;; *) if [ -z "$in" ]; then in=$a; else out=$a; fi ;; esac
done
[ -f "$in" ] || { echo "llvm-objcopy: '$in': No such file" >&2; exit 1; }
if [ -n "$out" ]; then cp "$in" "$out"; else echo "objcopied" >>"$in"; fi
EOF2
    chmod +x fakebin/bisheng fakebin/ld.lld fakebin/llvm-objcopy
    export BISHENG_LOG=$PWD/bisheng.log
}

# state_digest DIR: tree_digest without ai_core/log/, the history: it is appended outside the
# transaction (a killed command has no line; the recover that finishes it adds its own);
# without config/static_kernel.keys, the per-key record: a cache that names the files it was
# built from by their mtimes, rebuilt whenever it does not describe the tree; and with each
# install record's `file_stamps` (and so its size) left out: they name the staged files'
# inodes and times, which differ between two installs of the same package.
state_digest() {
    local log=./opp/static_kernel/ai_core/log keys=./opp/static_kernel/ai_core/config/static_kernel.keys
    (cd "$1" && find . -path $log -prune -o ! -path $keys -printf '%y %m %s %p %l\n' |
        sed 's/^\(f [0-7]*\) [0-9]* \(.*\/\.skforge-installed\.json \)$/\1 \2/' | sort &&
        find . -path $log -prune -o ! -path $keys ! -name .skforge-installed.json -type f -exec sha256sum {} + | sort &&
        find . -name .skforge-installed.json -type f -print0 | sort -z |
        xargs -0 -r sed 's/"file_stamps":{[^}]*},\{0,1\}//') | sha256sum
}

# logging_cat DIR LOG: DIR/cat, which appends a line to LOG each time it is asked for an index
# file (skf_index_feed's `cat ./binary_info_config.json`: the file read as JSON by awk), then runs
# the real cat.
logging_cat() {
    mkdir -p "$1"
    printf '#!/bin/sh\ncase " $* " in *binary_info_config.json*) echo index-read >>"%s" ;; esac\nexec %s "$@"\n' \
        "$2" "$(command -v cat)" >"$1/cat"
    chmod +x "$1/cat"
}

# logging_awk DIR LOG: DIR/awk, which appends a line to LOG each time it is run to check a
# manifest's JSON (-v check=2, skf_json_why), then runs the real awk.
logging_awk() {
    mkdir -p "$1"
    printf '#!/bin/sh\ncase " $* " in *" check=2 "*) echo manifest-json-pass >>"%s" ;; esac\nexec %s "$@"\n' \
        "$2" "$(command -v awk)" >"$1/awk"
    chmod +x "$1/awk"
}
