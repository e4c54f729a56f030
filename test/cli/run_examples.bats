#!/usr/bin/env bats
# scripts/run_examples.sh: its command line, and the host run over every example.
load helpers

RUNNER="$SKFORGE_SOURCE_DIR/scripts/run_examples.sh"

binaries() {
    export SKC SKINSTALL SKRUN
}

@test "run_examples: --npu-arch is required, unknown values exit 2, -h prints usage" {
    run sh "$RUNNER"
    [ "$status" -eq 2 ]
    [[ "$output" == *"ERROR: --npu-arch is required."* ]]
    run sh "$RUNNER" --npu-arch dav-9999
    [ "$status" -eq 2 ]
    [[ "$output" == *"unsupported NPU architecture"* ]]
    run sh "$RUNNER" -h
    [ "$status" -eq 0 ]
    [[ "$output" == *"Usage: scripts/run_examples.sh --npu-arch host|dav-2201|dav-3510"* ]]
    run sh "$RUNNER" --help
    [ "$status" -eq 0 ]
}

@test "run_examples --npu-arch host compiles, installs, runs, verifies and uninstalls every example" {
    binaries
    run sh "$RUNNER" --npu-arch host --out "$W/ex" --iterations 1
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"done:    decoder moe_block tbe_cut two_stream"* ]]
    [[ "$output" == *"install root clean"* ]]
    [ "$(echo "$output" | grep -c 'bitwise identical')" -eq 4 ]
}

@test "run_examples --npu-arch dav-2201 says what it skipped without the CANN toolkit" {
    binaries
    run sh "$RUNNER" --npu-arch dav-2201 --out "$W/ex"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"skipped (SuperKernel fusion needs the CANN toolkit's bisheng on PATH and precompiled NPU kernels): decoder moe_block tbe_cut two_stream"* ]]
}

@test "run_examples --npu-arch dav-3510 with bisheng but no NPU binaries skips, naming why" {
    binaries
    mkdir -p fakebin
    printf '#!/bin/sh\necho fake bisheng\n' >fakebin/bisheng
    chmod +x fakebin/bisheng
    PATH=$PWD/fakebin:$PATH run sh "$RUNNER" --npu-arch dav-3510 --out "$W/ex"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"skipped: operator '"*"' has no kernel binary (bin_path): SuperKernels link the compiled sub-kernels"* ]]
}
