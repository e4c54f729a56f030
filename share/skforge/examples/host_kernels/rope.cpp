// SPDX-License-Identifier: Apache-2.0
// RotaryPositionEmbedding: x[T, ..., D] rotated pairwise in its last dimension by the token's
// position (its index in the first dimension): (a, b) at pair i turns by t * 10000^(-2i/D).
#include "skforge_host_kernel.h"

#include <cmath>

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t d = sk_cols(x), rows = sk_rows(x), tokens = x->rank ? x->shape[0] : 1;
    int64_t per_token = rows / (tokens ? tokens : 1), begin, end;
    sk_block_range(ctx, rows, &begin, &end);
    for (int64_t r = begin; r < end; ++r) {
        float pos = static_cast<float>(r / per_token);
        for (int64_t i = 0; i + 1 < d; i += 2) {
            float angle = pos * std::pow(10000.0f, -static_cast<float>(i) / static_cast<float>(d));
            float c = std::cos(angle), s = std::sin(angle);
            float a = sk_load(x, r * d + i), b = sk_load(x, r * d + i + 1);
            sk_store(y, r * d + i, a * c - b * s);
            sk_store(y, r * d + i + 1, a * s + b * c);
        }
        if (d % 2)
            sk_store(y, r * d + d - 1, sk_load(x, r * d + d - 1));
    }
}
