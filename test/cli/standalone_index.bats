#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A .run on a host without skforge: its own install.sh and uninstall.sh leave the global index
# (ai_core/config/<soc dir>/binary_info_config.json) byte for byte as skinstall leaves it, so CANN's
# runtime ($OPBASE_READ, written from opbase's indv_collector.cpp) finds every kernel; driven the
# way TorchAir drives it (torchair_flow.py), alternating with skinstall, and in a tree that a
# package laid out by CANN's own installer shares.
load helpers

HERE=$BATS_TEST_DIRNAME

# pkg NAME ARCH ADD_LEN MUL_SHAPE: compiles ./NAME.run: Add on float16[ADD_LEN] and Mul on
# float16[MUL_SHAPE], no SuperKernels; dav-2201 for Ascend910B1 (ascend910b), dav-3510 for its
# default SoC (ascend950).
pkg() {
    local soc=
    [ "$2" != dav-2201 ] || soc="soc_version: Ascend910B1"
    npu_kernels "g$1/k" add mul
    cat >"g$1/graph.yaml" <<EOF
name: g
npu_arch: $2
$soc
super_kernel_optimize: false
inputs: [{name: x, shape: [$3], dtype: float16}, {name: w, shape: [$4], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [$3], dtype: float16}]}
  - {name: m, type: Mul, kernel: {json_path: k/mul.json, bin_path: k/mul.o}, inputs: [w], outputs: [{name: z, shape: [$4], dtype: float16}]}
EOF
    [ -d fakebin ] || fake_bisheng
    PATH=$PWD/fakebin:$PATH ASCEND_HOME_PATH=/opt/cann "$SKC" compile "g$1/graph.yaml" --name "$1" -o "out$1" >/dev/null
    mv "out$1/$1.run" "$1.run"
}

# Compiled once for the file (a few seconds each under the sanitizers): per architecture p1;
# p2 (its Mul hides p1's); p3 (its Add hides p1's, a Mul of its own).
setup_file() {
    local arch
    export SOURCE_DATE_EPOCH=1700000000
    for arch in dav-2201 dav-3510; do
        mkdir -p "$BATS_FILE_TMPDIR/$arch"
        (
            cd "$BATS_FILE_TMPDIR/$arch"
            pkg p1 "$arch" 16 "16, 32"
            pkg p2 "$arch" 32 "16, 32"
            pkg p3 "$arch" 16 8
        )
    done
}

# three_packages ARCH: the file's p1, p2 and p3 for ARCH in the working directory.
three_packages() {
    cp "$BATS_FILE_TMPDIR/$1"/p[123].run .
}

# The TorchAir host: $ASCEND_HOME_PATH is .../ascend-toolkit/latest, a symlink to the version.
toolkit() {
    mkdir -p "$1/ascend-toolkit/8.5.0"
    ln -s 8.5.0 "$1/ascend-toolkit/latest"
}
ai_of() { echo "$1/ascend-toolkit/8.5.0/opp/static_kernel/ai_core"; }

# kernels ROOT SOC: what the runtime finds in ROOT (the toolkit), one line per key; fails when
# it would skip anything.
kernels() {
    "$OPBASE_READ" "$1/ascend-toolkit/latest/opp" "$2"
}

# count ROOT SOC PACKAGE [OPTYPE]: how many keys the runtime takes from PACKAGE (for OPTYPE).
count() {
    local n
    n=$(kernels "$1" "$2" | grep -c "^${4:-[A-Za-z]*} .* bin=$3/") || true
    echo "$n"
}

# same ROOT REF SOC: ROOT's index, config.ini and top-level files are byte-identical to REF's
# (installed by skinstall alone), and the runtime finds the same kernels in both.
same() {
    local a b f
    a=$(ai_of "$1")
    b=$(ai_of "$2")
    for f in config/"$3"/binary_info_config.json config.ini uninstall.sh version.info; do
        if [ -e "$b/$f" ]; then cmp "$a/$f" "$b/$f"; else [ ! -e "$a/$f" ]; fi
    done
    diff <(kernels "$1" "$3" | sed "s,^no index $1/,no index ,") \
        <(kernels "$2" "$3" | sed "s,^no index $2/,no index ,")
}

# ref COMMAND ARGS...: skinstall on the reference toolkit.
ref() {
    "$SKINSTALL" "$@" --install-path "$W/ref/ascend-toolkit/latest" -q
}

# torchair_sequence ARCH SOC: TorchAir installs p1, p2, p3 (each from its own output directory,
# executed with no arguments) on a host without skforge, then uninstalls them in that order at
# exit; after every step the runtime finds exactly the winners, and the index is skinstall's.
torchair_sequence() {
    three_packages "$1"
    toolkit host
    toolkit ref
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    unset SKFORGE_NO_SKINSTALL
    local p
    for p in p1 p2 p3; do
        mkdir "ts_$p"
        cp "$p.run" "ts_$p/"
    done
    (
        # What the host has: no skforge tool anywhere on PATH.
        export PATH=/usr/bin:/bin
        ! command -v skinstall && ! command -v skc
        python3 "$HERE/torchair_flow.py" install ts_p1 state
    )
    ref install p1.run
    local add1 n2 n3
    add1=$(count host "$2" p1 Add)
    [ "$add1" -gt 0 ] && [ "$(count host "$2" p1 Mul)" -gt 0 ]
    same host ref "$2"
    PATH=/usr/bin:/bin python3 "$HERE/torchair_flow.py" install ts_p2 state
    ref install p2.run
    [ "$(count host "$2" p1 Mul)" -eq 0 ] # hidden by p2's
    [ "$(count host "$2" p1 Add)" -eq "$add1" ]
    n2=$(count host "$2" p2)
    [ "$(count host "$2" p2 Add)" -gt 0 ] && [ "$(count host "$2" p2 Mul)" -gt 0 ]
    same host ref "$2"
    PATH=/usr/bin:/bin python3 "$HERE/torchair_flow.py" install ts_p3 state
    ref install p3.run
    [ "$(count host "$2" p1)" -eq 0 ] # its Add hidden by p3's
    [ "$(count host "$2" p2)" -eq "$n2" ]
    n3=$(count host "$2" p3)
    [ "$(count host "$2" p3 Add)" -gt 0 ] && [ "$(count host "$2" p3 Mul)" -gt 0 ]
    same host ref "$2"
    # The glob found the installed scripts.
    grep -q "opp/static_kernel/ai_core/p3/uninstall.sh" state
    # At exit: p1's uninstall.sh, then p2's, then p3's, as recorded.
    PATH=/usr/bin:/bin python3 "$HERE/torchair_flow.py" uninstall state 1
    ref uninstall p1
    [ ! -e "$(ai_of host)/p1" ]
    [ "$(count host "$2" p2)" -eq "$n2" ]
    [ "$(count host "$2" p3)" -eq "$n3" ]
    same host ref "$2"
    PATH=/usr/bin:/bin python3 "$HERE/torchair_flow.py" uninstall state 1
    ref uninstall p2
    [ "$(count host "$2" p2)" -eq 0 ]
    [ "$(count host "$2" p3)" -eq "$n3" ]
    same host ref "$2"
    PATH=/usr/bin:/bin python3 "$HERE/torchair_flow.py" uninstall state
    ref uninstall p3
    [ ! -e "$(ai_of host)/config/$2/binary_info_config.json" ]
    [ ! -e "$(ai_of host)/uninstall.sh" ]
    same host ref "$2"
}

@test "TorchAir's flow on a host without skforge: dav-2201 packages installed in turn and uninstalled, every kernel found, the index skinstall's" {
    torchair_sequence dav-2201 ascend910b
}

@test "TorchAir's flow on a host without skforge: dav-3510 packages installed in turn and uninstalled, every kernel found, the index skinstall's" {
    torchair_sequence dav-3510 ascend950
}

# step HOW COMMAND ARGS: one step on the mixed toolkit, by the .run alone ("sh") or skinstall.
step() {
    local how=$1
    shift
    if [ "$how" = sh ]; then
        (export PATH=/usr/bin:/bin && unset SKFORGE_NO_SKINSTALL && "$@")
    else
        "$SKINSTALL" "$@" --install-path "$W/mix/ascend-toolkit/latest" -q
    fi
}

@test "skinstall and the .run alone alternate in one tree: the index stays skinstall's, skinstall verify accepts it, uninstalls bring hidden kernels back" {
    three_packages dav-2201
    toolkit mix
    toolkit ref
    export ASCEND_HOME_PATH=$W/mix/ascend-toolkit/latest
    local soc=ascend910b AI
    AI=$(ai_of mix)
    step sh ./p1.run
    ref install p1.run
    local all1 add1
    all1=$(count mix $soc p1)
    add1=$(count mix $soc p1 Add)
    same mix ref $soc
    step skinstall install p2.run
    ref install p2.run
    same mix ref $soc
    "$SKINSTALL" verify --install-path "$ASCEND_HOME_PATH"
    step sh ./p3.run --install
    ref install p3.run
    [ "$(count mix $soc p1)" -eq 0 ]
    same mix ref $soc
    "$SKINSTALL" verify --install-path "$ASCEND_HOME_PATH"
    # The newest package goes first: what it hid is found again. An operator's install (--install)
    # is removed by its script only with --operator (installer.md, "Lifecycle").
    step sh "$AI/p3/uninstall.sh" --operator
    ref uninstall p3
    [ "$(count mix $soc p1)" -eq "$add1" ] # its Add is back, its Mul still hidden by p2's
    [ "$(count mix $soc p2)" -gt 0 ]
    same mix ref $soc
    "$SKINSTALL" verify --install-path "$ASCEND_HOME_PATH"
    step skinstall install p3.run
    ref install p3.run
    same mix ref $soc
    step skinstall uninstall p2
    ref uninstall p2
    [ "$(count mix $soc p1 Mul)" -gt 0 ] # p1's Mul is back; its Add stays hidden by p3's
    [ "$(count mix $soc p1 Add)" -eq 0 ]
    same mix ref $soc
    step sh ./p3.run --uninstall
    ref uninstall p3
    [ "$(count mix $soc p1)" -eq "$all1" ]
    same mix ref $soc
    "$SKINSTALL" verify --install-path "$ASCEND_HOME_PATH"
    # Reinstalling what is installed changes nothing, whoever does it.
    local before
    before=$(tree_digest mix)
    step sh ./p1.run
    [ "$(tree_digest mix)" = "$before" ]
    step sh "$AI/p1/uninstall.sh"
    ref uninstall p1
    same mix ref $soc
    [ -z "$(ls -A "$AI/config" | grep -v static_kernel.lock)" ]
}

# vendor_tree TOOLKIT: ai_core as CANN's operator guide shows it after the vendor's op_compiler
# .run installed one package ("全量静态Kernel包的总索引"): config.ini, the global index and its
# shape_info/, the lock, the package with <soc>/<OpType>/ kernels, config/<soc>/ index, scripts/
# and uninstall.sh, and the top-level uninstall.sh and version.info. Its Add kernel for p1's Add
# key is hidden while p1 is installed; its float32 Add kernel is its own.
VENDOR=static_kernel_250924103634186357_988879
vendor_tree() {
    local ai v key
    ai=$(ai_of "$1")
    v=$ai/$VENDOR
    mkdir -p "$v/ascend910b/Add" "$v/config/ascend910b" "$v/scripts" "$ai/config/ascend910b/shape_info"
    key=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["Add"]["staticList"][0]["simplifiedKey"])' \
        < <(sh p1.run --noexec >/dev/null && cat p1/config/ascend910b/binary_info_config.json && rm -rf p1))
    for k in d0 f32; do
        head -c 1000 /dev/urandom >"$v/ascend910b/Add/static_kernel_Add_float16_NCL_xxxx_$k.o"
        printf '{"kernelName": "vendor_add_%s", "blockDim": 24, "localMemorySize": 0, "schedule_mode": 0, "workspace": {"num": 1, "size": [0], "type": [0]}}\n' $k >"$v/ascend910b/Add/static_kernel_Add_float16_NCL_xxxx_$k.json"
    done
    # As a Python installer writes it: indent 4, keys in its own order, non-ASCII escaped.
    python3 - "$key" "$VENDOR" >"$v/config/ascend910b/binary_info_config.json" <<'PY'
import json, sys
key, name = sys.argv[1], sys.argv[2]
def entry(k, suffix):
    return {"simplifiedKey": k, "coreType": 2,
            "binPath": f"{name}/ascend910b/Add/static_kernel_Add_float16_NCL_xxxx_{suffix}.o",
            "binDesc": {"kernelName": f"vendor_add_{suffix}", "blockDim": 24, "workspace": [0]},
            "note": "厂商"}
print(json.dumps({"Add": {"dynamicRankSupport": False,
                          "staticList": [entry(key, "d0"), entry("Add/d=0,p=0/0,2,(40)/0,2,(40)/0,2,(40)", "f32")]}},
                 indent=4))
PY
    cp "$v/config/ascend910b/binary_info_config.json" "$ai/config/ascend910b/binary_info_config.json"
    printf '{}\n' >"$ai/config/ascend910b/shape_info/Add.json"
    : >"$ai/config/static_kernel.lock"
    printf 'install_order=%s\n' "$VENDOR" >"$ai/config.ini"
    printf '#!/bin/sh\necho vendor uninstall\n' >"$v/uninstall.sh"
    printf '#!/bin/sh\necho vendor helper\n' >"$v/scripts/common.sh"
    chmod 0755 "$v/uninstall.sh" "$v/scripts/common.sh"
}

@test "a tree CANN's own installer laid out keeps the vendor's kernels through installs and uninstalls, by the .run alone and by skinstall" {
    three_packages dav-2201
    toolkit host
    vendor_tree host
    toolkit ref
    vendor_tree ref
    local soc=ascend910b AI vendor vendor_ref before
    AI=$(ai_of host)
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    before=$(kernels host $soc)
    [ "$(grep -c " bin=$VENDOR/" <<<"$before")" -eq 2 ]
    vendor=$(tree_digest "$AI/$VENDOR")
    vendor_ref=$(tree_digest "$(ai_of ref)/$VENDOR")
    (export PATH=/usr/bin:/bin && unset SKFORGE_NO_SKINSTALL && ./p1.run)
    ref install p1.run
    # p1's kernels, and the vendor's float32 Add; its float16 Add is hidden by p1's.
    [ "$(count host $soc p1)" -gt 0 ]
    kernels host $soc | grep -q " bin=$VENDOR/ascend910b/Add/static_kernel_Add_float16_NCL_xxxx_f32.o "
    [ "$(count host $soc $VENDOR)" -eq 1 ]
    same host ref $soc
    grep -qx "install_order=$VENDOR,p1" "$AI/config.ini"
    # The vendor's entries are kept as it wrote them (compacted), not re-encoded.
    grep -qF '"note":"\u5382\u5546"' "$AI/config/$soc/binary_info_config.json"
    (export PATH=/usr/bin:/bin && unset SKFORGE_NO_SKINSTALL && "$AI/p1/uninstall.sh")
    ref uninstall p1
    [ "$(kernels host $soc)" = "$before" ]
    same host ref $soc
    [ "$(tree_digest "$AI/$VENDOR")" = "$vendor" ]
    [ "$(tree_digest "$(ai_of ref)/$VENDOR")" = "$vendor_ref" ]
    [ -f "$AI/config/$soc/shape_info/Add.json" ]
    grep -qx "install_order=$VENDOR" "$AI/config.ini"
}

@test "refusals of the .run alone leave the tree as it was: symlinked index directory or file, a file that does not match its digest" {
    three_packages dav-2201
    toolkit host
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    local AI before outside
    AI=$(ai_of host)
    ./p1.run
    mkdir elsewhere
    echo keep >elsewhere/binary_info_config.json
    outside=$(tree_digest elsewhere)
    # The global index's directory swapped for a symlink.
    mv "$AI/config/ascend910b" "$W/real"
    ln -s "$W/elsewhere" "$AI/config/ascend910b"
    before=$(tree_digest host)
    run ./p2.run
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing symlink '$W/host/ascend-toolkit/8.5.0/opp/static_kernel/ai_core/config/ascend910b'"* ]]
    [ "$(tree_digest host)" = "$before" ]
    [ "$(tree_digest elsewhere)" = "$outside" ]
    run sh "$AI/p1/uninstall.sh"
    [ "$status" -eq 1 ]
    [ "$(tree_digest host)" = "$before" ]
    [ "$(tree_digest elsewhere)" = "$outside" ]
    rm "$AI/config/ascend910b"
    mv "$W/real" "$AI/config/ascend910b"
    # The index file itself a symlink.
    mv "$AI/config/ascend910b/binary_info_config.json" "$W/real.json"
    ln -s "$W/elsewhere/binary_info_config.json" "$AI/config/ascend910b/binary_info_config.json"
    before=$(tree_digest host)
    run ./p2.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing '$W/host/ascend-toolkit/8.5.0/opp/static_kernel/ai_core/config/ascend910b/binary_info_config.json': it is a symlink or not a regular file"* ]]
    [ "$(tree_digest host)" = "$before" ]
    [ "$(tree_digest elsewhere)" = "$outside" ]
    rm "$AI/config/ascend910b/binary_info_config.json"
    mv "$W/real.json" "$AI/config/ascend910b/binary_info_config.json"
    # A kernel that does not match the manifest: refused before anything is written.
    sh p2.run --noexec >/dev/null
    echo changed >>p2/ascend910b/Add/add.o
    before=$(tree_digest host)
    run sh p2/install.sh --install-path="$ASCEND_HOME_PATH" --package-dir="$W/p2"
    [ "$status" -eq 1 ]
    [[ "$output" == *"does not match the package's manifest (SHA-256 differs)"* ]]
    [ "$(tree_digest host)" = "$before" ]
    "$SKINSTALL" verify --install-path "$ASCEND_HOME_PATH"
}

@test "an installed index changed since installation contributes nothing, in both installers' indexes alike" {
    three_packages dav-2201
    toolkit host
    toolkit ref
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    ./p1.run
    ref install p1.run
    for r in host ref; do
        sed -i 's/"coreType": 2/"coreType": 0/' "$(ai_of $r)/p1/config/ascend910b/binary_info_config.json"
    done
    run ./p2.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"package p1 contributes no kernels to the global index"* ]]
    ref install p2.run 2>/dev/null
    [ "$(count host ascend910b p1)" -eq 0 ]
    [ "$(count host ascend910b p2)" -gt 0 ]
    same host ref ascend910b
}

@test "every awk a host may have (mawk, gawk, busybox awk, the one-true-awk) writes the same index" {
    three_packages dav-2201
    toolkit ref
    ref install p1.run
    ref install p2.run
    ref install p3.run
    ref uninstall p2
    local tried=0 impl
    for impl in mawk gawk original-awk "busybox awk"; do
        command -v "${impl%% *}" >/dev/null || continue
        rm -rf host awkbin
        toolkit host
        mkdir awkbin
        printf '#!/bin/sh\nexec %s "$@"\n' "$impl" >awkbin/awk
        chmod 0755 awkbin/awk
        export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
        for p in p1 p2 p3; do PATH=$W/awkbin:/usr/bin:/bin ./$p.run -q; done
        PATH=$W/awkbin:/usr/bin:/bin "$(ai_of host)/p2/uninstall.sh" -q
        same host ref ascend910b
        tried=$((tried + 1))
    done
    [ "$tried" -ge 1 ]
}

# json_of TEXT EXPR: EXPR over the JSON TEXT as j, printed.
json_of() { python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(eval(sys.argv[2]))' "$1" "$2"; }

@test "skinstall names a package CANN's own installer laid out as the vendor's, verifies around it, and never removes it" {
    three_packages dav-2201
    toolkit host
    vendor_tree host
    local AI vendor index
    AI=$(ai_of host)
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    vendor=$(tree_digest "$AI/$VENDOR")
    "$SKINSTALL" install p1.run
    run "$SKINSTALL" list
    [ "$status" -eq 0 ]
    [[ "$output" == *"$VENDOR"*"CANN's own package"* ]]
    [[ "$output" != *DAMAGED* && "$output" != *"--force"* ]]
    run "$SKINSTALL" list --json
    [ "$(json_of "$output" "[p['status'] for p in j if p['name'] == '$VENDOR'][0]")" = vendor ]
    # verify passes: the vendor's package is named as not checked, the tree's vendor files are not
    # reported, and nothing suggests removing it.
    run "$SKINSTALL" verify
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"$VENDOR: not checked: "*"CANN's own installer"* ]]
    [[ "$output" != *shape_info* && "$output" != *"--force"* ]]
    run "$SKINSTALL" verify --json
    [ "$status" -eq 0 ]
    [ "$(json_of "$output" "[(p['ok'], p['vendor']) for p in j if p['name'] == '$VENDOR'][0]")" = "(True, True)" ]
    index=$(tree_digest "$AI/config")
    for force in "" --force; do
        run "$SKINSTALL" uninstall $force "$VENDOR"
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"refusing to uninstall $VENDOR"*"CANN's own installer"*"nothing was removed"* ]]
        [ "$(tree_digest "$AI/$VENDOR")" = "$vendor" ]
        [ "$(tree_digest "$AI/config")" = "$index" ]
        grep -qx "install_order=$VENDOR,p1" "$AI/config.ini"
    done
    run "$SKINSTALL" info "$VENDOR"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$VENDOR has no skforge manifest to query"* ]]
    # --all removes skforge's packages and keeps the vendor's, saying so.
    run "$SKINSTALL" uninstall --all
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"keeping $VENDOR: CANN's own package"* ]]
    [ "$(tree_digest "$AI/$VENDOR")" = "$vendor" ]
    grep -qx "install_order=$VENDOR" "$AI/config.ini"
    [ "$(count host ascend910b $VENDOR)" -eq 2 ]
    run "$SKINSTALL" verify
    [ "$status" -eq 0 ]
}

@test "a skforge package whose manifest is lost is still damaged, not mistaken for the vendor's" {
    three_packages dav-2201
    toolkit host
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    local AI
    AI=$(ai_of host)
    (export PATH=/usr/bin:/bin && unset SKFORGE_NO_SKINSTALL && ./p1.run)
    rm "$AI/p1/manifest.json"
    [ -f "$AI/p1/config/ascend910b/binary_info_config.json" ]
    run "$SKINSTALL" list
    [[ "$output" == *"p1"*DAMAGED* ]]
    run "$SKINSTALL" uninstall --force p1
    [ "$status" -eq 0 ]
    [ ! -e "$AI/p1" ]
}

# bad_vendor_index TOOLKIT KIND: vendor_tree's ascend910b index made one that JSON readers disagree
# on or that is not JSON: KIND dup_op (the OpType twice, the first with an escaping binPath),
# dup_list (staticList twice), dup_bin (two binPaths in one entry), comma (a trailing comma),
# unquoted (an unquoted key). The vendor also has a valid ascend950 index.
bad_vendor_index() {
    local v=$(ai_of "$1")/$VENDOR f
    f=$v/config/ascend910b/binary_info_config.json
    mkdir -p "$v/config/ascend950" "$(ai_of "$1")/config/ascend950"
    sed "s,ascend910b,ascend950,g" "$f" >"$v/config/ascend950/binary_info_config.json"
    cp "$v/config/ascend950/binary_info_config.json" "$(ai_of "$1")/config/ascend950/binary_info_config.json"
    python3 - "$f" "$2" <<'PY'
import sys
path, kind = sys.argv[1], sys.argv[2]
text = open(path).read()
evil = '{"simplifiedKey": "Add/evil", "binPath": "../../../../../tmp/evil.o"}'
if kind == "dup_op":
    text = '{"Add": {"staticList": [' + evil + ']},' + text.lstrip()[1:]
elif kind == "dup_list":
    text = text.replace('"staticList": [', '"staticList": [' + evil + '], "staticList": [', 1)
elif kind == "dup_bin":
    text = text.replace('"binPath": ', '"binPath": "../../../../../tmp/evil.o", "binPath": ', 1)
elif kind == "comma":
    text = text.replace('"note": "\\u5382\\u5546"', '"note": "\\u5382\\u5546",', 1)
elif kind == "unquoted":
    text = text.replace('"coreType"', 'coreType', 1)
assert text != open(path).read()
open(path, "w").write(text)
PY
}

@test "a vendor index that repeats a key or is not JSON contributes nothing, for any of its SoCs, in both installers alike (issue 36)" {
    three_packages dav-2201
    local kind soc
    for kind in dup_op dup_list dup_bin comma unquoted; do
        rm -rf host ref
        toolkit host
        toolkit ref
        vendor_tree host
        vendor_tree ref
        bad_vendor_index host $kind
        bad_vendor_index ref $kind
        export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
        run env PATH=/usr/bin:/bin ./p1.run
        echo "$kind: $output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"package $VENDOR contributes no kernels to the global index"* ]]
        run "$SKINSTALL" install p1.run --install-path "$W/ref/ascend-toolkit/latest"
        [ "$status" -eq 0 ]
        [[ "$output" == *"package $VENDOR contributes no kernels to the global index"* ]]
        for soc in ascend910b ascend950; do
            same host ref $soc
            [ "$(count host $soc $VENDOR)" -eq 0 ]
        done
        [ "$(count host ascend910b p1)" -gt 0 ]
        ! grep -q evil "$(ai_of host)/config/ascend910b/binary_info_config.json"
        python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$(ai_of host)/config/ascend910b/binary_info_config.json"
    done
}

# resum DIR FILE: after FILE (relative to the package directory DIR) was edited, its manifest and
# install.sh's entry list give its new SHA-256 (a package crafted to pass the scripts' digest
# checks); install.sh's index records, read from the file as packed, still name the old one, so
# the scripts read the edited file.
resum() {
    local old new
    old=$(python3 -c 'import json, sys; print([e["sha256"] for e in json.load(open(sys.argv[1]))["files"] if e["path"] == sys.argv[2]][0])' "$1/manifest.json" "$2")
    new=$(sha256sum "$1/$2" | cut -d' ' -f1)
    sed -i "s/$old/$new/" "$1/manifest.json"
    sed -i "s/^\(f 0[0-9]* \)$old /\1$new /" "$1/install.sh"
}

@test "the .run alone refuses a package whose own index repeats a key, and changes nothing (issue 36)" {
    three_packages dav-2201
    toolkit host
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    ./p1.run -q
    sh p2.run --noexec >/dev/null
    local f=config/ascend910b/binary_info_config.json before
    python3 - "p2/$f" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
open(path, "w").write('{"Add":{"staticList":[{"binPath":"../../../../../tmp/evil.o"}]},' + text.lstrip()[1:])
PY
    resum p2 "$f"
    before=$(tree_digest host)
    run env PATH=/usr/bin:/bin sh p2/install.sh --install-path="$ASCEND_HOME_PATH" --package-dir="$W/p2"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing to install p2: "*"/config/ascend910b/binary_info_config.json' repeats the key \"Add\" in one object (line 2)"* ]]
    [ "$(tree_digest host)" = "$before" ]
}

@test "config.ini is read line by line, as CANN's installer writes it: a comment naming install_order=, CRLF line ends (issue 36)" {
    three_packages dav-2201
    toolkit host
    toolkit ref
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    local r ini
    for ini in '# was: install_order=old\ninstall_order=p1\n' '# skforge\r\ninstall_order=p1\r\n'; do
        rm -rf host/ascend-toolkit/8.5.0/opp ref/ascend-toolkit/8.5.0/opp
        ./p1.run -q
        ref install p1.run
        for r in host ref; do printf "$ini" >"$(ai_of $r)/config.ini"; done
        run "$SKINSTALL" list --install-path "$W/ref/ascend-toolkit/latest"
        [[ "$output" == *p1* ]]
        (export PATH=/usr/bin:/bin && ./p3.run -q)
        ref install p3.run
        grep -qx "install_order=p1,p3" "$(ai_of host)/config.ini"
        same host ref ascend910b
        [ "$(count host ascend910b p1 Mul)" -gt 0 ] # p1's kernels are still found
    done
}

@test "a damaged neighbour, the only one with a SoC, does not make the .run alone half-install or half-uninstall (issue 36)" {
    cp "$BATS_FILE_TMPDIR/dav-2201/p2.run" .
    cp "$BATS_FILE_TMPDIR/dav-3510/p1.run" p950.run
    toolkit host
    toolkit ref
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    ./p2.run -q
    ref install p2.run
    for r in host ref; do
        sed -i 's/"coreType": 2/"coreType": 0/' "$(ai_of $r)/p2/config/ascend910b/binary_info_config.json"
    done
    run env PATH=/usr/bin:/bin sh p950.run
    echo "$output"
    [ "$status" -eq 0 ]
    ref install p950.run 2>/dev/null
    same host ref ascend910b
    same host ref ascend950
    [ "$(count host ascend950 p1)" -gt 0 ]
    run env PATH=/usr/bin:/bin sh "$(ai_of host)/p1/uninstall.sh"
    echo "$output"
    [ "$status" -eq 0 ]
    ref uninstall p1 2>/dev/null
    [ ! -e "$(ai_of host)/p1" ]
    same host ref ascend910b
    same host ref ascend950
}

@test "the .run alone warns, in skinstall's words, about an install path with '.o' in it (issue 36)" {
    three_packages dav-2201
    mkdir -p root.old root
    run env PATH=/usr/bin:/bin sh p1.run --install-path "$W/root.old"
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARNING: the install path '$W/root.old' contains \".o\": CANN's runtime cuts a static kernel's path at its first \".o\" to find the kernel's JSON, so it will not read these kernels' JSON there; install under a path without \".o\""* ]]
    run env PATH=/usr/bin:/bin sh p1.run --install-path "$W/root"
    [ "$status" -eq 0 ]
    [[ "$output" != *"contains \".o\""* ]]
}

@test "every awk refuses the same index texts as skinstall's parser: JSON grammar, strings, numbers, depth, repeated and escaped keys (issue 36)" {
    cp "$BATS_FILE_TMPDIR/dav-2201/p1.run" .
    sh p1.run --noexec >/dev/null
    # skf_merge_awk as the package carries it, run alone on one text as package t's index of
    # SoC s (the feed ends with a line "\036"): its verdict line ("\376", then why in the seventh
    # field) says why it is refused.
    sed -n "/^skf_merge_awk='/,/^}'\$/p" p1/install.sh >merge_awk.sh
    [ -s merge_awk.sh ]
    cat >check.sh <<'SH'
LC_ALL=C; export LC_ALL # as the scripts run it (fallback-lib.sh)
. ./merge_awk.sh
{ printf '\036s\t1\tt\tt\tout\n' && cat && printf '\n\036\n'; } | awk "$skf_merge_awk" |
    awk '$1 == "\376" { w = $0; for (i = 1; i <= 6; i++) w = substr(w, index(w, "\t") + 1); print "\047t\047 " w; bad = 1 }
        END { exit bad }' FS='\t'
SH
    # TEXT VERDICT: "ok" when skinstall reads it (nlohmann's parser, then check_json_keys).
    local cases=(
        '{"Add":{"staticList":[{"binPath":"a/b.o","simplifiedKey":"k\"[{"}]},"x":[1.5e3,-0,true,null,false,"\u0041\ud83d\ude00\\"]}|ok'
        "$(printf '\357\273\277{"a":"\344\270\255"}\r')|ok"
        '{"a":1.7976931348623157e308,"b":1e-999,"c":0e999}|ok'
        '{"Add":{"staticList":[]},"Add":{"staticList":[]}}|t repeats the key "Add" in one object (line 1)'
        '{"Add":{"staticList":[{"binPath":"x","binPath":"y"}]}}|t repeats the key "binPath" in one object (line 1)'
        '{"B\u0041":1}|t writes the key "B\u0041" with a backslash escape (line 1)'
        '{"a":[1,]}|bad' '{"a":1,}|bad' '{a:1}|bad' '{"a":01}|bad' '{"a":1e999}|bad'
        '{"a":"\ud83d"}|bad' '{"a":"\x"}|bad' "$(printf '{"a":"\t"}')|bad" "$(printf '{"a":"\377"}')|bad"
        "$(printf '{"a":"\355\240\200"}')|bad" '{"a":1} {}|bad' '{"a":[}|bad' '{"a" 1}|bad' '|bad'
        '[1]|t is not a JSON object of OpTypes (line 1)'
        "{\"a\":$(printf '%064d' 0 | tr 0 '[')$(printf '%064d' 0 | tr 0 ']')}|t nests arrays and objects more than 64 deep (line 1)"
    )
    local impl c text want got
    for impl in mawk gawk original-awk "busybox awk"; do
        command -v "${impl%% *}" >/dev/null || continue
        mkdir -p awkbin
        printf '#!/bin/sh\nexec %s "$@"\n' "$impl" >awkbin/awk
        chmod 0755 awkbin/awk
        for c in "${cases[@]}"; do
            text=${c%|*}
            want=${c##*|}
            got=$(printf '%s' "$text" | PATH=$W/awkbin:/usr/bin:/bin sh check.sh) && got=ok
            case $want in
            bad) [[ "$got" == "'t' is not valid JSON"* ]] || { echo "$impl: $text: $got"; false; } ;;
            *) [ "$got" = "'t' ${want#t }" ] || [ "$got" = "$want" ] || { echo "$impl: $text: $got"; false; } ;;
            esac
        done
    done
}

@test "the .run alone installs and removes a 200-kernel package in a few dozen programs, not some per file (issue 37)" {
    command -v strace >/dev/null || skip "strace is not installed"
    python3 "$SKFORGE_SOURCE_DIR/test/bench/gen_kernel_trees.py" "$W" 1 200
    "$SKC" pack "$W/t1" -o p1.run --package-version 1 -q
    mkdir root
    strace -f -qq -e trace=execve -e signal=none -o in.trace sh p1.run --install-path="$W/root" -q
    [ -d root/opp/static_kernel/ai_core/p1 ]
    strace -f -qq -e trace=execve -e signal=none -o un.trace sh p1.run --uninstall --install-path="$W/root" -q
    [ ! -e root/opp/static_kernel/ai_core/p1 ]
    # programs TRACE: the programs started (a failed execve, a PATH lookup's miss, not counted).
    programs() { grep 'execve(' "$1" | grep -vc '= -1 '; }
    # 54 and 29 on a fresh root with GNU coreutils, tar and flock(1) (65 and 39 before issue 37's
    # second round; makeself's copy of the same tree runs 47, its removal 46).
    echo "install: $(programs in.trace) programs, uninstall: $(programs un.trace)"
    [ "$(programs in.trace)" -ge 20 ] # strace saw them
    [ "$(programs in.trace)" -le 56 ]
    [ "$(programs un.trace)" -le 31 ]
}

@test "install.sh's index records give the index awk reads from the files and skinstall writes: escapes, numbers, replaced keys, BOM and CRLF, two SoCs (issue 37)" {
    local AI=opp/static_kernel/ai_core
    mkdir -p tree/ascend910b/Add tree/ascend310p/Add tree/config/ascend910b tree/config/ascend310p
    for f in ascend910b/Add/a.o ascend910b/Add/b.o ascend310p/Add/a.o; do head -c 64 /dev/urandom >"tree/$f"; done
    # Entries as a vendor may write them: a simplifiedKey with a quote and brackets, unicode and
    # escapes, exponents and -0, nested values, an entry without a simplifiedKey, one that
    # replaces an earlier entry of its file (the same key), an OpType without a staticList, one
    # with an empty one, raw UTF-8 in an OpType's name.
    cat >tree/config/ascend910b/binary_info_config.json <<'JSON'
{
  "Add" : { "staticList" : [
     {"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"k\"[{","binDesc":{"x":[1.5e3,-0,true,null,false,"\u0041\ud83d\ude00\\"],"中":"文 \/ ok"}},
     {  "binPath" :	"tk/ascend910b/Add/b.o" , "n" : 1E-5 },
     {"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"k\"[{","v":2}
  ], "other": {"n": 12}},
  "Mul" : {"staticList" : []},
  "Sub" : {"note" : "no list"},
  "Zéro" : {"staticList":[{"binPath":"tk/ascend910b/Add/b.o","simplifiedKey":"z"}]}
}
JSON
    printf '\357\273\277{"Add":{"staticList":[\r\n{"binPath":"tk/ascend310p/Add/a.o","simplifiedKey":"Add/1"}\r\n]}}\r\n' \
        >tree/config/ascend310p/binary_info_config.json
    "$SKC" pack tree -o tk.run --package-version 1 -q
    mkdir rec parsed ref
    logging_cat wrap "$W/reads"
    PATH="$W/wrap:$PATH" sh tk.run --install-path="$W/rec" -q
    [ ! -e reads ] # this package's own index files were not read as JSON
    SKFORGE_INDEX_RECORDS=0 PATH="$W/wrap:$PATH" sh tk.run --install-path="$W/parsed" -q
    [ "$(grep -c index-read reads)" = 2 ]
    "$SKINSTALL" install tk.run --install-path ref -q
    local soc
    for soc in ascend910b ascend310p; do
        cmp "rec/$AI/config/$soc/binary_info_config.json" "parsed/$AI/config/$soc/binary_info_config.json"
        cmp "rec/$AI/config/$soc/binary_info_config.json" "ref/$AI/config/$soc/binary_info_config.json"
    done
    grep -q '"k\\"\[{","v":2}' "rec/$AI/config/ascend910b/binary_info_config.json"
    # Another process's install of the same package (TorchAir's next rank): already there, its
    # installed index is the records' file, so it is not read either.
    rm -f reads
    PATH="$W/wrap:$PATH" sh tk.run --install-path="$W/rec" -q
    [ ! -e reads ]
    cmp "rec/$AI/config/ascend910b/binary_info_config.json" "ref/$AI/config/ascend910b/binary_info_config.json"
    # An index changed in place after installation is read, not taken from the records: the
    # package contributes nothing (its file is not the one installed), as skinstall decides.
    printf '\n' >>"rec/$AI/tk/config/ascend910b/binary_info_config.json"
    run sh tk.run --install-path="$W/rec"
    [[ "$output" == *"contributes no kernels to the global index"* ]]
    [ ! -e "rec/$AI/config/ascend910b/binary_info_config.json" ]
}

@test "a package whose install.sh carries other index records than its index files is refused by skinstall and skc inspect --verify (issue 37)" {
    local AI=opp/static_kernel/ai_core
    mkdir -p tree/ascend910b/Add tree/config/ascend910b
    head -c 64 /dev/urandom >tree/ascend910b/Add/a.o
    printf '{"Add":{"staticList":[{"binPath":"tk/ascend910b/Add/a.o","simplifiedKey":"Add/1"}]}}\n' \
        >tree/config/ascend910b/binary_info_config.json
    "$SKC" pack tree -o tk.run --package-version 1 -q
    sh tk.run --noexec >/dev/null
    # install.sh with one record's key changed, the manifest and the header made consistent.
    sed 's|\tk:"Add/1"\t|\tk:"Add/2"\t|' tk/install.sh >edited.sh
    ! cmp -s tk/install.sh edited.sh
    mkdir bad root
    python3 "$SKFORGE_SOURCE_DIR/test/cli/trojan.py" tk.run bad/tk.run install.sh edited.sh --fix-header-scripts
    run "$SKINSTALL" install bad/tk.run --install-path root
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"index records are not the entries of its index files"* ]]
    [ ! -e "root/$AI/tk" ]
    run "$SKC" inspect --verify bad/tk.run
    [ "$status" -ne 0 ]
    [[ "$output" == *"index records are not the entries of its index files"* ]]
    "$SKC" inspect --verify tk.run >/dev/null
}
