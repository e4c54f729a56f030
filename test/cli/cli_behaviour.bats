#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The command line as an operator meets it: --help and --version everywhere, options that do
# not apply refused, numbers range-checked, ~ after '=' explained, key files named in plain
# words, results a script can read from stdout, progress only on a terminal, and Ctrl-C or
# SIGTERM during pack and compile leaving no temporaries behind.
load helpers

OUT=static_kernel_compile_outputs

# subcommands TOOL: the command names `TOOL --help` lists.
subcommands() {
    "$1" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p'
}

# static_graph: a graph of two precompiled NPU kernels, packaged without any compiler (fast).
static_graph() {
    npu_kernels g/kernels add mul
    cat >g/graph.yaml <<'EOF'
name: cli_demo
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs: [{name: x, shape: [16], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: kernels/add.json, bin_path: kernels/add.o}, inputs: [x], outputs: [{name: y, shape: [16], dtype: float16}], scope: s}
  - {name: m, type: Mul, kernel: {json_path: kernels/mul.json, bin_path: kernels/mul.o}, inputs: [y], outputs: [{name: z, shape: [16], dtype: float16}], scope: s}
EOF
}

# dead_pid: the pid of a process that has ended.
dead_pid() {
    sh -c 'exit 0' &
    local pid=$!
    wait "$pid"
    echo "$pid"
}

# wait_for GLOB...: waits (up to 60 s) until a path matching GLOB exists.
wait_for() {
    local i
    for i in $(seq 600); do
        compgen -G "$1" >/dev/null && return 0
        sleep 0.1
    done
    echo "timed out waiting for $1" >&2
    return 1
}

@test "every command of skc, skinstall and skrun answers --help and -h" {
    local tool cmd n=0
    for tool in "$SKC" "$SKINSTALL"; do
        name=$(basename "$tool")
        for cmd in $(subcommands "$tool"); do
            for h in --help -h; do
                run "$tool" "$cmd" "$h"
                [ "$status" -eq 0 ] || { echo "$name $cmd $h: $output"; false; }
                [[ "${lines[0]}" == "Usage: $name $cmd"* ]] || { echo "$name $cmd $h: ${lines[0]}"; false; }
                [[ "$output" == *"Exit status:"* ]]
            done
            n=$((n + 1))
        done
    done
    [ "$n" -ge 18 ] # 6 skc commands, 12 skinstall commands
    for h in --help -h; do
        run "$SKRUN" "$h"
        [ "$status" -eq 0 ]
        [[ "${lines[0]}" == "Usage: skrun NAME"* ]]
    done
    # `skc help pack` is `skc pack --help`
    [ "$("$SKC" help pack)" = "$("$SKC" pack --help)" ]
}

@test "--version is each tool's version, on every command" {
    v=$("$SKC" --version)
    [[ "$v" == "skc "[0-9]* ]]
    # The license is named where an operator asks for the version.
    [ "$(sed -n 2p <<<"$v")" = "License: Apache-2.0 <https://www.apache.org/licenses/LICENSE-2.0>" ]
    for cmd in check plan compile pack inspect keygen; do
        run "$SKC" "$cmd" --version
        [ "$status" -eq 0 ]
        [ "$output" = "$v" ]
    done
    run "$SKRUN" --version
    [ "$status" -eq 0 ]
    [ "$output" = "skrun ${v#skc }" ]
    run "$SKINSTALL" list --version
    [ "$status" -eq 0 ]
    [ "$output" = "skinstall ${v#skc }" ]
}

@test "the package version is --package-version; the old --version VALUE is refused with the new name" {
    make_tree tree
    run "$SKC" pack tree -o k.run --version 1.2.0
    [ "$status" -eq 2 ]
    [[ "$output" == *"--version prints skc's version and takes no value; give the package version as --package-version 1.2.0"* ]]
    [ ! -e k.run ]
    run "$SKC" pack tree -o k.run --version=1.2.0
    [ "$status" -eq 2 ]
    [[ "$output" == *"--package-version 1.2.0"* ]]
    static_graph
    run "$SKC" compile g/graph.yaml --version 2.0
    [ "$status" -eq 2 ]
    [[ "$output" == *"--package-version 2.0"* ]]
    [ ! -e "$OUT" ]
    "$SKC" pack tree -o k.run --package-version 1.2.0 -q
    [ "$(header_value k.run VERSION)" = 1.2.0 ]
    "$SKC" compile g/graph.yaml --package-version 2.0 -q >/dev/null
    [ "$(header_value "$OUT/cli_demo_dav-2201.run" VERSION)" = 2.0 ]
}

@test "options that do not apply to a command are refused, naming the option" {
    static_graph
    make_tree tree
    refused() { # OPTION COMMAND...
        local opt=$1
        shift
        run "$@"
        [ "$status" -eq 2 ] || { echo "$*: status $status: $output"; false; }
        [[ "$output" == *"unrecognised option '$opt'"* ]] || { echo "$*: $output"; false; }
    }
    refused --force "$SKC" check g/graph.yaml --force
    refused --sign-key "$SKC" plan g/graph.yaml --sign-key k.pem
    refused --compress "$SKC" compile g/graph.yaml --compress zstd
    refused --jobs "$SKC" pack tree -o k.run --package-version 1 --jobs 2
    refused --level "$SKC" inspect k.run --level 3
    refused --json "$SKC" keygen -o k --json
    refused --force "$SKRUN" demo --force
    refused --force "$SKINSTALL" list --force --all --outputs x
    # No abbreviations: a prefix of an option is not that option.
    refused --comp "$SKC" pack tree -o k.run --package-version 1 --comp zstd
    [ ! -e k.run ] && [ ! -e k.pem ] && [ ! -e "$OUT" ]
}

@test "numeric options are range-checked before any work" {
    static_graph
    make_tree tree
    bad() { # MESSAGE COMMAND...
        local msg=$1
        shift
        run "$@"
        [ "$status" -eq 2 ] || { echo "$*: status $status: $output"; false; }
        [[ "$output" == *"$msg"* ]] || { echo "$*: $output"; false; }
    }
    # -1 is not four billion iterations
    bad "--iterations must be an integer from 1 to 1000000, not '-1'" "$SKRUN" demo --iterations -1
    bad "--iterations must be an integer from 1 to 1000000, not '0'" "$SKRUN" demo --iterations 0
    bad "--cores must be an integer from 0 to 256, not '257'" "$SKRUN" demo --cores 257
    bad "--cores must be an integer from 0 to 256, not '-2'" "$SKRUN" demo --cores -2
    bad "--seed must be an integer from 0 to 9223372036854775807, not '-5'" "$SKRUN" demo --seed -5
    bad "--seed must be an integer from 0 to" "$SKRUN" demo --seed 99999999999999999999
    bad "--jobs must be an integer from 0 to 1024, not '-1'" "$SKC" compile g/graph.yaml --jobs -1
    bad "--jobs must be an integer from 0 to 1024, not 'many'" "$SKC" compile g/graph.yaml -j many
    bad "--level must be an integer from 0 to 19, not '-1'" "$SKC" pack tree -o k.run --package-version 1 --level -1
    bad "--level 12: gzip takes 1..9 (0: its default, 6)" "$SKC" pack tree -o k.run --package-version 1 --level 12
    bad "--level must be an integer from 0 to 19, not '20'" "$SKC" pack tree -o k.run --package-version 1 --compress zstd --level 20
    [ ! -e k.run ] && [ ! -e "$OUT" ]
    # The bounds themselves are accepted.
    "$SKC" pack tree -o k.run --package-version 1 --compress zstd --level 19 -q >/dev/null
    "$SKC" pack tree -o k9.run --package-version 1 --level 9 -q >/dev/null
}

@test "~ after '=' is explained; a short option's '=' too" {
    make_tree tree
    run "$SKC" pack tree -o k.run --package-version 1 --sign-key=~/k.pem
    [ "$status" -eq 2 ]
    [[ "$output" == *"'--sign-key=~/k.pem': there is no '~' here: the shell does not expand ~ after '='; write --sign-key ~/k.pem or the full path"* ]]
    run "$SKC" pack tree -o=~/k.run --package-version 1
    [ "$status" -eq 2 ]
    [[ "$output" == *"write -o ~/k.run or the full path"* ]]
    run "$SKINSTALL" list --install-path=~/root
    [ "$status" -eq 2 ]
    [[ "$output" == *"write --install-path ~/root or the full path"* ]]
    run "$SKRUN" demo --install-path=~/root
    [ "$status" -eq 2 ]
    [[ "$output" == *"write --install-path ~/root or the full path"* ]]
    run "$SKC" keygen -o=k
    [ "$status" -eq 2 ]
    [[ "$output" == *"a short option takes its value after a space: write -o k"* ]]
    [ ! -e k.run ] && [ ! -e k.pem ] && [ ! -e =k.pem ]
    # A directory really named '~' here is what the user meant.
    mkdir '~'
    "$SKC" keygen --output=~/k >/dev/null
    [ -f '~/k.pem' ]
}

@test "key files that are not the Ed25519 key asked for are named in plain words" {
    make_tree tree
    "$SKC" keygen -o k >/dev/null
    echo 'not a key' >junk.pem
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out rsa.pem 2>/dev/null
    sign() {
        run "$SKC" pack tree -o s.run --package-version 1 --sign-key "$1"
        [ "$status" -eq 1 ]
        [ ! -e s.run ]
    }
    sign junk.pem
    [[ "$output" == *"'junk.pem' is not an Ed25519 private key in PEM form: it has no '-----BEGIN ...-----' line (sign with NAME.pem from 'skc keygen -o NAME')"* ]]
    sign k.pub.pem
    [[ "$output" == *"'k.pub.pem' is not an Ed25519 private key in PEM form: it holds a public key; signing needs the private one"* ]]
    sign rsa.pem
    [[ "$output" == *"'rsa.pem' is a key of type RSA, not Ed25519"* ]]
    sign nowhere.pem
    [[ "$output" == *"nowhere.pem"*"No such file or directory"* ]]
    "$SKC" pack tree -o s.run --package-version 1 --sign-key k.pem -q >/dev/null
    run "$SKC" inspect s.run --trusted-key k.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"'k.pem' is not an Ed25519 public key in PEM form: it holds a private key; --trusted-key takes the public one"* ]]
    run "$SKC" inspect s.run --trusted-key junk.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"'junk.pem' is not an Ed25519 public key in PEM form"* ]]
    run "$SKINSTALL" install s.run --install-path "$W/root" --trusted-key rsa.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"'rsa.pem' is not an Ed25519 public key in PEM form: it holds a private key"* ]]
    [ ! -e root/opp ]
}

@test "compile prints only the .run path on stdout; messages go to stderr; -q keeps only errors" {
    static_graph
    out=$("$SKC" compile g/graph.yaml 2>err)
    [ "$out" = "$OUT/cli_demo_dav-2201.run" ]
    grep -q "cache miss" err
    out=$("$SKC" compile g/graph.yaml -q 2>err)
    [ "$out" = "$OUT/cli_demo_dav-2201.run" ]
    [ ! -s err ]
    # a script can use it directly
    mkdir root
    "$SKINSTALL" install "$("$SKC" compile g/graph.yaml -q)" --install-path "$W/root" -q
    [ -d root/opp/static_kernel/ai_core/cli_demo_dav-2201 ]
}

@test "compile --json is one JSON object describing the result" {
    static_graph
    "$SKC" compile g/graph.yaml --json --name demo --package-version 1.4 >a.json 2>err
    "$SKC" compile g/graph.yaml --json --name demo --package-version 1.4 -q >b.json
    "$SKC" compile g/graph.yaml --json --npu-arch dav-2201 --sources-only -q >c.json
    python3 - <<'PY'
import json
a, b, c = (json.load(open(f)) for f in ("a.json", "b.json", "c.json"))
assert a["run"] == "static_kernel_compile_outputs/demo.run", a
assert (a["name"], a["version"], a["npu_arch"], a["soc"]) == ("demo", "1.4", "dav-2201", "Ascend910B1"), a
assert a["cache"] == "miss" and b["cache"] == "hit", (a, b)
assert a["operators"] == 2 and a["superkernels"] == 0 and a["sources_dir"] is None, a
assert a["compile_log"] == "static_kernel_compile_outputs/demo_compile_log/demo_compile_succ.log", a
assert c["run"] is None and c["sources_dir"] == "static_kernel_compile_outputs/cli_demo_dav-2201_sources", c
assert c["cache"] == "unused", c
PY
    [ -f "$OUT/demo.run" ]
    grep -q "cache miss" err
}

@test "pack prints only the .run path on stdout, or JSON; its summary goes to stderr" {
    make_tree tree
    out=$("$SKC" pack tree -o k.run --package-version 1.2 2>err)
    [ "$out" = k.run ]
    grep -q "packed k 1.2 into k.run" err
    out=$("$SKC" pack tree -o k.run --package-version 1.2 -q 2>err)
    [ "$out" = k.run ]
    [ ! -s err ]
    "$SKC" pack tree -o k.run --package-version 1.2 --json -q >k.json
    python3 -c '
import json, sys
j = json.load(open("k.json"))
assert j["run"] == "k.run" and j["name"] == "k" and j["version"] == "1.2", j
assert j["compression"] == "gzip" and j["signer_key_id"] is None and len(j["payload_sha256"]) == 64, j
'
}

@test "pack into a missing directory names the directory" {
    make_tree tree
    run "$SKC" pack tree -o missing/dir/k.run --package-version 1
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot write 'missing/dir/k.run': the directory 'missing/dir' does not exist"*"create it first"* ]]
    [ ! -e missing ]
}

@test "compile shows progress on a terminal, not in a pipe and not with -q" {
    static_graph
    script -qec "'$SKC' compile g/graph.yaml --no-cache" /dev/null >tty.txt
    grep -q "packing cli_demo_dav-2201 \[#*\] 100%" tty.txt
    script -qec "'$SKC' compile g/graph.yaml --no-cache -q" /dev/null >quiet.txt
    ! grep -q "%" quiet.txt
    "$SKC" compile g/graph.yaml --no-cache 2>&1 | cat >pipe.txt
    ! grep -q "%" pipe.txt
    grep -q "cache disabled" pipe.txt
}

@test "SIGTERM during pack removes its temporary and exits 143" {
    mkdir -p big
    head -c $((128 << 20)) /dev/urandom >big/blob.o
    "$SKC" pack big -o big.run --package-version 1 --level 9 -q 3>&- &
    pid=$!
    wait_for '.big.run.tmp.*'
    kill -TERM "$pid"
    status=0
    wait "$pid" || status=$?
    [ "$status" -eq 143 ]
    [ -z "$(compgen -G '.big.run.tmp.*')" ]
    [ ! -e big.run ]
}

@test "Ctrl-C (SIGINT) during pack removes its temporary and exits 130" {
    mkdir -p big
    head -c $((128 << 20)) /dev/urandom >big/blob.o
    # A background job of a script starts with SIGINT ignored (and skc keeps it so, as nohup
    # expects); an operator's foreground command has it at its default.
    env --default-signal=INT "$SKC" pack big -o big.run --package-version 1 --level 9 -q 3>&- &
    pid=$!
    wait_for '.big.run.tmp.*'
    kill -INT "$pid"
    status=0
    wait "$pid" || status=$?
    [ "$status" -eq 130 ]
    [ -z "$(compgen -G '.big.run.tmp.*')" ]
    [ ! -e big.run ]
}

@test "SIGTERM or SIGINT during compile removes its build directories, stops its compilers, exits 143/130" {
    mkdir -p g/k bin
    cp "$SKFORGE_SOURCE_DIR/share/skforge/examples/host_kernels/add.json" \
        "$SKFORGE_SOURCE_DIR/share/skforge/examples/host_kernels/add.cpp" g/k/
    cat >g/graph.yaml <<'EOF'
name: slow
inputs: [{name: x, shape: [64], dtype: float32}]
ops:
  - {name: add, type: Add, kernel: {json_path: k/add.json}, inputs: [x, x], outputs: [{name: y, shape: [64], dtype: float32}]}
EOF
    # A compiler that hangs: what a long build looks like when the signal comes.
    cat >bin/cxx <<EOF
#!/bin/sh
[ "\$1" = --version ] && exec c++ --version
echo \$\$ >>"$W/cxx.pids"
exec sleep 120
EOF
    chmod +x bin/cxx
    for sig in TERM INT; do
        rm -f cxx.pids
        CXX=$W/bin/cxx env --default-signal=INT "$SKC" compile g/graph.yaml --no-cache -q 3>&- &
        pid=$!
        wait_for cxx.pids
        [ -n "$(compgen -G "$OUT/.skc-build.$pid.*")" ]
        kill -"$sig" "$pid"
        status=0
        wait "$pid" || status=$?
        [ "$status" -eq $((128 + $(kill -l "$sig"))) ]
        [ -z "$(ls -A "$OUT" | grep '^\.skc-build\|\.tmp\.')" ]
        [ ! -e "$OUT/slow_host.run" ]
        # killed: gone, or a zombie where PID 1 does not reap orphans (containers)
        for c in $(cat cxx.pids); do
            [ ! -e "/proc/$c" ] || [ "$(sed 's/^.*) //' "/proc/$c/stat" | cut -c1)" = Z ]
        done
    done
}

@test "a later pack or compile removes the temporaries of dead processes, never a live one's" {
    make_tree tree
    static_graph
    dead=$(dead_pid)
    sleep 300 3>&- &
    live=$!
    printf 'partial' >".k.run.tmp.$dead.AbC123"
    printf 'partial' >".k.run.tmp.$live.AbC123"
    printf 'other' >".other.run.tmp.$dead.AbC123" # another file's: not this pack's to remove
    "$SKC" pack tree -o k.run --package-version 1 -q >/dev/null
    [ ! -e ".k.run.tmp.$dead.AbC123" ]
    [ -e ".k.run.tmp.$live.AbC123" ]
    [ -e ".other.run.tmp.$dead.AbC123" ]
    mkdir -p "$OUT/.skc-build.$dead.XyZ789/obj" "$OUT/.skc-build.$live.XyZ789"
    touch "$OUT/.skc-build.$dead.XyZ789/obj/a.o" "$OUT/.cli_demo_dav-2201.run.tmp.$dead.q1w2e3"
    "$SKC" compile g/graph.yaml -q >/dev/null
    [ ! -e "$OUT/.skc-build.$dead.XyZ789" ]
    [ ! -e "$OUT/.cli_demo_dav-2201.run.tmp.$dead.q1w2e3" ]
    [ -d "$OUT/.skc-build.$live.XyZ789" ]
    kill "$live"
}
