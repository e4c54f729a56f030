#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The shared compile cache (skc compile --cache-dir, SKFORGE_CACHE_DIR, skc cache): concurrent
# compiles sharing one cache, hits, damaged entries, eviction, crashes and the cache commands.
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"

# mkgraph: g/graph.yaml, one host Add kernel (the smallest host build there is).
mkgraph() {
    mkdir -p g/k
    cp "$EX/host_kernels/add.json" "$EX/host_kernels/add.cpp" g/k/
    cat >g/graph.yaml <<'EOF'
name: cachedemo
inputs: [{name: x, shape: [64], dtype: float32}]
ops:
  - {name: add, type: Add, kernel: {json_path: k/add.json}, inputs: [x, x],
     outputs: [{name: y, shape: [64], dtype: float32}]}
EOF
}

# compile OUTDIR [options...]: compiles g/graph.yaml for the host into OUTDIR.
compile() {
    local out=$1
    shift
    "$SKC" compile g/graph.yaml --npu-arch host -o "$out" --jobs 1 "$@"
}

# stat_of DIR FIELD: a field of `skc cache stats --json`.
stat_of() {
    "$SKC" cache stats --cache-dir "$1" --json |
        python3 -c 'import json,sys; v=json.load(sys.stdin)[sys.argv[1]]; print("null" if v is None else v)' "$2"
}

# entry_run DIR: the one entry's .run in the cache at DIR.
entry_run() {
    find "$1" -name '*.run' -not -name '.*'
}

# concurrently PREFIX N [options...]: N compiles at once into PREFIX1..PREFIXN, each writing
# PREFIXi.log and PREFIXi.rc.
concurrently() {
    local prefix=$1 n=$2 i
    shift 2
    for i in $(seq 1 "$n"); do
        (
            rc=0
            compile "$prefix$i" "$@" >"$prefix$i.log" 2>&1 || rc=$?
            echo "$rc" >"$prefix$i.rc"
        ) &
    done
    wait
}

@test "8 compiles at once share one cache: same bytes, one entry, then 8 hits" {
    mkgraph
    concurrently a 8 --cache-dir cache
    for i in $(seq 1 8); do
        [ "$(cat a$i.rc)" = 0 ] || { cat a$i.log; false; }
        cmp a1/cachedemo_host.run a$i/cachedemo_host.run
    done
    [ "$(stat_of cache entries)" = 1 ]
    cmp a1/cachedemo_host.run "$(entry_run cache)"
    run "$SKC" cache verify --cache-dir cache
    [ "$status" -eq 0 ]
    [[ "$output" == *"1 entries checked, 0 problem(s)"* ]]
    [ -z "$(find cache -name '.*')" ] # no temporary left behind
    local first_hits
    first_hits=$(stat_of cache hits)

    # Second round, fresh output directories, the cache named by the environment: all hits.
    SKFORGE_CACHE_DIR=$PWD/cache concurrently b 8
    for i in $(seq 1 8); do
        [ "$(cat b$i.rc)" = 0 ] || { cat b$i.log; false; }
        grep -q "cache hit: b$i/cachedemo_host.run from the shared cache" b$i.log
        cmp a1/cachedemo_host.run b$i/cachedemo_host.run
        grep -q "shared cache hit" b$i/cachedemo_host_compile_log/cachedemo_host_compile_succ.log
    done
    [ "$(stat_of cache hits)" -eq $((first_hits + 8)) ]
    [ "$(stat_of cache entries)" = 1 ]
}

@test "a damaged entry is found by verify, reported by compile, removed and rebuilt" {
    mkgraph
    compile a --cache-dir cache >/dev/null
    entry=$(entry_run cache)
    flip_byte "$entry" 200
    run "$SKC" cache verify --cache-dir cache
    [ "$status" -eq 1 ]
    [[ "$output" == *"$entry: SHA-256"* ]]
    run compile b --cache-dir cache
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARN: cache entry $entry is damaged (SHA-256"*"): removed; rebuilding"* ]]
    [[ "$output" == *"cache miss"* ]]
    cmp a/cachedemo_host.run b/cachedemo_host.run
    cmp a/cachedemo_host.run "$entry" # the rebuilt entry
    [ "$(stat_of cache corrupt_removed)" = 1 ]
    "$SKC" cache verify --cache-dir cache

    # verify --fix removes what is bad: here a .run cut short.
    truncate -s 1000 "$entry"
    run "$SKC" cache verify --cache-dir cache --fix --json
    [ "$status" -eq 0 ]
    [[ "$output" == *'"removed": true'* ]]
    [ "$(stat_of cache entries)" = 0 ]
    [ ! -e "$entry" ]
}

@test "--cache-dir wins over SKFORGE_CACHE_DIR; --no-cache uses neither" {
    mkgraph
    SKFORGE_CACHE_DIR=$PWD/envcache compile a --cache-dir optcache >/dev/null
    [ "$(stat_of optcache entries)" = 1 ]
    [ ! -e envcache ]
    SKFORGE_CACHE_DIR=$PWD/envcache compile b --no-cache >/dev/null
    [ ! -e envcache ]
    SKFORGE_CACHE_DIR=$PWD/envcache compile c >/dev/null
    [ "$(stat_of envcache entries)" = 1 ]
}

@test "max_size from config.json evicts the least recently used entry" {
    mkgraph
    compile a --cache-dir cache --name first >/dev/null
    size=$(stat -c %s a/first.run)
    printf '{"max_size": %d}\n' $((size * 3 / 2)) >cache/config.json
    [ "$(stat_of cache max_size)" = $((size * 3 / 2)) ]
    sleep 0.01
    run compile b --cache-dir cache --name second
    [[ "$output" == *"evicted 1 least recently used entries"* ]]
    [ "$(stat_of cache entries)" = 1 ]
    run compile c --cache-dir cache --name second
    [[ "$output" == *"cache hit"* ]]
    run compile d --cache-dir cache --name first
    [[ "$output" == *"cache miss"* ]]
    # --cache-max-size overrides the file for one command.
    run "$SKC" cache clean --cache-dir cache --to-max-size --cache-max-size 1K
    [ "$status" -eq 0 ]
    [[ "$output" == "removed 1 entries"* ]]
    [ "$(stat_of cache entries)" = 0 ]
}

@test "skc cache clean removes all, or what is older than asked" {
    mkgraph
    compile a --cache-dir cache --name one >/dev/null
    compile a --cache-dir cache --name two >/dev/null
    run "$SKC" cache clean --cache-dir cache --older-than 1
    [[ "$output" == "removed 0 entries"* ]]
    run "$SKC" cache clean --cache-dir cache --older-than 0 --json
    [[ "$output" == *'"removed": 2'* ]]
    compile b --cache-dir cache --name one >/dev/null
    run "$SKC" cache clean --cache-dir cache
    [[ "$output" == "removed 1 entries"* ]]
    [ "$(stat_of cache entries)" = 0 ]
}

@test "a compile killed while storing leaves no entry, and the next one completes it" {
    mkgraph
    for step in 1 2; do
        rm -rf cache a
        run env SKFORGE_FAULT_AT=$step "$SKC" compile g/graph.yaml --npu-arch host -o a --cache-dir cache
        [ "$status" -eq 99 ]
        [[ "$output" == *"fault injected at step $step: cache insert"* ]]
        [ "$(stat_of cache entries)" = 0 ]
        run compile b$step --cache-dir cache
        [[ "$output" == *"cache miss"* ]]
        [ "$(stat_of cache entries)" = 1 ]
        "$SKC" cache verify --cache-dir cache
    done
}

@test "skc cache: usage errors exit 2, a missing directory is named, --help on each" {
    run env -u SKFORGE_CACHE_DIR "$SKC" cache stats
    [ "$status" -eq 2 ]
    [[ "$output" == *"give --cache-dir DIR or set SKFORGE_CACHE_DIR"* ]]
    run "$SKC" cache stats --cache-dir nowhere
    [ "$status" -eq 1 ]
    [[ "$output" == *"nowhere"* ]]
    run "$SKC" cache frobnicate
    [ "$status" -eq 2 ]
    run "$SKC" cache
    [ "$status" -eq 2 ]
    for sub in stats clean verify; do
        run "$SKC" cache $sub --help
        [ "$status" -eq 0 ]
        [[ "$output" == *"Usage: skc cache $sub"* ]]
    done
    mkdir cache
    run "$SKC" cache clean --cache-dir cache --to-max-size
    [ "$status" -eq 2 ]
    [[ "$output" == *"no max_size"* ]]
    mkgraph
    run compile a --cache-max-size 10Q --cache-dir cache
    [ "$status" -eq 2 ]
}

@test "a shard replaced by a symbolic link is never written through: a warning, then a rebuild" {
    mkgraph
    compile a --cache-dir cache >/dev/null
    entry=$(entry_run cache)
    shard=$(dirname "$entry")
    rm -r "$shard"
    mkdir elsewhere
    ln -s "$W/elsewhere" "$shard"
    run compile b --cache-dir cache
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"WARN: "*"cache shard '$shard' is a symbolic link: skc does not follow or write through it"* ]]
    [ -z "$(ls -A elsewhere)" ] # nothing written where the link points
    cmp a/cachedemo_host.run b/cachedemo_host.run
    run "$SKC" cache verify --cache-dir cache
    [ "$status" -eq 1 ]
    [[ "$output" == *"$shard: not a directory (a symbolic link or a file where a shard belongs)"* ]]
    "$SKC" cache verify --cache-dir cache --fix >/dev/null
    [ ! -L "$shard" ] && [ -d elsewhere ] # the link is gone, its target stays
    compile c --cache-dir cache >/dev/null
    [ -z "$(ls -A elsewhere)" ]
    [ "$(stat_of cache entries)" = 1 ]
}

@test "FIFOs in the cache never block compile, stats or verify" {
    mkgraph
    compile a --cache-dir cache >/dev/null
    entry=$(entry_run cache)
    meta=${entry%.run}.json
    # An entry's metadata: a damaged entry, reported by verify, removed and rebuilt by compile.
    rm "$meta" && mkfifo "$meta"
    run timeout 120 "$SKC" cache verify --cache-dir cache
    [ "$status" -eq 1 ]
    [[ "$output" == *"$meta: cannot read '$meta': a FIFO, not a regular file"* ]]
    run timeout 120 "$SKC" compile g/graph.yaml --npu-arch host -o b --jobs 1 --cache-dir cache
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"cache entry $entry is damaged (cannot read '$meta': a FIFO"*"rebuilding"* ]]
    [ -f "$meta" ] && [ ! -p "$meta" ]
    # stats.json: a warning, the counters start afresh.
    rm cache/stats.json && mkfifo cache/stats.json
    run timeout 120 "$SKC" cache stats --cache-dir cache
    [ "$status" -eq 0 ]
    [[ "$output" == *"cache/stats.json': a FIFO, not a regular file: the cache's counters start afresh"* ]]
    [[ "$output" == *"entries          1"* ]]
    run timeout 120 "$SKC" compile g/graph.yaml --npu-arch host -o c --jobs 1 --cache-dir cache
    [ "$status" -eq 0 ]
    [[ "$output" == *"cache hit: c/cachedemo_host.run from the shared cache"* ]]
    # config.json: the cache is not used, the compile goes on; skc cache says why.
    mkfifo cache/config.json
    run timeout 120 "$SKC" compile g/graph.yaml --npu-arch host -o d --jobs 1 --cache-dir cache
    [ "$status" -eq 0 ]
    [[ "$output" == *"shared cache not used: cannot read '$W/cache/config.json': a FIFO"* ||
        "$output" == *"shared cache not used: cannot read 'cache/config.json': a FIFO"* ]]
    run timeout 120 "$SKC" cache stats --cache-dir cache
    [ "$status" -eq 1 ]
    [[ "$output" == *"config.json': a FIFO, not a regular file"* ]]
    # The lock: the cache is not used.
    rm cache/config.json cache/lock && mkfifo cache/lock
    run timeout 120 "$SKC" compile g/graph.yaml --npu-arch host -o e --jobs 1 --cache-dir cache
    [ "$status" -eq 0 ]
    [[ "$output" == *"cache lock '"*"cache/lock' is not a regular file"* ]]
}

@test "numbers out of range and values of the wrong type in cache files are warnings, never a failure" {
    mkgraph
    compile a --cache-dir cache >/dev/null
    entry=$(entry_run cache)
    meta=${entry%.run}.json
    python3 - "$meta" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
open(sys.argv[1], "w").write(json.dumps(m).replace('"size": %d' % m["size"], '"size": 1e30'))
PY
    grep -q '"size": 1e30' "$meta"
    run "$SKC" cache verify --cache-dir cache
    [ "$status" -eq 1 ]
    [[ "$output" == *"$meta: malformed metadata: \"size\" is missing or not an integer in range"* ]]
    [[ "$output" != *"the metadata says 0"* ]]
    # A counter that is not a number.
    echo '{"hits": "many", "misses": 2}' >cache/stats.json
    run "$SKC" cache stats --cache-dir cache --json
    [ "$status" -eq 0 ]
    [[ "$output" == *'stats.json: "hits" is "many", not a count: taken as 0'* ]]
    [[ "$output" == *'"hits": 0'* ]]
    run compile b --cache-dir cache
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"is damaged (malformed metadata"*"rebuilding"* ]]
    # The output directory's cache: an entry that is not an object, then a file that is not JSON.
    ocache=$(echo b/static_kernel_cache/skforge-*_host.json)
    echo '{"x": 5, "y": {"run": 1}}' >"$ocache"
    run compile b --cache-dir cache
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"entry \"x\" is not an object with \"run\" and \"sha256\" strings: dropped"* ]]
    [[ "$output" == *"cache hit: b/cachedemo_host.run from the shared cache"* ]]
    rm "$ocache" && mkfifo "$ocache"
    run timeout 120 "$SKC" compile g/graph.yaml --npu-arch host -o b --jobs 1 --cache-dir cache
    [ "$status" -eq 0 ]
    [[ "$output" == *"a FIFO, not a regular file: the output directory's cache starts afresh"* ]]
}
