// SPDX-License-Identifier: Apache-2.0
// MatMul: y[M,N] = x[M,K] * w[K,N]. x is read as rows of K (w's first dimension), w as [K,N] (its
// last dimension is N); y is written flat, so it may be declared in any shape of M*N elements.
// Work is split in tiles of one row by up to 64 columns; each output sums k in ascending order.
#include "skforge_host_kernel.h"

namespace {
constexpr int64_t k_tile = 64;
}

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* w = &ctx->args[1];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t n = sk_cols(w), k = sk_numel(w) / n, m = sk_numel(x) / k;
    int64_t tiles = (n + k_tile - 1) / k_tile, begin, end;
    sk_block_range(ctx, m * tiles, &begin, &end);
    float acc[k_tile], wrow[k_tile];
    for (int64_t u = begin; u < end; ++u) {
        int64_t row = u / tiles, c0 = (u % tiles) * k_tile;
        int64_t width = n - c0 < k_tile ? n - c0 : k_tile;
        for (int64_t j = 0; j < width; ++j)
            acc[j] = 0.0f;
        for (int64_t kk = 0; kk < k; ++kk) {
            float xv = sk_load(x, row * k + kk);
            sk_load_row(w, kk * n + c0, width, wrow);
            for (int64_t j = 0; j < width; ++j)
                acc[j] += xv * wrow[j];
        }
        for (int64_t j = 0; j < width; ++j)
            sk_store(y, row * n + c0 + j, acc[j]);
    }
}
