#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skforge's CMake package: `cmake --install` of this build into a temporary prefix, then a user
# project (test/cmake_project) configured against it, built, and rebuilt exactly when the graph,
# a kernel's metadata or source, or skc changes, with the Ninja and the Makefile generators.
load helpers

EX="$SKFORGE_SOURCE_DIR/share/skforge/examples"

setup_file() {
    : "${SKFORGE_BINARY_DIR:?SKFORGE_BINARY_DIR must be the skforge build directory}"
    # Installed under one name and used under another with a space in it: nothing in the
    # package may name where it was installed or built.
    cmake --install "$SKFORGE_BINARY_DIR" --prefix "$BATS_FILE_TMPDIR/staging" >/dev/null
    mv "$BATS_FILE_TMPDIR/staging" "$BATS_FILE_TMPDIR/pre fix"
}

PREFIX() { printf '%s' "$BATS_FILE_TMPDIR/pre fix"; }

# project GENERATOR: configures a copy of the sample project in "my project" (build dir: build).
project() {
    mkdir -p "my project/examples"
    cp "$SKFORGE_SOURCE_DIR/test/cmake_project/CMakeLists.txt" "my project/"
    cp -r "$EX/two_stream" "$EX/host_kernels" "my project/examples/"
    cmake -S "my project" -B build -G "$1" -DCMAKE_PREFIX_PATH="$(PREFIX)" >configure.log
}

RUN=build/static_kernel_compile_outputs/two_stream_host.run
LOG=build/static_kernel_compile_outputs/two_stream_host_compile_log/two_stream_host_compile_succ.log

# mtime FILE: modification time in nanoseconds.
mtime() { stat -c %.9Y "$1"; }

# rebuilt_after_touch FILE: touching FILE (a second later, so it is newer than the .run) makes
# the next build run skc again and leaves a newer .run.
rebuilt_after_touch() {
    local before
    before=$(mtime "$RUN")
    sleep 1
    touch "$1"
    cmake --build build >build.log 2>&1
    [ "$(mtime "$RUN")" != "$before" ] || { echo "not rebuilt after touching $1"; return 1; }
}

@test "cmake --install puts a relocatable skforgeConfig.cmake and version file in lib/cmake/skforge" {
    dir="$(PREFIX)/lib/cmake/skforge"
    [ -f "$dir/skforgeConfig.cmake" ]
    [ -f "$dir/skforgeConfigVersion.cmake" ]
    run grep -rlF -e "$SKFORGE_BINARY_DIR" -e "$SKFORGE_SOURCE_DIR" -e staging "$dir"
    [ "$status" -eq 1 ]
    cat >probe.cmake <<'EOF2'
find_package(skforge 0.1 REQUIRED CONFIG)
foreach(t skc skinstall skrun)
  get_target_property(loc skforge::${t} LOCATION)
  message(STATUS "skforge::${t}=${loc}")
endforeach()
message(STATUS "version=${skforge_VERSION}")
EOF2
    mkdir p && printf 'cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\ninclude(../probe.cmake)\n' >p/CMakeLists.txt
    run cmake -S p -B pb -DCMAKE_PREFIX_PATH="$(PREFIX)"
    [ "$status" -eq 0 ]
    [[ "$output" == *"skforge::skc=$(PREFIX)/bin/skc"* ]]
    [[ "$output" == *"skforge::skinstall=$(PREFIX)/bin/skinstall"* ]]
    [[ "$output" == *"skforge::skrun=$(PREFIX)/bin/skrun"* ]]
    [[ "$output" == *"version=0."* ]]
    # Another major/minor version is not this one.
    sed -i 's/skforge 0.1/skforge 9.0/' probe.cmake
    run cmake -S p -B pb2 -DCMAKE_PREFIX_PATH="$(PREFIX)"
    [ "$status" -ne 0 ]
}

@test "skforge_add_run_package refuses a call without GRAPH or with an unknown argument" {
    mkdir p
    for call in "skforge_add_run_package(k NPU_ARCH host)" \
        "skforge_add_run_package(k GRAPH g.yaml COLOUR red)"; do
        printf 'cmake_minimum_required(VERSION 3.20)\nproject(p NONE)\nfind_package(skforge REQUIRED)\n%s\n' \
            "$call" >p/CMakeLists.txt
        run cmake -S p -B pb -DCMAKE_PREFIX_PATH="$(PREFIX)"
        [ "$status" -ne 0 ]
        [[ "$output" == *"skforge_add_run_package(k): "* ]]
        rm -rf pb
    done
}

@test "Ninja: the .run is built, a no-op rebuild runs nothing, each input change rebuilds it" {
    project Ninja
    cmake --build build >build.log
    [ -f "$RUN" ]
    "$(PREFIX)/bin/skc" inspect "$RUN" --verify >/dev/null
    # No-op: nothing to do, nothing run.
    [ "$(ninja -C build -n | tail -1)" = "ninja: no work to do." ]
    before=$(mtime "$RUN")
    log_before=$(mtime "$LOG")
    cmake --build build >build.log
    grep -q "no work to do" build.log
    [ "$(mtime "$RUN")" = "$before" ]
    [ "$(mtime "$LOG")" = "$log_before" ]
    # One kernel source touched: ninja says why, skc runs (a cache hit), the .run is newer.
    sleep 1
    touch "my project/examples/host_kernels/rope.cpp"
    run ninja -C build -n -d explain
    [[ "$output" == *"host_kernels/rope.cpp"* ]]
    cmake --build build >build.log
    grep -q "cache hit" build.log
    [ "$(mtime "$RUN")" != "$before" ]
    [ "$(ninja -C build -n | tail -1)" = "ninja: no work to do." ]
    # The source's content changed: a real rebuild, different bytes.
    sum=$(sha256sum <"$RUN")
    sleep 1
    echo "// changed" >>"my project/examples/host_kernels/rope.cpp"
    cmake --build build >build.log
    grep -q "cache miss" build.log
    [ "$(sha256sum <"$RUN")" != "$sum" ]
    # A kernel's metadata, the graph, skc itself.
    rebuilt_after_touch "my project/examples/two_stream/kernels/matmul.json"
    rebuilt_after_touch "my project/examples/two_stream/graph.yaml"
    rebuilt_after_touch "$(PREFIX)/bin/skc"
    [ "$(ninja -C build -n | tail -1)" = "ninja: no work to do." ]
}

@test "Unix Makefiles: the .run is built, a no-op rebuild runs nothing, a source change rebuilds it" {
    project "Unix Makefiles"
    cmake --build build >build.log
    [ -f "$RUN" ]
    before=$(mtime "$RUN")
    log_before=$(mtime "$LOG")
    cmake --build build >build.log
    [ "$(mtime "$RUN")" = "$before" ]
    [ "$(mtime "$LOG")" = "$log_before" ]
    ! grep -q "skc compile" build.log
    rebuilt_after_touch "my project/examples/host_kernels/add.cpp"
    grep -q "cache hit" build.log
    rebuilt_after_touch "my project/examples/two_stream/kernels/softmax.json"
    rebuilt_after_touch "$(PREFIX)/bin/skc"
    before=$(mtime "$RUN")
    cmake --build build >build.log
    [ "$(mtime "$RUN")" = "$before" ]
}

@test "NAME, OUTPUT_DIR and SIGN_KEY reach skc: a signed .run where asked, rebuilt when the key changes" {
    mkdir -p p/k
    cp "$EX/host_kernels/add.json" "$EX/host_kernels/add.cpp" p/k/
    cat >p/graph.yaml <<'EOF2'
name: one
inputs:
  - {name: x, shape: [64], dtype: float32}
  - {name: y, shape: [64], dtype: float32}
ops:
  - {name: add, type: Add, kernel: {json_path: k/add.json}, inputs: [x, y],
     outputs: [{name: z, shape: [64], dtype: float32}]}
EOF2
    (cd p && "$(PREFIX)/bin/skc" keygen -o key >/dev/null)
    cat >p/CMakeLists.txt <<'EOF2'
cmake_minimum_required(VERSION 3.20)
project(p NONE)
find_package(skforge 0.1 REQUIRED)
skforge_add_run_package(one GRAPH graph.yaml NPU_ARCH host NAME signed_one OUTPUT_DIR pkgs
                        SIGN_KEY key.pem)
get_target_property(run one SKFORGE_RUN_FILE)
message(STATUS "run=${run}")
EOF2
    run cmake -S p -B pb -G Ninja -DCMAKE_PREFIX_PATH="$(PREFIX)"
    [ "$status" -eq 0 ]
    [[ "$output" == *"run=$PWD/pb/pkgs/signed_one.run"* ]]
    cmake --build pb >build.log
    "$(PREFIX)/bin/skc" inspect pb/pkgs/signed_one.run --verify --trusted-key p/key.pub.pem >/dev/null
    before=$(mtime pb/pkgs/signed_one.run)
    sleep 1
    touch p/key.pem
    cmake --build pb >build.log
    [ "$(mtime pb/pkgs/signed_one.run)" != "$before" ]
}


@test "find_package(skforge) gives skforge::runtime: a C program links it and runs" {
    mkdir p
    cat >p/CMakeLists.txt <<'EOF2'
cmake_minimum_required(VERSION 3.20)
project(p C)
find_package(skforge 0.1 REQUIRED)
add_executable(v v.c)
target_link_libraries(v PRIVATE skforge::runtime)
EOF2
    cat >p/v.c <<'EOF2'
#include <skforge/runtime.h>
#include <stdio.h>
int main(void) {
    skf_package* pkg;
    int rc = skf_open(NULL, "x", "tpu", &pkg);
    printf("%s %s %d %s\n", skf_version(), SKF_VERSION, rc, skf_last_error());
    return 0;
}
EOF2
    cmake -S p -B pb -DCMAKE_PREFIX_PATH="$(PREFIX)" -DCMAKE_C_FLAGS="-fsanitize=address,undefined" >configure.log
    cmake --build pb >build.log 2>&1 || { cat build.log; false; }
    run pb/v
    echo "$output"
    [ "$status" -eq 0 ]
    [ "$output" = "0.1.0 0.1.0 -1 device 'tpu': expected host, host:<workers> (1 to 256) or npu:<id>" ]
}
