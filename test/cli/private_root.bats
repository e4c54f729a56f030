#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# A private tree per process (torch_npu #2634): a package installed with --install-path into a
# root of the process's own, then found by CANN's runtime after
# aclnnReselectStaticKernelWithPath(<root>/opp). $OPBASE_READ --reselect-path reads it as
# opbase's 9.1.0 and master do (acl_op_api.cpp, indv_collector.cpp): realpath of the argument,
# then <base>/static_kernel/ai_core/config/<soc dir>/binary_info_config.json and each binPath
# under <base>/static_kernel/ai_core/, added after what the process read at its start.
load helpers

# Compiled once for the file: p1, Add on float16[16] and Mul on float16[16,32], dav-2201 for
# Ascend910B1 (ascend910b), no SuperKernels.
setup_file() {
    export SOURCE_DATE_EPOCH=1700000000
    cd "$BATS_FILE_TMPDIR"
    static_kernel g/k add KERNEL_TYPE_AIV_ONLY
    static_kernel g/k mul KERNEL_TYPE_AIV_ONLY
    cat >g/graph.yaml <<'EOF'
name: g
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs: [{name: x, shape: [16], dtype: float16}, {name: w, shape: [16, 32], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [16], dtype: float16}]}
  - {name: m, type: Mul, kernel: {json_path: k/mul.json, bin_path: k/mul.o}, inputs: [w], outputs: [{name: z, shape: [16, 32], dtype: float16}]}
EOF
    "$SKC" compile g/graph.yaml --name p1 -o out >/dev/null
}

AI=opp/static_kernel/ai_core

# shared [p1]: the host's tree, $ASCEND_OPP_PATH, where the process starts; with p1 installed
# in it too when given "p1".
shared() {
    mkdir -p "$W/shared"
    export ASCEND_OPP_PATH=$W/shared/opp
    unset ASCEND_HOME_PATH
    if [ "${1:-}" = p1 ]; then
        "$SKINSTALL" install "$BATS_FILE_TMPDIR/out/p1.run" --install-path "$W/shared" -q
    fi
}

# calls.txt: p1's two calls (ge codes: float16 1, ND 2).
calls() {
    printf '%s\n' "Add 1,2,16 1,2,16 1,2,16" "Mul 1,2,16x32 1,2,16x32" >calls.txt
}

# found ROOT: the runtime, started on the shared tree, reselects ROOT/opp: every one of p1's 24
# keys (Add and Mul, d=0/1, p=0/1/2, with and without strides) at its binPath under the real
# path of ROOT/opp/static_kernel/ai_core/, the same lines a plain read of ROOT/opp gives.
found() {
    local real
    real=$(cd -P "$1" && pwd)
    run "$OPBASE_READ" - ascend910b --reselect-path "$1/opp"
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c " bin=$real/$AI/p1/ascend910b/\(Add/add\|Mul/mul\)\.o " <<<"$output")" -eq 24 ]
    diff <("$OPBASE_READ" "$real/opp" ascend910b) <(sed "s| bin=$real/$AI/| bin=|" <<<"$output")
    calls
    run "$OPBASE_READ" - ascend910b --reselect-path "$1/opp" --select calls.txt
    echo "$output"
    [ "$status" -eq 0 ]
    diff - <(echo "$output") <<EOF
Add aclnn=$real/$AI/p1/ascend910b/Add/add.o hostapi1=$real/$AI/p1/ascend910b/Add/add.o hostapi2=$real/$AI/p1/ascend910b/Add/add.o
Mul aclnn=$real/$AI/p1/ascend910b/Mul/mul.o hostapi1=$real/$AI/p1/ascend910b/Mul/mul.o hostapi2=$real/$AI/p1/ascend910b/Mul/mul.o
EOF
}

# gone ROOT: after the uninstall the reselect finds no index and ROOT holds only the tree's
# bookkeeping (config.ini, the lock, skinstall's per-key record and history): no package, index,
# script, stage, journal or lock directory. Removing ROOT is all that is left to do.
gone() {
    run "$OPBASE_READ" - ascend910b --reselect-path "$1/opp"
    [ "$status" -eq 0 ]
    [ "$output" = "no index $(cd -P "$1" && pwd)/$AI/config/ascend910b/binary_info_config.json" ]
    run find "$1" -mindepth 1 ! -path "$1/opp" ! -path "$1/opp/static_kernel" ! -path "$1/$AI" \
        ! -path "$1/$AI/config" ! -path "$1/$AI/config.ini" ! -path "$1/$AI/config/static_kernel.lock" \
        ! -path "$1/$AI/config/static_kernel.keys" ! -path "$1/$AI/log" ! -path "$1/$AI/log/skinstall.log"
    echo "$output"
    [ -z "$output" ]
}

@test "skinstall --install-path into a per-process root: every kernel found through the reselect path, the shared tree untouched" {
    shared
    before=$(tree_digest "$W/shared")
    root=$W/proc-$$
    mkdir "$root"
    "$SKINSTALL" install "$BATS_FILE_TMPDIR/out/p1.run" --install-path "$root" -q
    found "$root"
    # The process started on the shared tree, which has none of them.
    run "$OPBASE_READ" - ascend910b
    [ "$output" = "no index $W/shared/$AI/config/ascend910b/binary_info_config.json" ]
    "$SKINSTALL" uninstall p1 --install-path "$root" -q
    gone "$root"
    [ "$(tree_digest "$W/shared")" = "$before" ]
}

@test "the .run alone with --install-path=ROOT: every kernel found through the reselect path; its uninstall.sh leaves ROOT clean" {
    shared
    before=$(tree_digest "$W/shared")
    root=$W/proc-$$
    mkdir "$root"
    SKFORGE_NO_SKINSTALL=1 sh "$BATS_FILE_TMPDIR/out/p1.run" --install-path="$root" -q
    found "$root"
    # The package's own uninstall.sh, as a process runs it at exit.
    SKFORGE_NO_SKINSTALL=1 sh "$root/$AI/p1/uninstall.sh" -q
    gone "$root"
    [ "$(tree_digest "$W/shared")" = "$before" ]
}

@test "the reselect path is the root's opp directory: the root itself, ai_core or a missing path find nothing" {
    shared
    root=$W/proc-$$
    mkdir "$root"
    "$SKINSTALL" install "$BATS_FILE_TMPDIR/out/p1.run" --install-path "$root" -q
    run "$OPBASE_READ" - ascend910b --reselect-path "$root"
    [ "$status" -eq 0 ]
    [ "$output" = "no index $root/static_kernel/ai_core/config/ascend910b/binary_info_config.json" ]
    run "$OPBASE_READ" - ascend910b --reselect-path "$root/$AI"
    [ "$status" -eq 0 ]
    [ "$output" = "no index $root/$AI/static_kernel/ai_core/config/ascend910b/binary_info_config.json" ]
    # opbase refuses a path realpath cannot resolve and reloads nothing.
    run "$OPBASE_READ" - ascend910b --reselect-path "$W/nowhere/opp"
    [ "$status" -eq 3 ]
    [ "$output" = "opbase_read: aclnnReselectStaticKernelWithPath fails: Invalid static kernel path: $W/nowhere/opp." ]
}

@test "a root reached through a symbolic link is read at its real path; a real path with '.o' in it costs every kernel its run info" {
    shared
    mkdir "$W/real"
    ln -s real "$W/link"
    "$SKINSTALL" install "$BATS_FILE_TMPDIR/out/p1.run" --install-path "$W/link" -q
    found "$W/link"
    [[ "$output" == *"aclnn=$W/real/$AI/"* ]]
    # The runtime finds a kernel's JSON by cutting its binPath at the first ".o".
    mkdir "$W/job.out"
    "$SKINSTALL" install "$BATS_FILE_TMPDIR/out/p1.run" --install-path "$W/job.out" -q
    run "$OPBASE_READ" - ascend910b --reselect-path "$W/job.out/opp"
    [ "$status" -eq 1 ]
    [[ "$output" == *"warning: $W/job.out/$AI/p1/ascend910b/Add/add.o: cannot read $W/job.json"* ]]
}

@test "the reload adds to what the process read at its start: a key the shared tree has keeps the shared kernel" {
    shared p1
    root=$W/proc-$$
    mkdir "$root"
    "$SKINSTALL" install "$BATS_FILE_TMPDIR/out/p1.run" --install-path "$root" -q
    calls
    run "$OPBASE_READ" - ascend910b --reselect-path "$root/opp" --select calls.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == "Add aclnn=$W/shared/$AI/p1/ascend910b/Add/add.o "* ]]
    [[ "$output" != *"$root"* ]]
}

@test "the start's base is \$ASCEND_HOME_PATH/opp_latest as written when it resolves, else \$ASCEND_OPP_PATH" {
    shared p1
    mkdir "$W/home"
    ln -s ../shared/opp "$W/home/opp_latest"
    calls
    ASCEND_HOME_PATH=$W/home ASCEND_OPP_PATH=$W/elsewhere run "$OPBASE_READ" - ascend910b --reselect-path "$W" --select calls.txt
    echo "$output"
    [[ "$output" == *"Add aclnn=$W/home/opp_latest/static_kernel/ai_core/p1/ascend910b/Add/add.o "* ]]
    rm "$W/home/opp_latest"
    ASCEND_HOME_PATH=$W/home run "$OPBASE_READ" - ascend910b --reselect-path "$W" --select calls.txt
    [[ "$output" == *"Add aclnn=$W/shared/$AI/p1/ascend910b/Add/add.o "* ]]
    unset ASCEND_OPP_PATH
    ASCEND_HOME_PATH=$W/home run "$OPBASE_READ" - ascend910b
    [ "$output" = "no index (no base path)" ]
}

# proc.sh ROOT: a process that installs p1 into ROOT by the .run alone, executed without an action
# (so p1 is held by it, as TorchAir's processes hold theirs), then stays (exec keeps its pid and
# start time) until it is killed; prints nothing.
proc_script() {
    cat >"$W/proc.sh" <<EOF2
SKFORGE_NO_SKINSTALL=1 sh "$BATS_FILE_TMPDIR/out/p1.run" --install-path="\$1" -q || exit 1
exec sleep 1000
EOF2
}

@test "skinstall gc --install-path ROOT collects a private root whose process was killed, by either installer; not while it runs, never an operator's" {
    shared
    before=$(tree_digest "$W/shared")
    # skinstall, held by the process named with --holder.
    sleep 1000 &
    local pid=$!
    mkdir "$W/proc-a"
    "$SKINSTALL" install "$BATS_FILE_TMPDIR/out/p1.run" --install-path "$W/proc-a" --holder "$pid" -q
    # The .run alone, held by the process that executed it.
    proc_script
    mkdir "$W/proc-b"
    sh "$W/proc.sh" "$W/proc-b" &
    local pid_b=$!
    # Installed once the process runs sleep (proc.sh's exec), or failed once it is gone.
    wait_until sh -c '[ ! -e "/proc/$1" ] || grep -qx sleep "/proc/$1/comm"' - "$pid_b"
    [ -d "$W/proc-b/$AI/p1" ]
    grep -q "^p1 held $pid_b:" "$W/proc-b/$AI/config/static_kernel.holders"
    # An operator's install into a root of its own: persistent.
    mkdir "$W/proc-c"
    "$SKINSTALL" install "$BATS_FILE_TMPDIR/out/p1.run" --install-path "$W/proc-c" -q
    for r in a b c; do
        run "$SKINSTALL" gc --install-path "$W/proc-$r"
        [ "$status" -eq 0 ]
        [ -d "$W/proc-$r/$AI/p1" ]
    done
    kill -9 "$pid" "$pid_b"
    wait "$pid" "$pid_b" || true
    for r in a b c; do
        "$SKINSTALL" gc --install-path "$W/proc-$r" -q
    done
    gone "$W/proc-a"
    gone "$W/proc-b"
    found "$W/proc-c"
    [ "$(tree_digest "$W/shared")" = "$before" ]
}
