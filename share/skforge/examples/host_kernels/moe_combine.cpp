// SPDX-License-Identifier: Apache-2.0
// MoeCombine: y[T,H] = sum over j of weights[t,j] * expert_out[t,j,:] (j ascending).
#include "skforge_host_kernel.h"

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* expert_out = &ctx->args[0];
    const sk_tensor* weights = &ctx->args[1];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t topk = sk_cols(weights), tokens = sk_rows(weights);
    int64_t hidden = sk_numel(y) / tokens, begin, end;
    sk_block_range(ctx, tokens, &begin, &end);
    for (int64_t t = begin; t < end; ++t)
        for (int64_t h = 0; h < hidden; ++h) {
            float acc = 0.0f;
            for (int64_t j = 0; j < topk; ++j)
                acc += sk_load(weights, t * topk + j) *
                       sk_load(expert_out, (t * topk + j) * hidden + h);
            sk_store(y, t * hidden + h, acc);
        }
}
