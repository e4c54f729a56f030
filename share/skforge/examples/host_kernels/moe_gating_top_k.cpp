// SPDX-License-Identifier: Apache-2.0
// MoeGatingTopK: logits[T,E] -> weights[T,k] (float32, softmax over the chosen experts) and
// ids[T,k] (int32, best first; ties go to the lower expert). k is the outputs' last dimension.
#include "skforge_host_kernel.h"

#include <cmath>

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* logits = &ctx->args[0];
    const sk_tensor* weights = &ctx->args[ctx->num_inputs];
    const sk_tensor* ids = &ctx->args[ctx->num_inputs + 1];
    int64_t experts = sk_cols(logits), topk = sk_cols(weights), begin, end;
    sk_block_range(ctx, sk_rows(logits), &begin, &end);
    for (int64_t t = begin; t < end; ++t) {
        int32_t* out_ids = static_cast<int32_t*>(ids->data) + t * topk;
        for (int64_t j = 0; j < topk; ++j) {
            int32_t best = -1;
            float best_v = 0.0f;
            for (int64_t e = 0; e < experts; ++e) {
                bool taken = false;
                for (int64_t p = 0; p < j; ++p)
                    taken = taken || out_ids[p] == e;
                float v = sk_load(logits, t * experts + e);
                if (!taken && (best < 0 || v > best_v)) {
                    best = static_cast<int32_t>(e);
                    best_v = v;
                }
            }
            out_ids[j] = best < 0 ? 0 : best;
        }
        float top = sk_load(logits, t * experts + out_ids[0]), sum = 0.0f;
        for (int64_t j = 0; j < topk; ++j)
            sum += std::exp(sk_load(logits, t * experts + out_ids[j]) - top);
        for (int64_t j = 0; j < topk; ++j)
            sk_store(weights, t * topk + j,
                     std::exp(sk_load(logits, t * experts + out_ids[j]) - top) / sum);
    }
}
