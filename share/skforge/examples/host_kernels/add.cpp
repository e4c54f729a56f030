// SPDX-License-Identifier: Apache-2.0
// Add: out = in0 + in1 + ... elementwise; an input with fewer elements repeats (broadcast over
// the leading dimensions).
#include "skforge_host_kernel.h"

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* out = &ctx->args[ctx->num_inputs];
    int64_t n = sk_numel(out), begin, end;
    sk_block_range(ctx, n, &begin, &end);
    for (int64_t i = begin; i < end; ++i) {
        float acc = 0.0f;
        for (uint32_t a = 0; a < ctx->num_inputs; ++a) {
            int64_t m = sk_numel(&ctx->args[a]);
            acc += sk_load(&ctx->args[a], i % m);
        }
        sk_store(out, i, acc);
    }
}
