#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The op_compiler front end (share/doc/op-compiler.md), driven as TorchAir drives CANN's
# op_compiler: a dump directory of op JSONs, `op_compiler` by its bare name on PATH, every .run
# of the result directory executed with no arguments, uninstall.sh found by TorchAir's glob
# (torchair_flow.py). The real compiler is standin_op_compiler.py, which records each call;
# CANN's runtime is the opbase-logic reader ($OPBASE_READ).
load helpers

HERE=$BATS_TEST_DIRNAME

setup_file() {
    : "${OP_COMPILER:?OP_COMPILER must point to skforge-op-compiler}"
}

# A host: the front end first on PATH (a link named op_compiler, as in lib/skforge/masquerade/),
# the stand-in after it, a toolkit of Version $1 (default 9.0.0) and a local store.
host() {
    mkdir -p m real toolkit/latest
    ln -sf "$OP_COMPILER" m/op_compiler
    ln -sf "$HERE/standin_op_compiler.py" real/op_compiler
    printf 'Version=%s\n' "${1:-9.0.0}" >toolkit/latest/version.info
    export PATH="$W/m:$W/real:$PATH" ASCEND_HOME_PATH="$W/toolkit/latest"
    export SKFORGE_OP_STORE="$W/store" STANDIN_LOG="$W/calls" STANDIN_MARK="$W/EXECUTED"
    unset SKFORGE_CACHE_DIR SKFORGE_OP_COMPILER SKFORGE_REMOTE_OP_MAP
}

# dump DIR OP DTYPE SHAPE...: one op JSON per shape (as aclopStartDumpArgs writes them) in DIR.
dump() {
    local dir=$1 op=$2 dtype=$3 n=0
    shift 3
    mkdir -p "$dir"
    for shape in "$@"; do
        n=$((n + 1))
        printf '{"op_type": "%s", "inputs": [{"name": "x", "index": 0, "dtype": "%s", "format": "ND", "shape": [%s], "param_type": "required"}], "outputs": [{"name": "y", "index": 0, "dtype": "%s", "format": "ND", "shape": [%s]}], "attrs": [], "deterministic": "false", "impl_mode": ""}\n' \
            "$op" "$dtype" "$shape" "$dtype" "$shape" >"$dir/${op}_${dtype}_ND_${shape//,/_}_$n.json"
    done
}

calls() { [ -f "$W/calls" ] && wc -l <"$W/calls" || echo 0; }
# called N: the real compiler was called N times or more (for wait_until).
called() { [ "$(calls)" -ge "$1" ]; }

# selects DIR: the reader's calls for every op JSON of DIR (ge codes: float 0, float16 1).
selects() {
    python3 - "$1" >sel.txt <<'PY'
import json, sys, pathlib
codes = {"float": 0, "float16": 1}
for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json")):
    op = json.loads(p.read_text())
    ts = [f"{codes[t['dtype']]},2,{'x'.join(map(str, t['shape']))}" for t in op["inputs"] + op["outputs"]]
    print(op["op_type"], *ts)
PY
}

# torchair_finds_all RESULT DUMP N: TorchAir's flow installs every .run of RESULT (executed with
# no arguments, uninstall.sh found by its glob), the reader selects a kernel for each of the N
# calls of DUMP's op JSONs on every path, then TorchAir's exit uninstalls them.
torchair_finds_all() {
    python3 "$HERE/torchair_flow.py" install "$1" state
    selects "$2"
    run "$OPBASE_READ" "$ASCEND_HOME_PATH/opp" ascend910b --select sel.txt
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c 'aclnn=static_kernel_' <<<"$output")" -eq "$3" ]
    python3 "$HERE/torchair_flow.py" uninstall state
}

@test "a miss compiles once and stores; another working directory with the same ops gets the same package without compiling, and TorchAir's flow installs it" {
    host
    dump d1 Add float16 8,16 4,4
    dump d1 Relu float 4,32
    run op_compiler -p d1 -v Ascend910B1 -j 4 -o r1
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"op_compiler: generated "* ]] # the real compiler's own message reaches the caller
    [ "$(calls)" -eq 1 ]
    run1=$(ls r1/*.run)
    [ "$(ls r1 | wc -l)" -eq 1 ]
    "$SKC" inspect "$run1" --verify >/dev/null
    # TorchAir's second process: its own dump directory, other names, other formatting.
    mkdir d2
    for f in d1/*.json; do python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), indent=2, sort_keys=True))' "$f" >"d2/copy_$(basename "$f")"; done
    run op_compiler -p d2 -v Ascend910B1 -j 8 -l info -o r2
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"hit in the local store"* ]]
    [ "$(calls)" -eq 1 ]
    cmp "$run1" "r2/$(basename "$run1")"
    torchair_finds_all r2 d1 3
    [ -z "$(ls "$ASCEND_HOME_PATH/opp/static_kernel/ai_core" 2>/dev/null | grep static_kernel_)" ]
    [ ! -e "$W/EXECUTED" ]
}

@test "what changes the output changes the key: the SoC, the SuperKernel switch, an op, the toolkit's version, the real compiler" {
    host
    dump d Add float16 8,16
    op_compiler -p d -v Ascend910B1 -o r 2>/dev/null
    op_compiler -p d -v Ascend910B1 -j 2 -l debug -o r 2>/dev/null
    [ "$(calls)" -eq 1 ]
    op_compiler -p d -v Ascend910B2 -o r 2>/dev/null
    [ "$(calls)" -eq 2 ]
    op_compiler -p d -v Ascend910B1 --enable_super_kernel -o r 2>/dev/null
    [ "$(calls)" -eq 3 ]
    dump d Add float16 16,16
    op_compiler -p d -v Ascend910B1 -o r 2>/dev/null
    [ "$(calls)" -eq 4 ]
    printf 'Version=9.1.0\n' >toolkit/latest/version.info
    op_compiler -p d -v Ascend910B1 -o r 2>/dev/null
    [ "$(calls)" -eq 5 ]
    cp "$HERE/standin_op_compiler.py" real/op_compiler.new && echo '# another build' >>real/op_compiler.new
    chmod +x real/op_compiler.new && mv -f real/op_compiler.new real/op_compiler
    op_compiler -p d -v Ascend910B1 -o r 2>/dev/null
    [ "$(calls)" -eq 6 ]
    op_compiler -p d -v Ascend910B1 -o r 2>/dev/null
    [ "$(calls)" -eq 6 ]
}

@test "a failed compile passes the real compiler's status and messages on, stores nothing and leaves -o as the compiler left it" {
    host
    dump d Add float16 8,16
    STANDIN_FAIL=3 run op_compiler -p d -v Ascend910B1 -o r
    echo "$output"
    [ "$status" -eq 3 ]
    [[ "$output" == *"op_compiler: error: compile failed (stand-in)"* ]]
    # What the compiler wrote before failing (the stand-in: one .partial file), nothing else.
    [ "$(ls -A r)" = "$(cd r && ls *.partial)" ]
    run "$SKC" cache stats --cache-dir store --json
    [[ "$output" == *'"entries": 0'* ]]
    # The next request compiles (nothing was stored) and succeeds.
    op_compiler -p d -v Ascend910B1 -o r 2>/dev/null
    [ "$(calls)" -eq 2 ]
    [ "$(ls r/*.run | wc -l)" -eq 1 ]
}

@test "a damaged store entry is refused with its key and path, and compiled again" {
    host
    dump d Add float16 8,16
    op_compiler -p d -v Ascend910B1 -o r1 2>/dev/null
    entry=$(find store -name '*.run')
    flip_byte "$entry" 5000
    run op_compiler -p d -v Ascend910B1 -o r2
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARNING: local store: "*"; compiling again"* ]]
    [ "$(calls)" -eq 2 ]
    "$SKC" inspect r2/*.run --verify >/dev/null
}

@test "a second host sharing the store gets the package from it without compiling" {
    host
    export SKFORGE_CACHE_DIR="$W/shared"
    dump d Add float16 8,16
    op_compiler -p d -v Ascend910B1 -o r1 2>/dev/null
    [ "$(calls)" -eq 1 ]
    SKFORGE_OP_STORE="$W/store2" run op_compiler -p d -v Ascend910B1 -o r2
    echo "$output"
    [[ "$output" == *"hit in the shared store"* ]]
    [ "$(calls)" -eq 1 ]
    cmp r1/*.run r2/*.run
    # ... and keeps a copy in its own local store.
    [ -n "$(find store2 -name '*.run')" ]
}

@test "two processes missing the same key at once compile it once" {
    host
    dump d Add float16 8,16 2,2 4,4
    # The first compiles until the test opens the gate ($W/go).
    STANDIN_HOLD="$W/go" op_compiler -p d -v Ascend910B1 -o r1 2>e1 &
    a=$!
    wait_until called 1
    [ "$(calls)" -eq 1 ]
    STANDIN_HOLD="$W/go" op_compiler -p d -v Ascend910B1 -o r2 2>e2 &
    b=$!
    # The second says it waits for the first (bounded), then the gate opens.
    wait_until grep -q "waiting for another op_compiler" e2
    touch go
    wait "$a"
    wait "$b"
    cat e1 e2
    grep -q "waiting for another op_compiler that compiles the same operators" e2
    [ "$(calls)" -eq 1 ]
    cmp r1/*.run r2/*.run
}

@test "debug, tuning, --count and unknown options go to the real compiler as they are" {
    host
    dump d Add float16 8,16
    run op_compiler --count -p d
    [ "$status" -eq 0 ]
    [ "$output" = 1 ]
    run op_compiler -p d -v Ascend910B1 --no_such_option
    [ "$status" -eq 1 ]
    [[ "$output" == *"unknown option '--no_such_option'"* ]]
    op_compiler -p d -v Ascend910B1 -m tune -o r 2>/dev/null
    op_compiler -p d -v Ascend910B1 -m tune -o r 2>/dev/null
    [ "$(calls)" -eq 3 ] # --count and twice -m tune (the stand-in refused the unknown option first)
    # Exactly the caller's words.
    [ "$(sed -n 1p calls)" = '{"argv": ["--count", "-p", "d"], "ops": ["Add_float16_ND_8_16_1.json"]}' ]
    [ -z "$(find store -name '*.run' 2>/dev/null)" ]
}

@test "the front end never runs itself: no real compiler, a wrapper that calls op_compiler again" {
    host
    dump d Add float16 8,16
    PATH="$W/m:/usr/bin:/bin" run op_compiler -p d -v Ascend910B1 -o r
    [ "$status" -eq 1 ]
    [[ "$output" == *"no real op_compiler on PATH after this front end"* ]]
    mkdir wrap
    printf '#!/bin/sh\nexec op_compiler "$@"\n' >wrap/op_compiler
    chmod +x wrap/op_compiler
    PATH="$W/m:$W/wrap:$W/real:/usr/bin:/bin" run op_compiler -p d -v Ascend910B1 -o r
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"a loop through PATH"* ]]
    SKFORGE_OP_COMPILER="$W/real/op_compiler" PATH="$W/m:/usr/bin:/bin" op_compiler -p d -v Ascend910B1 -o r 2>/dev/null
    [ "$(calls)" -eq 1 ]
}

# remote: a WebDAV directory served by nginx on 127.0.0.1 (dav_server.sh), its URL in $REMOTE;
# stopped by teardown.
remote() {
    # nginx's workers run as nobody: they must reach the files under the scratch directory.
    chmod 0711 "$W"
    REMOTE=$("$HERE/dav_server.sh" "$W/ngx")
}

teardown() {
    [ -f "$W/ngx/nginx.pid" ] && kill "$(cat "$W/ngx/nginx.pid")" 2>/dev/null
    cd /
    rm -rf "$W"
}

@test "hosts sharing one remote store run the real compiler once: the others fetch, check and keep it" {
    host
    remote
    export SKFORGE_REMOTE_STORE=$REMOTE
    dump d Add float16 8,16 4,4
    run op_compiler -p d -v Ascend910B1 -o r1
    echo "$output"
    [[ "$output" == *"stored in the remote store $REMOTE"* ]]
    [ "$(calls)" -eq 1 ]
    [ -n "$(find ngx/files -name '*.run')" ]
    [ ! -e ngx/files/ops ] # no remote op map unless SKFORGE_REMOTE_OP_MAP=on
    for h in 2 3; do
        SKFORGE_OP_STORE="$W/store$h" run op_compiler -p d -v Ascend910B1 -o r$h
        echo "$output"
        [ "$status" -eq 0 ]
        [[ "$output" == *"hit in the remote store $REMOTE"* ]]
        cmp r1/*.run r$h/*.run
        [ -n "$(find store$h -name '*.run')" ]
    done
    [ "$(calls)" -eq 1 ]
    # Host 3 again: from its own local store, no request to the server.
    before=$(wc -l <ngx/access.log)
    SKFORGE_OP_STORE="$W/store3" op_compiler -p d -v Ascend910B1 -o r3 2>/dev/null
    [ "$(wc -l <ngx/access.log)" -eq "$before" ]
}

@test "a second host with an empty local store gets a partial hit through the remote op map; a line that is not a key is a miss" {
    host
    remote
    export SKFORGE_REMOTE_STORE=$REMOTE SKFORGE_REMOTE_OP_MAP=on
    dump d1 Add float16 8,16 4,4
    op_compiler -p d1 -v Ascend910B1 -o r1 2>/dev/null
    [ "$(find ngx/files/ops -type f | wc -l)" -eq 2 ]
    mkdir d2
    cp d1/Add_float16_ND_8_16_1.json d2/
    dump d2 Add float16 2,2
    SKFORGE_OP_STORE="$W/store2" run op_compiler -p d2 -v Ascend910B1 -o r2
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"hit in the remote store $REMOTE"* ]]
    [[ "$output" == *"partial hit: 1 of 2 op JSONs from the store, 1 compiled"* ]]
    [ "$(sed -n 2p calls | python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"])')" = "['Add_float16_ND_2_2_1.json']" ]
    "$SKC" inspect r2/*.run --verify >/dev/null
    torchair_finds_all r2 d2 2
    # A third host, the same request: the same bytes (a whole hit in the remote store).
    SKFORGE_OP_STORE="$W/store3" op_compiler -p d2 -v Ascend910B1 -o r3 2>/dev/null
    cmp r2/*.run r3/*.run
    # Every remote op map line replaced by text that is not a key: a fourth host compiles.
    for f in $(find ngx/files/ops -type f); do echo "not a key" >"$f"; done
    dump d4 Add float16 8,16 6,6
    SKFORGE_OP_STORE="$W/store4" run op_compiler -p d4 -v Ascend910B1 -o r4
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" != *"partial hit"* ]]
    [ "$(tail -1 calls | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["ops"]))')" -eq 2 ]
}

@test "a damaged or truncated remote entry is refused with its URL and compiled again" {
    host
    remote
    export SKFORGE_REMOTE_STORE=$REMOTE
    dump d Add float16 8,16
    op_compiler -p d -v Ascend910B1 -o r1 2>/dev/null
    entry=$(find ngx/files -name '*.run')
    flip_byte "$entry" 3000
    SKFORGE_OP_STORE="$W/store2" run op_compiler -p d -v Ascend910B1 -o r2
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARNING: remote entry $REMOTE/"*".run refused: SHA-256 "*"; compiling again"* ]]
    [ "$(calls)" -eq 2 ]
    truncate -s 1000 "$entry"
    SKFORGE_OP_STORE="$W/store3" run op_compiler -p d -v Ascend910B1 -o r3
    echo "$output"
    [[ "$output" == *"WARNING: remote entry $REMOTE/"*".run refused: "*"; compiling again"* ]]
    [ "$(calls)" -eq 3 ]
    "$SKC" inspect r3/*.run --verify >/dev/null
}

@test "an unreachable remote store costs one warning; the local stores carry on" {
    host
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    export SKFORGE_REMOTE_STORE=http://127.0.0.1:$port
    dump d Add float16 8,16
    run op_compiler -p d -v Ascend910B1 -o r1
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$(grep -c "remote store http://127.0.0.1:$port not reached" <<<"$output")" -eq 1 ]
    run op_compiler -p d -v Ascend910B1 -o r2
    [ "$status" -eq 0 ]
    [[ "$output" == *"hit in the local store"* ]]
    [ "$(calls)" -eq 1 ]
    SKFORGE_REMOTE_STORE=ftp://x run op_compiler -p d -v Ascend910B1 -o r3
    [ "$status" -eq 1 ]
    [[ "$output" == *"remote store 'ftp://x': not an http:// or https:// URL"* ]]
}

@test "a partial hit compiles only the new op JSONs and installs one package that holds every kernel" {
    host
    dump d1 Add float16 8,16 4,4
    dump d1 Relu float 4,32
    op_compiler -p d1 -v Ascend910B1 -o r1 2>/dev/null
    [ "$(calls)" -eq 1 ]
    # The model gains one shape and loses one: Add 4,4 is gone, Add 2,2 is new.
    mkdir d2
    cp d1/Add_float16_ND_8_16_1.json d1/Relu_float_ND_4_32_1.json d2/
    dump d2 Add float16 2,2
    run op_compiler -p d2 -v Ascend910B1 -j 4 -o r2
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"partial hit: 2 of 3 op JSONs from the store, 1 compiled"* ]]
    [ "$(calls)" -eq 2 ]
    [ "$(sed -n 2p calls | python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"])')" = "['Add_float16_ND_2_2_1.json']" ]
    [ "$(ls r2/*.run | wc -l)" -eq 1 ]
    "$SKC" inspect r2/*.run --verify >/dev/null
    torchair_finds_all r2 d2 3
    # The same request again is a whole hit, and so is the new op JSON alone.
    op_compiler -p d2 -v Ascend910B1 -o r3 2>/dev/null
    cmp r2/*.run r3/*.run
    mkdir d3 && cp d2/Add_float16_ND_2_2_1.json d3/
    op_compiler -p d3 -v Ascend910B1 -o r4 2>/dev/null
    [ "$(calls)" -eq 2 ]
    # A failed compile of the new op JSONs passes its status on and stores nothing for them.
    dump d4 Add float16 8,16 6,6
    STANDIN_FAIL=4 run op_compiler -p d4 -v Ascend910B1 -o r5
    [ "$status" -eq 4 ]
    [ "$(ls -A r5)" = "$(cd r5 && ls *.partial)" ]
    [ -z "$(find store -newer r5 -name '*.run')" ]
}

@test "a partial hit packs the stored kernels from the op files, each checked: damaged or missing ones are taken again from the package, with the same bytes" {
    host
    dump d1 Add float16 8,16 4,4
    op_compiler -p d1 -v Ascend910B1 -o r1 2>/dev/null
    # The stored package's files (two kernels, .o and .json, and the index), one after another,
    # under the package's key.
    key=$(basename "$(find store -name '*.run')" .run)
    [ "$(find store/op-files -type f)" = "store/op-files/${key:0:2}/$key" ]
    # Both kernel objects are in it (the stand-in's .o: 2,048 bytes each).
    [ "$(stat -c %s "store/op-files/${key:0:2}/$key")" -gt 4096 ]
    mkdir d2
    cp d1/Add_float16_ND_8_16_1.json d2/
    dump d2 Add float16 2,2
    cp -a store store2
    cp -a store store3
    op_compiler -p d2 -v Ascend910B1 -o r2 2>/dev/null
    [ "$(calls)" -eq 2 ]
    # The same request on a copy of the store whose op files are damaged: refused with the path
    # and the file, taken again from the stored package, and the package is the same, byte for
    # byte.
    bad=store2/op-files/${key:0:2}/$key
    flip_byte "$bad" 100
    SKFORGE_OP_STORE="$W/store2" run op_compiler -p d2 -v Ascend910B1 -o r3
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"op files of package ${key:0:16} ($W/$bad) are damaged: the bytes of '"*"' do not have its SHA-256; removed, taken again from the stored package"* ]]
    [[ "$output" == *"partial hit: 1 of 2 op JSONs from the store, 1 compiled"* ]]
    cmp "$bad" "store/op-files/${key:0:2}/$key"
    cmp r2/*.run r3/*.run
    # A store without the op store (written before it existed): the same bytes.
    rm -rf store3/op-files
    SKFORGE_OP_STORE="$W/store3" op_compiler -p d2 -v Ascend910B1 -o r4 2>/dev/null
    cmp r2/*.run r4/*.run
    [ "$(calls)" -eq 4 ]
    torchair_finds_all r3 d2 2
}

@test "skc cache clean removes the op map, the op files and every key lock no running op_compiler holds, and says so" {
    host
    dump d1 Add float16 8,16 4,4
    op_compiler -p d1 -v Ascend910B1 -o r1 2>/dev/null
    [ "$(find store/ops store/op-files store/op-locks -type f | wc -l)" -eq 4 ] # 2 + 1 + 1
    # A second op_compiler compiles, holding its key's lock, until the test opens the gate.
    dump d2 Relu float 4,32
    STANDIN_HOLD="$W/go" op_compiler -p d2 -v Ascend910B1 -o r2 2>e2 &
    a=$!
    wait_until called 2
    [ "$(calls)" -eq 2 ]
    held=$(ls store/op-locks | grep -v "$(ls store/*/*.run | xargs -n1 basename | cut -c1-64)")
    run "$SKC" cache clean --cache-dir store
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"op_compiler: removed 2 op map lines, 1 op files ("*") and 1 key locks; 1 key locks in use kept"* ]]
    [ -z "$(find store/ops store/op-files -type f)" ]
    [ "$(ls store/op-locks)" = "$held" ]
    touch go
    wait "$a"
    # The held lock's compile goes on and stores; a clean of old entries only keeps what the
    # packages left need (all of it) and frees the lock now that nobody holds it.
    [ "$(find store/ops -type f | wc -l)" -eq 1 ]
    run "$SKC" cache clean --cache-dir store --older-than 1 --json
    echo "$output"
    [[ "$output" == *'"op_map_removed": 0'* ]]
    [[ "$output" == *'"op_files_removed": 0'* ]]
    [[ "$output" == *'"op_locks_removed": 1'* ]]
    [[ "$output" == *'"op_locks_in_use": 0'* ]]
    [ -z "$(ls store/op-locks)" ]
    [ "$(find store/ops -type f | wc -l)" -eq 1 ]
    # The op store still serves: the op JSON alone, with a new shape, is a partial hit.
    dump d3 Relu float 4,32 2,8
    run op_compiler -p d3 -v Ascend910B1 -o r3
    [[ "$output" == *"partial hit: 1 of 2 op JSONs from the store, 1 compiled"* ]]
}

@test "with trusted keys, a stored package not signed by one of them is not used; a signed one is" {
    host
    "$SKC" keygen -o k >/dev/null
    "$SKC" keygen -o other >/dev/null
    dump d Add float16 8,16
    op_compiler -p d -v Ascend910B1 -o r1 2>/dev/null # unsigned, stored
    SKFORGE_TRUSTED_KEYS="$W/k.pub.pem" SKFORGE_SIGN_KEY="$W/k.pem" run op_compiler -p d -v Ascend910B1 -o r2
    echo "$output"
    [[ "$output" == *"the entry for key "*" is not used: its signature: unsigned (SKFORGE_TRUSTED_KEYS)"* ]]
    [ "$(calls)" -eq 2 ]
    # Signed by a key that is not trusted: not used either.
    SKFORGE_OP_STORE="$W/s2" SKFORGE_SIGN_KEY="$W/other.pem" op_compiler -p d -v Ascend910B1 -o r3 2>/dev/null
    SKFORGE_OP_STORE="$W/s2" SKFORGE_TRUSTED_KEYS="$W/k.pub.pem" run op_compiler -p d -v Ascend910B1 -o r4
    [[ "$output" == *"is not used: its signature: signed by an untrusted key"* ]]
    [ "$(calls)" -eq 4 ]
    # Signed by the trusted key: used.
    SKFORGE_OP_STORE="$W/s3" SKFORGE_SIGN_KEY="$W/k.pem" op_compiler -p d -v Ascend910B1 -o r5 2>/dev/null
    SKFORGE_OP_STORE="$W/s3" SKFORGE_TRUSTED_KEYS="$W/other.pub.pem:$W/k.pub.pem" run op_compiler -p d -v Ascend910B1 -o r6
    echo "$output"
    [[ "$output" == *"hit in the local store"* ]]
    [ "$(calls)" -eq 5 ]
    "$SKC" inspect r6/*.run --verify --trusted-key k.pub.pem >/dev/null
}

@test "a store's max_size counts each package's op files, and an evicted package takes its op files with it" {
    host
    dump d1 Add float16 8,16
    op_compiler -p d1 -v Ascend910B1 -o r1 2>/dev/null
    k1=$(basename store/*/*.run .run)
    files1="store/op-files/${k1:0:2}/$k1"
    [ -f "$files1" ]
    run_size=$(stat -c %s "store/${k1:0:2}/$k1.run")
    op_size=$(stat -c %s "$files1")
    # stats counts what the entry takes on disk: its .run and its op files
    run "$SKC" cache stats --cache-dir store --json
    [[ "$output" == *"\"total_size\": $((run_size + op_size))"* ]]
    # room for one entry's .run and op files, not two: the second miss evicts the first, whole
    printf '{"max_size": %d}\n' $((run_size + op_size + 200)) >store/config.json
    dump d2 Relu float 4,32
    op_compiler -p d2 -v Ascend910B1 -o r2 2>/dev/null
    [ ! -e "store/${k1:0:2}/$k1.run" ]
    [ ! -e "$files1" ]
    [ "$(find store/op-files -type f | wc -l)" -eq 1 ]
}
