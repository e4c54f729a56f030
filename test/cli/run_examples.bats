#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
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
    # The decoder's tiling sink is for Atlas A2/A3 only: refused, and named as not for dav-3510.
    [[ "$output" == *"not for dav-3510: "*"aicpu_tiling operator 'attn_tiling_0' (the tiling of 'attn_0') cannot run on dav-3510"* ]]
    [[ "$output" == *"not for dav-3510 (it lacks what they need): decoder"* ]]
}

@test "the decoder example: LongCat-Flash's prefetch stream and a tiling-sink attention, inside whole scopes" {
    run "$SKC" plan "$SKFORGE_SOURCE_DIR/share/skforge/examples/decoder/graph.yaml"
    echo "$output"
    [ "$status" -eq 0 ]
    # Three scopes per layer, none cut by the operators beside the cores.
    [[ "$output" == *"88 operators, 12 SuperKernel segment(s), 4 left out"* ]]
    [[ "$output" == *"notify/wait with operators beside the AI cores: 8 pair(s)"* ]]
    # Tiling sink: the RoPE'd keys notify the AICPU tiling, the attention waits for it.
    [[ "$output" == *"event 1: rope_k_0 (kernel, in scope_0_part1, notify slot "*") -> attn_tiling_0 (aicpu_tiling)"* ]]
    [[ "$output" == *"event 2: attn_tiling_0 (aicpu_tiling) -> attn_0 (kernel, in scope_0_part1, wait slot "* ]]
    # Each layer's MoE scope starts the prefetch of the next layer's weights; that layer's
    # router waits for it.
    for l in 0 1 2; do
        [[ "$output" == *"router_$l (kernel, in scope_${l}_part2_moe, notify slot "*") -> prefetch_$l (prefetch)"* ]]
        [[ "$output" == *"prefetch_$l (prefetch) -> router_$((l + 1)) (kernel, in scope_$((l + 1))_part2_moe, wait slot "* ]]
    done
    run grep -c 'kind: prefetch, stream_id: 2, inputs: \[wr_[123], wgu_[123]\]' \
        "$SKFORGE_SOURCE_DIR/share/skforge/examples/decoder/graph.yaml"
    [ "$output" = 3 ]
}
