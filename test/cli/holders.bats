#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Holders (share/doc/installer.md, "Lifecycle"): services and ranks on one host share a tree.
# Each service is a process (service_flow.py) that installs the way TorchAir does (each .run
# executed with no arguments) and leaves the way TorchAir does (each package's uninstall.sh found
# by glob) or the way vLLM-Ascend does (the top-level uninstall.sh started detached, the service
# exiting at once); with skinstall on PATH and without (SKFORGE_NO_SKINSTALL=1, no skforge tool
# on PATH). After every step the opbase-logic reader ($OPBASE_READ) says what CANN's runtime finds:
# no running process loses a kernel, the last user's exit removes the package, an operator's
# install survives, and 'skinstall gc' collects a killed rank's package.
load helpers

HERE=$BATS_TEST_DIRNAME
PY=$(command -v python3)

# pkg NAME ADD_LEN MUL_LEN: ./NAME.run for dav-2201 (ascend910b), Add and Mul on float16 vectors
# of those lengths (the two packages' keys differ, so neither hides the other's kernels).
pkg() {
    static_kernel "g$1/k" add KERNEL_TYPE_AIV_ONLY
    static_kernel "g$1/k" mul KERNEL_TYPE_AIV_ONLY
    cat >"g$1/graph.yaml" <<EOF
name: g
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs: [{name: x, shape: [$2], dtype: float16}, {name: w, shape: [$3], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [$2], dtype: float16}]}
  - {name: m, type: Mul, kernel: {json_path: k/mul.json, bin_path: k/mul.o}, inputs: [w, w], outputs: [{name: z, shape: [$3], dtype: float16}]}
EOF
    "$SKC" compile "g$1/graph.yaml" --name "$1" -o "out$1" >/dev/null
    mv "out$1/$1.run" "$1.run"
}

setup_file() {
    export SOURCE_DATE_EPOCH=1700000000
    cd "$BATS_FILE_TMPDIR"
    pkg pa 16 32
    pkg pb 48 64
}

# host MODE: a TorchAir host ($ASCEND_HOME_PATH is .../latest, a symlink to the version) with
# skinstall on PATH (MODE skinstall) or no skforge tool at all (MODE shell).
host() {
    cp "$BATS_FILE_TMPDIR"/p[ab].run .
    mkdir -p host/ascend-toolkit/8.5.0 bin
    ln -s 8.5.0 host/ascend-toolkit/latest
    export ASCEND_HOME_PATH=$W/host/ascend-toolkit/latest
    TK=$W/host/ascend-toolkit/8.5.0
    AI=$TK/opp/static_kernel/ai_core
    if [ "$1" = skinstall ]; then
        ln -s "$SKINSTALL" bin/skinstall
        export PATH=$W/bin:/usr/bin:/bin
        unset SKFORGE_NO_SKINSTALL
    else
        export PATH=/usr/bin:/bin SKFORGE_NO_SKINSTALL=1
        [ -z "$(command -v skinstall)" ]
    fi
}

# found PACKAGE: how many kernels CANN's runtime takes from PACKAGE; fails when the reader would
# skip anything (a half-removed package, an index naming a missing file).
found() {
    local out
    out=$("$OPBASE_READ" "$ASCEND_HOME_PATH/opp" ascend910b) || { echo "$out" >&2; return 1; }
    grep -c " bin=$1/" <<<"$out" || true
}

# gone PID: the process has exited (a zombie has).
gone() {
    [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*[ZX]' "/proc/$1/status" 2>/dev/null
}

# service ID EXIT PACKAGE...: starts service ID (service_flow.py EXIT) that installs PACKAGE.run...
# and waits to be stopped; returns once they are installed. $ID_pid is its pid.
service() {
    local id=$1 how=$2 p
    shift 2
    mkdir -p "svc/$id/runs"
    for p in "$@"; do cp "$p.run" "svc/$id/runs/"; done
    "$PY" "$HERE/service_flow.py" "$how" "svc/$id/runs" "svc/$id" >"svc/$id/log" 2>&1 &
    echo $! >"svc/$id/pid"
    wait_until [ -e "svc/$id/ready" ]
    grep -q ' 1$' "svc/$id/ready" || { cat "svc/$id/log"; return 1; }
}

# stop ID: asks service ID to leave and waits until it has exited and, the vLLM way, until the
# script it started detached has finished.
stop() {
    local d=svc/$1 pid
    pid=$(cat "$d/pid")
    touch "$d/stop"
    wait_until gone "$pid"
    if [ -e "$d/detached" ]; then
        [ "$(cat "$d/detached")" != none ]
        wait_until gone "$(cat "$d/detached")"
    fi
}

# holds PACKAGE: "<persistent> <alive holders> <gone holders>" from skinstall list --json.
holds() {
    "$SKINSTALL" list --json --install-path "$ASCEND_HOME_PATH" | "$PY" -c '
import json, sys
for p in json.load(sys.stdin):
    if p["name"] == sys.argv[1]:
        h = p["holders"]
        print(str(p["persistent"]).lower(), sum(x["alive"] for x in h), sum(not x["alive"] for x in h))' "$1"
}

# operator MODE PACKAGE: an operator's install of PACKAGE.run: skinstall install, or the .run
# with --install.
operator() {
    if [ "$1" = skinstall ]; then
        skinstall install -q "$2.run"
    else
        sh "$2.run" --install -q
    fi
}

# no_trace: nothing of the holders is left once no package is.
no_trace() {
    [ ! -e "$AI/config/static_kernel.holders" ]
    "$OPBASE_READ" "$ASCEND_HOME_PATH/opp" ascend910b | grep -q '^no index'
}

two_services() {
    host "$1"
    service s1 "$2" pa
    service s2 "$2" pb
    local na nb
    na=$(found pa)
    nb=$(found pb)
    [ "$na" -gt 0 ]
    [ "$nb" -gt 0 ]
    [ "$(holds pa)" = "false 1 0" ]
    [ "$(holds pb)" = "false 1 0" ]
    stop s1
    [ ! -e "$AI/pa" ]
    [ "$(found pa)" -eq 0 ]
    [ "$(found pb)" -eq "$nb" ] # the other service's kernels are all there while it runs
    stop s2
    [ ! -e "$AI/pb" ]
    no_trace
}

@test "TorchAir: two services, one leaves: the other keeps its kernels (no skinstall)" {
    two_services shell torchair
}

@test "TorchAir: two services, one leaves: the other keeps its kernels (skinstall on PATH)" {
    two_services skinstall torchair
}

@test "vLLM-Ascend: two services, one leaves by the detached top-level uninstall.sh (no skinstall)" {
    two_services shell vllm
}

@test "vLLM-Ascend: two services, one leaves by the detached top-level uninstall.sh (skinstall on PATH)" {
    two_services skinstall vllm
}

three_ranks() {
    host "$1"
    operator "$1" pb
    local nb na r
    nb=$(found pb)
    [ "$(holds pb)" = "true 0 0" ]
    for r in r1 r2 r3; do service "$r" "$2" pa; done
    na=$(found pa)
    [ "$na" -gt 0 ]
    [ "$(holds pa)" = "false 3 0" ]
    stop r1
    [ "$(found pa)" -eq "$na" ]
    [ "$(found pb)" -eq "$nb" ]
    # Released, or (vLLM: the detached script found its caller gone) listed as gone.
    [[ "$(holds pa)" == "false 2 "[01] ]]
    stop r2
    [ "$(found pa)" -eq "$na" ]
    [ "$(found pb)" -eq "$nb" ]
    stop r3
    [ ! -e "$AI/pa" ]
    [ "$(found pa)" -eq 0 ]
    [ "$(found pb)" -eq "$nb" ] # the operator's install survives every service's exit
    [ "$(holds pb)" = "true 0 0" ]
    # The top-level script's old meaning, for an operator.
    sh "$AI/uninstall.sh" --all -q
    [ ! -e "$AI/pb" ]
    no_trace
}

@test "TorchAir: three ranks share a package: only the last one's exit removes it, an operator's stays (no skinstall)" {
    three_ranks shell torchair
}

@test "TorchAir: three ranks share a package: only the last one's exit removes it, an operator's stays (skinstall on PATH)" {
    three_ranks skinstall torchair
}

@test "vLLM-Ascend: three ranks share a package: only the last one's exit removes it, an operator's stays (no skinstall)" {
    three_ranks shell vllm
}

@test "vLLM-Ascend: three ranks share a package: only the last one's exit removes it, an operator's stays (skinstall on PATH)" {
    three_ranks skinstall vllm
}

killed_rank() {
    host "$1"
    operator "$1" pb
    service r1 torchair pa
    service r2 torchair pa
    local na nb
    na=$(found pa)
    nb=$(found pb)
    kill -9 "$(cat svc/r1/pid)"
    wait_until gone "$(cat svc/r1/pid)"
    [ "$(holds pa)" = "false 1 1" ]
    "$SKINSTALL" gc --install-path "$ASCEND_HOME_PATH" >gc.txt
    grep -q "nothing to collect" gc.txt
    [ "$(found pa)" -eq "$na" ]
    kill -9 "$(cat svc/r2/pid)"
    wait_until gone "$(cat svc/r2/pid)"
    local before
    before=$(state_digest "$TK")
    "$SKINSTALL" gc --dry-run --json --install-path "$ASCEND_HOME_PATH" >dry.json
    "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["name"] for x in r] == ["pa"] and r[0]["dry_run"], r' dry.json
    [ "$(state_digest "$TK")" = "$before" ]
    "$SKINSTALL" gc --json --install-path "$ASCEND_HOME_PATH" >gc.json
    "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); assert [x["name"] for x in r] == ["pa"] and len(r[0]["holders"]) == 2, r' gc.json
    [ ! -e "$AI/pa" ]
    [ "$(found pa)" -eq 0 ]
    [ "$(found pb)" -eq "$nb" ]
    [ ! -e "$AI/config/static_kernel.holders" ]
}

@test "skinstall gc collects the package of SIGKILLed ranks, never a live one's or an operator's (installed without skinstall)" {
    killed_rank shell
}

@test "skinstall gc collects the package of SIGKILLed ranks, never a live one's or an operator's (installed by skinstall)" {
    killed_rank skinstall
}

@test "an operator's uninstall of a package a running process holds is refused, naming it; --force removes it" {
    host shell
    service r1 torchair pa
    local pid na before
    pid=$(cat svc/r1/pid)
    na=$(found pa)
    before=$(state_digest "$TK")
    run "$SKINSTALL" uninstall pa --install-path "$ASCEND_HOME_PATH"
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing to uninstall pa: running processes hold it (pid $pid "* ]]
    [[ "$output" == *"--force"* ]]
    run "$SKINSTALL" uninstall --dry-run pa --install-path "$ASCEND_HOME_PATH"
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing to uninstall pa: running processes hold it (pid $pid "* ]]
    run sh pa.run --uninstall
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing to uninstall pa: running processes hold it ($pid:"* ]]
    [ "$(state_digest "$TK")" = "$before" ]
    [ "$(found pa)" -eq "$na" ]
    "$SKINSTALL" uninstall --force -q pa --install-path "$ASCEND_HOME_PATH"
    [ ! -e "$AI/pa" ]
    no_trace
}

@test "a package's uninstall.sh run by a process that does not hold it keeps an operator's install; --operator removes it" {
    host shell
    operator shell pa
    local before
    before=$(state_digest "$TK")
    run python3 -c 'import subprocess, sys; sys.exit(subprocess.run([sys.argv[1]]).returncode)' "$AI/pa/uninstall.sh"
    [ "$status" -eq 0 ]
    [[ "$output" == *"keeping pa: an operator's install (persistent)"*"--operator"* ]]
    [ "$(state_digest "$TK")" = "$before" ]
    "$SKINSTALL" uninstall --dry-run --json --holder "$$" pa --install-path "$ASCEND_HOME_PATH" >dry.json
    grep -q '"action": "kept"' dry.json
    run "$SKINSTALL" uninstall --holder "$$" pa --install-path "$ASCEND_HOME_PATH"
    [ "$status" -eq 0 ]
    [[ "$output" == *"keeping pa: an operator's install (persistent)"* ]]
    [ "$(state_digest "$TK")" = "$before" ]
    sh "$AI/pa/uninstall.sh" --operator -q
    [ ! -e "$AI/pa" ]
    no_trace
}

@test "a second install of the same version by another process only adds a holder" {
    host shell
    service r1 torchair pa
    local keep
    # Everything but the record of holders: the package, the index, config.ini, the top files.
    keep=$(cd "$AI" && find . ! -name static_kernel.holders -type f -exec sha256sum {} + | sort)
    service r2 torchair pa
    [ "$(cd "$AI" && find . ! -name static_kernel.holders -type f -exec sha256sum {} + | sort)" = "$keep" ]
    [ "$(holds pa)" = "false 2 0" ]
    grep -q "^pa held $(cat svc/r1/pid):[0-9]* $(cat svc/r2/pid):[0-9]*$" "$AI/config/static_kernel.holders"
    stop r2
    grep -q "^pa held $(cat svc/r1/pid):[0-9]*$" "$AI/config/static_kernel.holders"
    [ "$(holds pa)" = "false 1 0" ]
    stop r1
    no_trace
}

@test "the Python helper: install for this process, release_all at exit (with and without skinstall)" {
    local mode
    for mode in shell skinstall; do
        rm -rf host bin svc
        host "$mode"
        operator "$mode" pb
        mkdir -p svc/h
        cp pa.run svc/h/
        PYTHONPATH=$SKFORGE_SOURCE_DIR/python python3 - "$W/svc/h/pa.run" "$W/svc/h" <<'PY' &
import os, sys, time
import skforge.kernels as k
assert k.install(sys.argv[1]) == "pa"
open(os.path.join(sys.argv[2], "ready"), "w").write(k.holder())
while not os.path.exists(os.path.join(sys.argv[2], "stop")):
    time.sleep(0.02)
k.release_all()
PY
        local pid=$!
        wait_until [ -e svc/h/ready ]
        [ "$(holds pa)" = "false 1 0" ]
        grep -q "^pa held $(cat svc/h/ready)$" "$AI/config/static_kernel.holders"
        [ "$(found pa)" -gt 0 ]
        touch svc/h/stop
        wait "$pid"
        [ ! -e "$AI/pa" ]
        [ "$(found pb)" -gt 0 ]
        [ "$(holds pb)" = "true 0 0" ]
        sh "$AI/uninstall.sh" --all -q
        no_trace
    done
}

@test "under busybox sh and its applets: three ranks share a package and leave the vLLM way" {
    command -v busybox >/dev/null || skip "busybox is not installed"
    host shell
    local bb
    bb=$(command -v busybox)
    mkdir bb
    busybox --install -s "$W/bb"
    # busybox's applets first (sh among them), what it lacks (python3) after.
    export PATH=$W/bb:/usr/bin:/bin SERVICE_SH="$bb sh"
    "$bb" sh pb.run --install -q
    local na nb r
    nb=$(found pb)
    for r in r1 r2 r3; do service "$r" vllm pa; done
    na=$(found pa)
    [ "$na" -gt 0 ]
    [ "$(holds pa)" = "false 3 0" ]
    grep -q "^pa held $(cat svc/r1/pid):" "$AI/config/static_kernel.holders"
    stop r1
    [ "$(found pa)" -eq "$na" ]
    [ "$(found pb)" -eq "$nb" ]
    stop r2
    [ "$(found pa)" -eq "$na" ]
    stop r3
    [ ! -e "$AI/pa" ]
    [ "$(found pa)" -eq 0 ]
    [ "$(found pb)" -eq "$nb" ]
    "$bb" sh "$AI/uninstall.sh" --all -q
    no_trace
    export PATH=/usr/bin:/bin # bats' teardown runs rm, which goes with $W
    hash -r
}
