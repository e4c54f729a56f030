#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# libskforge_runtime's clients on every example package, installed for the host target: a C
# program written against include/skforge/runtime.h alone and linked with -lskforge_runtime,
# the Python module skforge.runtime, and skrun --device. Needs SKFORGE_RUNTIME_LIB (the built
# libskforge_runtime.so).
bats_require_minimum_version 1.5.0
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"
EXAMPLES="moe_block tbe_cut two_stream decoder"

setup_file() {
    : "${SKFORGE_RUNTIME_LIB:?SKFORGE_RUNTIME_LIB must point to libskforge_runtime.so}"
    export ROOT="$BATS_FILE_TMPDIR/root" LIBDIR=$(dirname "$SKFORGE_RUNTIME_LIB")
    mkdir -p "$ROOT"
    cd "$BATS_FILE_TMPDIR"
    export SOURCE_DATE_EPOCH=1700000000 SKFORGE_NO_SKINSTALL=1
    for g in $EXAMPLES; do
        "$SKC" compile "$EX/$g/graph.yaml" --npu-arch host -o out --name "$g" -q >/dev/null
        "$SKINSTALL" install "out/$g.run" --install-path "$ROOT" --quiet
    done
    # The C client: C99, every warning an error, sanitized like the library it links.
    cc -std=c99 -Wall -Wextra -pedantic -Werror -fsanitize=address,undefined \
        -I"$SKFORGE_SOURCE_DIR/include" "$SKFORGE_SOURCE_DIR/test/runtime/skf_examples.c" \
        -L"$LIBDIR" -lskforge_runtime -Wl,-rpath,"$LIBDIR" -o skf_examples
}

# python_asan ARGS...: python3 with the module from the source tree and the built library; an
# ASan-built library needs the ASan runtime loaded first, and libstdc++ with it so that ASan can
# intercept C++ throws (leaks are Python's own, not checked).
python_asan() {
    local preload=
    if readelf -d "$SKFORGE_RUNTIME_LIB" | grep -q 'libasan'; then
        preload=$(cc -print-file-name=libasan.so):$(cc -print-file-name=libstdc++.so)
    fi
    PYTHONPATH="$SKFORGE_SOURCE_DIR/python" SKFORGE_RUNTIME_LIBRARY="$SKFORGE_RUNTIME_LIB" \
        LD_PRELOAD="$preload" ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" python3 "$@"
}

@test "runtime: the C client runs every example fused and op by op, bitwise equal, each SuperKernel alone in one launch" {
    run "$BATS_FILE_TMPDIR/skf_examples" "$ROOT" $EXAMPLES
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == "libskforge_runtime 0.1.0 (1000)" ]]
    [[ "$output" == *"moe_block: host:"*", 8 operators, 2 SuperKernels: fused 5 launches, op by op 8 launches, 0 of 7 tensors differ"* ]]
    for g in $EXAMPLES; do
        grep -q "^$g: host:.* 0 of [0-9]* tensors differ" <<<"$output" || { echo "no line for $g"; false; }
    done
}

@test "runtime: the library exports only the skf_ functions, under a versioned soname" {
    readelf -d "$SKFORGE_RUNTIME_LIB" | grep -q 'SONAME.*\[libskforge_runtime.so.0\]'
    nm -D --defined-only "$SKFORGE_RUNTIME_LIB" | awk '$2 ~ /[TDBW]/ {print $3}' | sed 's/@.*//' |
        sort -u >exported
    ! grep -v '^skf_' exported
    for f in skf_open skf_last_error skf_tensor_count skf_tensor_info_at skf_bind skf_run \
        skf_run_unfused skf_segment_count skf_segment_name skf_run_segment skf_close skf_version; do
        grep -qx "$f" exported || { echo "missing: $f"; false; }
    done
    # What was added after the first interface has a symbol version of its own.
    objdump -T "$SKFORGE_RUNTIME_LIB" | awk '$NF ~ /^skf_/ {print $(NF-1), $NF}' >versions
    for f in skf_device_malloc skf_device_free skf_copy_to_device skf_copy_to_host; do
        grep -qx "SKFORGE_RUNTIME_0.1 $f" versions || { echo "not at 0.1: $f"; false; }
    done
    grep -qx "SKFORGE_RUNTIME_0 skf_open" versions
}

@test "runtime: skforge.runtime runs every example from Python: bytearray, address and data_ptr() bindings" {
    run python_asan "$SKFORGE_SOURCE_DIR/test/python/run_examples.py" "$ROOT" $EXAMPLES
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"moe_block: host:"*"fused 5 launches, op by op 8 launches, 7 tensors compared"* ]]
    [ "$(grep -c 'tensors compared' <<<"$output")" -eq 4 ]
}

@test "runtime: skforge.runtime's device memory on the host: bound and run like a buffer, the same bytes back" {
    run python_asan - "$ROOT" <<'EOF'
import sys
import skforge.runtime as skr
with skr.open(sys.argv[1], "moe_block", device="host:2") as pkg:
    host, dev = {}, {}
    for t in pkg.tensors:
        host[t.name] = bytearray(t.nbytes)
        dev[t.name] = pkg.malloc(t.nbytes)
        assert pkg.copy_to_host(dev[t.name], t.nbytes) == bytes(t.nbytes)
        if t.role == "input":
            host[t.name][:] = bytes((i * 7 + len(t.name)) % 251 for i in range(t.nbytes))
            pkg.copy_to_device(dev[t.name], host[t.name])
    for t in pkg.tensors:
        pkg.bind(t.name, host[t.name])
    pkg.run()
    want = {n: bytes(b) for n, b in host.items()}
    for t in pkg.tensors:
        pkg.bind(t.name, dev[t.name])
    pkg.run()
    got = {t.name: pkg.copy_to_host(dev[t.name], t.nbytes) for t in pkg.tensors}
    assert got == want, [n for n in got if got[n] != want[n]]
    name = pkg.tensors[0].name
    pkg.bind(name, None)
    pkg.free(dev.pop(name))
    try:
        pkg.free(12345)
        raise SystemExit("a foreign pointer was freed")
    except skr.Error as e:
        assert e.code == -1, e
print("host device memory ok,", len(got), "tensors")
EOF
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"host device memory ok, "* ]]
}

# crafted_host EDIT: two_stream's installed host package with its host/program.json changed by
# the Python statement EDIT (on `p`, the program), packed again and installed under a root of
# its own (its manifest is right, so skf_open checks it like any package). Prints that root.
crafted_host() {
    local dir="$BATS_TEST_TMPDIR/crafted" root="$BATS_TEST_TMPDIR/croot"
    rm -rf "$dir" "$root" "$BATS_TEST_TMPDIR/crafted.run"
    mkdir -p "$root"
    cp -r "$ROOT/opp/static_kernel/ai_core/two_stream" "$dir"
    rm -f "$dir/install.sh" "$dir/uninstall.sh" "$dir/manifest.json" "$dir/version.info" \
        "$dir/.skforge-installed.json"
    python3 - "$dir/host/program.json" "$1" <<'EOF'
import json, sys
path, edit = sys.argv[1], sys.argv[2]
p = json.load(open(path))
exec(edit)
json.dump(p, open(path, "w"))
EOF
    "$SKC" pack "$dir" -o "$BATS_TEST_TMPDIR/crafted.run" --package-version 1 --name two_stream \
        --npu-arch host -q >/dev/null
    "$SKINSTALL" install "$BATS_TEST_TMPDIR/crafted.run" --install-path "$root" --quiet
    echo "$root"
}

@test "runtime: a crafted host program is refused at open, naming the field, before any of it runs" {
    # The first opened and then read operator 99 of 4 (describe), the others wrote a pointer
    # outside the parameter block or wrapped its size.
    local cases=(
        'p["segments"][0]["ops"].append(99)'
        'segments[0].ops[4]: 99 is out of range (4 operators)'
        'p["segments"][0]["parameters"][1]["param_offset"] = 2**63 - 4'
        'segments[0].parameters[1].param_offset: 9223372036854775804 is not an integer from 0 to 40'
        'p["segments"][0]["param_block_size"] = 2**63 - 1'
        'segments[0].param_block_size: 9223372036854775807 bytes, more than memory can hold'
        'p["segments"][0]["sync_slots"] = 2**32 - 1'
        'segments[0].sync_slots: 4294967295 is not an integer from 0 to 65536'
        'p["ops"][1]["segment"] = 7'
        'ops[1].segment: 7 is out of range (1 segments; -1: none)'
    )
    local i root
    for ((i = 0; i < ${#cases[@]}; i += 2)); do
        root=$(crafted_host "${cases[i]}")
        run python_asan - "$root" <<'EOF'
import sys
import skforge.runtime as skr
try:
    skr.open(sys.argv[1], "two_stream", device="host:1")
    print("opened")
except skr.Error as e:
    print(e.code, e)
EOF
        echo "${cases[i]}: $output"
        [ "$status" -eq 0 ]
        [[ "$output" == "-4 "*"/two_stream/host/program.json: ${cases[i + 1]}" ]]
    done
}

@test "runtime: skforge.runtime's malloc of 2**64 - 8 bytes is refused, not rounded to 64" {
    run python_asan - "$ROOT" <<'EOF'
import sys
import skforge.runtime as skr
with skr.open(sys.argv[1], "moe_block", device="host:1") as pkg:
    for n in (2**64 - 8, 2**64 - 1):
        try:
            pkg.malloc(n)
            raise SystemExit("malloc(%d) returned an address" % n)
        except skr.Error as e:
            assert e.code == -8, e
            assert str(e) == "skf_device_malloc: out of memory for %d bytes" % n, e
    p = pkg.malloc(16)
    try:
        pkg.copy_to_device(p, bytes(17))
        raise SystemExit("17 bytes were copied into a block of 16")
    except skr.Error as e:
        assert e.code == -1 and "would run past its end" in str(e), e
print("refused")
EOF
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[-1]}" = refused ]
}

@test "runtime: skrun --device: host by default, bad strings are usage errors, npu without CANN names set_env.sh" {
    run "$SKRUN" moe_block --install-path "$ROOT" --device host --cores 2 --iterations 1 --json
    [ "$status" -eq 0 ]
    [[ "$output" == *'"device": "host:2"'* ]]
    run "$SKRUN" moe_block --install-path "$ROOT" --device gpu
    [ "$status" -eq 2 ]
    [[ "$output" == *"--device must be host, npu or npu:<id>, not 'gpu'"* ]]
    run "$SKRUN" moe_block --install-path "$ROOT" --device npu:x
    [ "$status" -eq 2 ]
    [[ "$output" == *"device 'npu:x': expected host, host:<workers> (1 to 256) or npu:<id>"* ]]
    SKFORGE_ASCENDCL=libascendcl_missing.so run "$SKRUN" moe_block --install-path "$ROOT" --device npu
    [ "$status" -eq 1 ]
    [[ "$output" == *"npu:0: cannot load CANN's runtime libascendcl_missing.so"*"set_env.sh"* ]]
}

@test "runtime: the C example of share/doc/runtime.md compiles as written and runs an example" {
    awk '/^```c$/ {on = 1; next} /^```$/ {if (on) exit} on' "$SKFORGE_SOURCE_DIR/share/doc/runtime.md" >example.c
    [ -s example.c ]
    cc -std=c99 -Wall -Wextra -pedantic -Werror -fsanitize=address,undefined \
        -I"$SKFORGE_SOURCE_DIR/include" example.c -L"$LIBDIR" -lskforge_runtime \
        -Wl,-rpath,"$LIBDIR" -o example
    run ./example "$ROOT" two_stream
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *" launches, "*" ns"* ]]
    run ./example "$ROOT" nothere
    [ "$status" -eq 1 ]
    [[ "$output" == *"package 'nothere' is not installed"* ]]
}

@test "runtime: the Python example of share/doc/runtime.md runs as written" {
    awk '/^```python$/ {on = 1; next} /^```$/ {if (on) exit} on' "$SKFORGE_SOURCE_DIR/share/doc/runtime.md" |
        sed "s|\"/usr/local/Ascend/latest\"|\"$ROOT\"|" >example.py
    grep -q "$ROOT" example.py
    run python_asan example.py
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"'last_launches': 8"* ]]
}
