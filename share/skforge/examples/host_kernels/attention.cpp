// SPDX-License-Identifier: Apache-2.0
// Attention: causal self-attention over the T tokens of q, k, v [T, H, D] -> out [T, H, D]:
// token t of head h attends to tokens 0..t with softmax(q.k / sqrt(D)). One (token, head) per
// unit of work. With a fourth input, the tiling attention_tiling.cpp computes on the AICPU
// (int32 [1]: how many leading key tokens are valid), it attends to tokens below that only; a
// token with none to attend to gets zeros.
#include "skforge_host_kernel.h"

#include <cmath>

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* q = &ctx->args[0];
    const sk_tensor* k = &ctx->args[1];
    const sk_tensor* v = &ctx->args[2];
    const sk_tensor* out = &ctx->args[ctx->num_inputs];
    int64_t tokens = q->shape[0], d = sk_cols(q), heads = sk_numel(q) / tokens / d;
    int64_t keys = ctx->num_inputs > 3 ? static_cast<const int32_t*>(ctx->args[3].data)[0] : tokens;
    float scale = 1.0f / std::sqrt(static_cast<float>(d));
    int64_t begin, end;
    sk_block_range(ctx, tokens * heads, &begin, &end);
    for (int64_t u = begin; u < end; ++u) {
        int64_t t = u / heads, h = u % heads;
        auto at = [&](int64_t token, int64_t i) { return (token * heads + h) * d + i; };
        int64_t last = t < keys ? t : keys - 1; // attends to tokens 0..last
        float top = -INFINITY;
        for (int64_t s = 0; s <= last; ++s) {
            float dot = 0.0f;
            for (int64_t i = 0; i < d; ++i)
                dot += sk_load(q, at(t, i)) * sk_load(k, at(s, i));
            top = std::fmax(top, dot * scale);
        }
        float sum = 0.0f;
        for (int64_t i = 0; i < d; ++i)
            sk_store(out, at(t, i), 0.0f);
        for (int64_t s = 0; s <= last; ++s) {
            float dot = 0.0f;
            for (int64_t i = 0; i < d; ++i)
                dot += sk_load(q, at(t, i)) * sk_load(k, at(s, i));
            float p = std::exp(dot * scale - top);
            sum += p;
            for (int64_t i = 0; i < d; ++i)
                sk_store(out, at(t, i), sk_load(out, at(t, i)) + p * sk_load(v, at(s, i)));
        }
        for (int64_t i = 0; i < d && last >= 0; ++i)
            sk_store(out, at(t, i), sk_load(out, at(t, i)) / sum);
    }
}
