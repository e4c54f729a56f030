#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The CANN stamp (share/doc/cann-stamp.md): the release a package's kernels were built with, in
# its manifest and version.info; skinstall install/upgrade refuse a package for another CANN line
# or SoC, with --ignore-cann-version for the release (recorded in the history); doctor reports
# both; skc compile stamps from --cann-version or the toolkit; inspect shows it.
load helpers

# toolkit DIR VERSION: a CANN toolkit as its version.info files say it.
toolkit() {
    mkdir -p "$1/compiler"
    printf 'Version=%s\nversion_dir=x\n' "$2" >"$1/compiler/version.info"
}

@test "pack --cann-version stamps the manifest and version.info; inspect shows it; the .run is reproducible" {
    pack_tree p --cann-version 9.1.0
    run "$SKC" inspect p.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"CANN:            9.1.0 (line 9.1, from --cann-version)"* ]]
    run "$SKC" inspect p.run --json
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["cann_version"] == "9.1.0", d
assert d["cann"] == {"version": "9.1.0", "line": "9.1", "from": "option"}, d["cann"]' "$output"
    "$SKC" inspect p.run --list >/dev/null
    sh p.run --extract x >/dev/null
    grep -qx 'cann_version=9.1.0' x/version.info
    grep -qx 'cann_line=9.1' x/version.info
    mv p.run first.run
    pack_tree p --cann-version 9.1.0
    cmp first.run p.run
    # without the option: no stamp, and inspect says so
    pack_tree q
    run "$SKC" inspect q.run --json
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["cann_version"] is None and d["cann"] is None, d' "$output"
    run "$SKC" inspect q.run
    [[ "$output" == *"CANN:            not recorded"* ]]
}

@test "a --cann-version that is not a CANN release is a usage error in skc and skinstall" {
    run pack_tree p --cann-version banana
    [ "$status" -eq 2 ]
    [[ "$output" == *"--cann-version 'banana': expected a CANN version"* ]]
    [ ! -e p.run ]
    pack_tree p
    mkdir root
    run "$SKINSTALL" install p.run --install-path root --cann-version 9
    [ "$status" -eq 2 ]
    [[ "$output" == *"--cann-version '9': expected a CANN release"* ]]
    [ -z "$(ls -A root)" ]
}

@test "install refuses a package built for another CANN line, naming both releases and the file read; the tree is unchanged" {
    toolkit tk 9.1.0
    pack_tree old --name old --cann-version 9.1.0
    mkdir root
    ASCEND_HOME_PATH=$PWD/tk "$SKINSTALL" install old.run --install-path root -q
    before=$(tree_digest root)
    pack_tree p --cann-version 9.2.0
    ASCEND_HOME_PATH=$PWD/tk run "$SKINSTALL" install p.run --install-path root
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"p.run: package 'p' was built for CANN 9.2.0 (line 9.2), and the toolkit here is CANN 9.1.0 (line 9.1), read from $PWD/tk/compiler/version.info"* ]]
    [[ "$output" == *"--ignore-cann-version"* ]]
    [ "$(tree_digest root)" = "$before" ]
    # upgrade and the dry run refuse the same way; --cann-version names the host's release
    run "$SKINSTALL" upgrade p.run --install-path root --cann-version 9.1.2
    [ "$status" -eq 1 ]
    [[ "$output" == *"and the toolkit here is CANN 9.1.2 (line 9.1), read from --cann-version"* ]]
    ASCEND_HOME_PATH=$PWD/tk run "$SKINSTALL" install p.run --install-path root --dry-run
    [ "$status" -eq 1 ]
    [ "$(tree_digest root)" = "$before" ]
    # the .run with skinstall on PATH (TorchAir's flow: no arguments) hands over and is refused
    ASCEND_HOME_PATH=$PWD/tk SKFORGE_NO_SKINSTALL=0 PATH="$(dirname "$SKINSTALL"):$PATH" \
        ASCEND_OPP_PATH=$W/root/opp run sh p.run --install-path="$W/root"
    echo "$output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"built for CANN 9.2.0 (line 9.2)"* ]]
    [ "$(tree_digest root)" = "$before" ]
    # ... and its override, SKFORGE_IGNORE_CANN_VERSION=1, is handed over too (the only one a
    # process that runs the .run has), recorded in the history as skinstall's option
    ASCEND_HOME_PATH=$PWD/tk SKFORGE_NO_SKINSTALL=0 SKFORGE_IGNORE_CANN_VERSION=1 \
        PATH="$(dirname "$SKINSTALL"):$PATH" ASCEND_OPP_PATH=$W/root/opp run sh p.run --install-path="$W/root"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"installing anyway (--ignore-cann-version): package 'p' was built for CANN 9.2.0"* ]]
    [ -f root/opp/static_kernel/ai_core/p/manifest.json ]
    run "$SKINSTALL" history --install-path root --json
    python3 -c '
import json, sys
last = json.loads(sys.argv[1])[-1]
assert last["package"] == "p" and last["detail"].startswith("--ignore-cann-version: "), last' "$output"
}

@test "a package of the same line installs: a patch release is no other line; an unstamped one is not checked" {
    toolkit tk 9.1.0
    mkdir root
    pack_tree p --cann-version 9.1.3
    ASCEND_HOME_PATH=$PWD/tk run "$SKINSTALL" install p.run --install-path root
    [ "$status" -eq 0 ]
    pack_tree q --name q
    ASCEND_HOME_PATH=$PWD/tk run "$SKINSTALL" install q.run --install-path root
    [ "$status" -eq 0 ]
    run "$SKINSTALL" info q --install-path root
    [[ "$output" == *"CANN:           not recorded"* ]]
    run "$SKINSTALL" info p --install-path root --json
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["cann"]["version"] == "9.1.3" and d["cann"]["line"] == "9.1", d' "$output"
    run "$SKINSTALL" list --install-path root --json
    python3 -c '
import json, sys
by = {p["name"]: p for p in json.loads(sys.argv[1])}
assert by["p"]["cann_version"] == "9.1.3" and by["q"]["cann_version"] is None, by' "$output"
    # with no toolkit and no --cann-version a stamped package installs, and says it was not checked
    pack_tree r --name r --cann-version 9.2.0
    run env -u ASCEND_HOME_PATH "$SKINSTALL" install r.run --install-path root
    [ "$status" -eq 0 ]
    [[ "$output" == *"r.run: built for CANN 9.2.0; not checked"* ]]
    # nor with a toolkit whose version names no line, and it says so
    toolkit tk unknown
    pack_tree s --name s --cann-version 9.2.0
    ASCEND_HOME_PATH=$PWD/tk run "$SKINSTALL" install s.run --install-path root
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"s.run: built for CANN 9.2.0; not checked (the toolkit's version 'unknown', read from $PWD/tk/compiler/version.info, names no CANN line)"* ]]
}

@test "--ignore-cann-version installs another line's package with a warning, and the history records it" {
    toolkit tk 9.0.1
    mkdir root
    pack_tree p --cann-version 9.1.0
    ASCEND_HOME_PATH=$PWD/tk run "$SKINSTALL" install p.run --install-path root --ignore-cann-version
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"installing anyway (--ignore-cann-version): package 'p' was built for CANN 9.1.0 (line 9.1), and the toolkit here is CANN 9.0.1 (line 9.0)"* ]]
    run "$SKINSTALL" history --install-path root --json
    python3 -c '
import json, sys
h = json.loads(sys.argv[1])
last = h[-1]
assert last["package"] == "p" and last["action"] == "installed", last
assert "--ignore-cann-version" in last["command"], last
assert last["detail"].startswith("--ignore-cann-version: package \x27p\x27 was built for CANN 9.1.0"), last' "$output"
}

@test "install refuses a package for another SoC than --soc names, with or without --ignore-cann-version" {
    mkdir root
    pack_tree p --cann-version 9.1.0
    for extra in "" --ignore-cann-version; do
        run "$SKINSTALL" install p.run --install-path root --soc Ascend950PR_9599 $extra
        echo "$output"
        [ "$status" -eq 1 ]
        [[ "$output" == *"package 'p' is for Ascend910B1 (ascend910b), and this host's SoC is ascend950 (--soc)"* ]]
        [ -z "$(ls -A root)" ]
    done
    run "$SKINSTALL" install p.run --install-path root --soc ascend910b
    [ "$status" -eq 0 ]
}

@test "doctor reports a package for another CANN line or SoC, exit 1, each with what to do" {
    toolkit tk 9.1.0
    mkdir root
    pack_tree p --cann-version 9.2.0
    "$SKINSTALL" install p.run --install-path root -q --cann-version 9.2.0
    ASCEND_HOME_PATH=$PWD/tk ASCEND_OPP_PATH=$W/root/opp run "$SKINSTALL" doctor --install-path root
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"package p 1.2.3 SoC Ascend910B1, CANN 9.2.0 (another line)"* ]]
    [[ "$output" == *"problem: package 'p' was built for CANN 9.2.0 (line 9.2), and the toolkit here is CANN 9.1.0 (line 9.1)"*"fix: rebuild p with this host's CANN"*"--cann-version 9.1"* ]]
    ASCEND_OPP_PATH=$W/root/opp run "$SKINSTALL" doctor --install-path root --cann-version 9.2.1 --soc Ascend950PR_9599 --json
    [ "$status" -eq 1 ]
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
p = d["packages"][0]
assert p["cann_version"] == "9.2.0" and p["matches_cann"] is True and p["matches_soc"] is False, p
probs = [x["problem"] for x in d["problems"]]
assert any("is for Ascend910B1 (ascend910b), and this host\x27s SoC is ascend950" in x for x in probs), probs
assert not any("built for CANN" in x for x in probs), probs' "$output"
    ASCEND_OPP_PATH=$W/root/opp run "$SKINSTALL" doctor --install-path root --cann-version 9.2.1 --soc ascend910b
    echo "$output"
    [ "$status" -eq 0 ]
    # a toolkit version that names no line checks nothing: matches_cann is null, not true
    toolkit tk unknown
    ASCEND_HOME_PATH=$PWD/tk ASCEND_OPP_PATH=$W/root/opp run "$SKINSTALL" doctor --install-path root --json
    echo "$output"
    python3 -c '
import json, sys
p = json.loads(sys.argv[1])["packages"][0]
assert p["cann_version"] == "9.2.0" and p["matches_cann"] is None, p' "$output"
}

@test "skc compile stamps the release it followed: --cann-version, else the toolkit's with the SoC's cores, else none" {
    npu_kernels g/k add
    cat >g/graph.yaml <<'YAML'
name: g
npu_arch: dav-2201
soc_version: Ascend910B1
super_kernel_optimize: false
inputs: [{name: x, shape: [16], dtype: float16}]
ops:
  - {name: a, type: Add, kernel: {json_path: k/add.json, bin_path: k/add.o}, inputs: [x, x], outputs: [{name: y, shape: [16], dtype: float16}]}
YAML
    stamp() { "$SKC" inspect "$1" --json | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["cann"], sort_keys=True))'; }
    toolkit tk 9.0.1
    ASCEND_HOME_PATH=$PWD/tk "$SKC" compile g/graph.yaml --name g -o a -q >/dev/null
    [ "$(stamp a/g.run)" = '{"cube_core_cnt": 24, "from": "toolkit", "line": "9.0", "vector_core_cnt": 48, "version": "9.0.1"}' ]
    ASCEND_HOME_PATH=$PWD/tk "$SKC" compile g/graph.yaml --name g -o b -q --cann-version 9.1 >/dev/null
    [ "$(stamp b/g.run)" = '{"cube_core_cnt": 24, "from": "option", "line": "9.1", "vector_core_cnt": 48, "version": "9.1"}' ]
    env -u ASCEND_HOME_PATH "$SKC" compile g/graph.yaml --name g -o c -q >/dev/null
    [ "$(stamp c/g.run)" = null ]
    # a new toolkit release is a new package, not the cached one
    toolkit tk 9.0.2
    ASCEND_HOME_PATH=$PWD/tk "$SKC" compile g/graph.yaml --name g -o a -q >/dev/null
    [ "$(stamp a/g.run)" = '{"cube_core_cnt": 24, "from": "toolkit", "line": "9.0", "vector_core_cnt": 48, "version": "9.0.2"}' ]
    # the toolkit's Version= ends at a blank or a CR, as install.sh reads it
    printf 'Version=9.0.3 \r\n' >tk/compiler/version.info
    ASCEND_HOME_PATH=$PWD/tk "$SKC" compile g/graph.yaml --name g -o a -q >/dev/null
    [ "$(stamp a/g.run)" = '{"cube_core_cnt": 24, "from": "toolkit", "line": "9.0", "vector_core_cnt": 48, "version": "9.0.3"}' ]
    # one that names no line stamps nothing (the conventions still follow its major.minor)
    toolkit tk 9.00001
    ASCEND_HOME_PATH=$PWD/tk "$SKC" compile g/graph.yaml --name g -o a -q >/dev/null
    [ "$(stamp a/g.run)" = null ]
}

@test "the .run alone (no skforge on the host) refuses another CANN line before touching the tree, as skinstall does" {
    mkdir -p root
    pack_tree p --cann-version 9.2.0
    toolkit tk 9.1.0
    ASCEND_HOME_PATH=$PWD/tk sh p.run --install-path="$W/root" -q 2>/dev/null || true
    [ -z "$(ls -A root)" ] # nothing at all: refused before the tree was opened
    ASCEND_HOME_PATH=$PWD/tk run sh p.run --install-path="$W/root"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"install.sh: ERROR: package 'p' was built for CANN 9.2.0 (line 9.2), and the toolkit here is CANN 9.1.0 (line 9.1), read from $PWD/tk/compiler/version.info"*"SKFORGE_IGNORE_CANN_VERSION=1"*"nothing was installed"* ]]
    [ -z "$(ls -A root)" ]
    # the same line, written with CRLF and leading zeros, is the same line; only version.info
    printf 'Version=09.02.1\r\n' >tk/version.info
    rm tk/compiler/version.info
    ASCEND_HOME_PATH=$PWD/tk run sh p.run --install-path="$W/root" -q
    echo "$output"
    [ "$status" -eq 0 ]
    [ -f root/opp/static_kernel/ai_core/p/manifest.json ]
    # another line with the override: installed, with the warning
    pack_tree q --name q --cann-version 9.0.0
    ASCEND_HOME_PATH=$PWD/tk SKFORGE_IGNORE_CANN_VERSION=1 run sh q.run --install-path="$W/root" -q
    [ "$status" -eq 0 ]
    [[ "$output" == *"install.sh: WARNING: installing anyway (SKFORGE_IGNORE_CANN_VERSION=1): package 'q' was built for CANN 9.0.0 (line 9.0)"* ]]
    [ -f root/opp/static_kernel/ai_core/q/manifest.json ]
    # a toolkit version that names no line is not checked
    printf 'Version=unknown\n' >tk/version.info
    pack_tree r --name r --cann-version 9.0.0
    ASCEND_HOME_PATH=$PWD/tk run sh r.run --install-path="$W/root" -q
    [ "$status" -eq 0 ]
}

@test "the op_compiler front end stamps the package with the toolkit that compiled it, on a miss, a hit and a partial hit" {
    mkdir -p m real
    ln -sf "$OP_COMPILER" m/op_compiler
    ln -sf "$BATS_TEST_DIRNAME/standin_op_compiler.py" real/op_compiler
    toolkit tk 9.1.0
    export PATH="$W/m:$W/real:$PATH" ASCEND_HOME_PATH="$W/tk" SKFORGE_OP_STORE="$W/store" STANDIN_LOG="$W/calls"
    unset SKFORGE_CACHE_DIR SKFORGE_OP_COMPILER
    op() { # DIR SHAPE: one op JSON as aclopStartDumpArgs writes it
        mkdir -p "$1"
        printf '{"op_type": "Add", "inputs": [{"name": "x", "index": 0, "dtype": "float16", "format": "ND", "shape": [%s], "param_type": "required"}], "outputs": [{"name": "y", "index": 0, "dtype": "float16", "format": "ND", "shape": [%s]}], "attrs": [], "deterministic": "false", "impl_mode": ""}\n' "$2" "$2" >"$1/Add_float16_ND_$2_1.json"
    }
    version() { "$SKC" inspect "$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["cann_version"])'; }
    op d1 16
    op_compiler -p d1 -v Ascend910B1 -o r1 2>/dev/null
    [ "$(version r1/*.run)" = 9.1.0 ]
    op_compiler -p d1 -v Ascend910B1 -o r2 2>/dev/null # a hit
    [ "$(version r2/*.run)" = 9.1.0 ]
    op d3 16
    op d3 32 # a partial hit: 16 from the store, 32 compiled
    run op_compiler -p d3 -v Ascend910B1 -o r3
    [[ "$output" == *"partial hit"* ]]
    [ "$(version r3/*.run)" = 9.1.0 ]
    # and TorchAir's flow on a host of another line refuses it, with skinstall or without
    toolkit tk 9.0.1
    mkdir root
    run sh r3/*.run --install-path="$W/root"
    [ "$status" -eq 1 ]
    [[ "$output" == *"built for CANN 9.1.0 (line 9.1), and the toolkit here is CANN 9.0.1 (line 9.0)"* ]]
    [ -z "$(ls -A root)" ]
}

@test "skinstall and the .run alone read the same release and line from every version.info" {
    # A package of a line no toolkit has: both refuse it naming what they read, or both do not
    # check (no line read). Each row: compiler/version.info, then version.info ('-': absent), as
    # printf formats.
    pack_tree p --cann-version 1.0
    read_by() { # skinstall | run: "CANN <version> (line <line>)" as its refusal says, or nothing
        rm -rf root && mkdir root
        if [ "$1" = skinstall ]; then
            ASCEND_HOME_PATH=$W/tk "$SKINSTALL" install p.run --install-path root --dry-run 2>&1
        else
            ASCEND_HOME_PATH=$W/tk SKFORGE_NO_SKINSTALL=1 sh p.run --install-path="$W/root" -q 2>&1
        fi | sed -n 's/.*and the toolkit here is \(CANN .* (line [^)]*)\).*/\1/p'
    }
    while IFS='|' read -r compiler top expected; do
        rm -rf tk && mkdir -p tk/compiler
        [ "$compiler" = - ] || printf "$compiler" >tk/compiler/version.info
        [ "$top" = - ] || printf "$top" >tk/version.info
        a=$(read_by skinstall)
        b=$(read_by run)
        echo "[$compiler] [$top]: skinstall '$a', the .run '$b', expected '$expected'"
        [ "$a" = "$expected" ]
        [ "$b" = "$expected" ]
    done <<'ROWS'
Version=9.1.0\n|-|CANN 9.1.0 (line 9.1)
Version=9.1.0-rc1\n|-|CANN 9.1.0-rc1 (line 9.1)
Version=9.01\n|-|CANN 9.01 (line 9.1)
Version=9.1.\n|-|CANN 9.1. (line 9.1)
Version=9.2.RC1\r\n|-|CANN 9.2.RC1 (line 9.2)
Version=9.1.0 \n|-|CANN 9.1.0 (line 9.1)
Version=9.1.0\t# comment\n|-|CANN 9.1.0 (line 9.1)
Version=9.1.0_b1\n|-|CANN 9.1.0 (line 9.1)
Version=9.2.0\r\r\n|-|CANN 9.2.0 (line 9.2)
Version=9.1.0|-|CANN 9.1.0 (line 9.1)
Version=9.1.0\nVersion=9.2.0\n|-|CANN 9.1.0 (line 9.1)
Version=\r\nVersion=9.0.1\n|-|CANN 9.0.1 (line 9.0)
Version=\r\n|Version=9.2.0\n|CANN 9.2.0 (line 9.2)
Version= \n|Version=9.2.0\n|CANN 9.2.0 (line 9.2)
x=1\n|Version=9.2.0\n|CANN 9.2.0 (line 9.2)
Version=v9.1\n|-|
 Version=9.1.0\n|-|
version=9.1.0\n|-|
Version=9\n|-|
Version=9.\n|-|
Version=.1\n|-|
Version=9..1\n|-|
Version=9.1rc1\n|-|
Version=9.0000\n|-|CANN 9.0000 (line 9.0)
Version=9.00001\n|-|
Version=00009.1\n|-|
Version=99999999999999999999.1\n|-|
Version=9.1.0000000000000000000000000000000000000000000000000000000000000\n|-|
ROWS
    # what is not a readable regular file is passed over by both
    rm -rf tk && mkdir -p tk/compiler/version.info && printf 'Version=9.2.0\n' >tk/version.info
    [ "$(read_by skinstall)" = "CANN 9.2.0 (line 9.2)" ]
    [ "$(read_by run)" = "CANN 9.2.0 (line 9.2)" ]
    rmdir tk/compiler/version.info && mkfifo tk/compiler/version.info
    [ "$(read_by skinstall)" = "CANN 9.2.0 (line 9.2)" ]
    [ "$(read_by run)" = "CANN 9.2.0 (line 9.2)" ]
}
