// SPDX-License-Identifier: Apache-2.0
// Reshape, Concat and friends: the outputs are the inputs' bytes, concatenated in order
// (Reshape has one input; ConcatD concatenates along the first dimension).
#include "skforge_host_kernel.h"

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* out = &ctx->args[ctx->num_inputs];
    int64_t total = sk_numel(out) * sk_dtype_size(out->dtype), begin, end;
    sk_block_range(ctx, total, &begin, &end);
    int64_t at = 0;
    for (uint32_t a = 0; a < ctx->num_inputs && at < end; ++a) {
        const sk_tensor* in = &ctx->args[a];
        int64_t bytes = sk_numel(in) * sk_dtype_size(in->dtype);
        int64_t lo = begin > at ? begin : at, hi = end < at + bytes ? end : at + bytes;
        if (lo < hi)
            memcpy(static_cast<char*>(out->data) + lo,
                   static_cast<const char*>(in->data) + (lo - at), static_cast<size_t>(hi - lo));
        at += bytes;
    }
}
