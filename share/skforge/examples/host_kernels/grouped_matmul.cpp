// SPDX-License-Identifier: Apache-2.0
// GroupedMatmul: one weight matrix per group, w[G,K,N].
//  - inputs (x[T,K], w): the T rows are split into G equal contiguous groups; y[T,N].
//  - inputs (x[T,K], w, ids[T,k] int32): y[t,j,:] = x[t,:] * w[ids[t,j] mod G]; y[T,k,N].
//    x may also be [T,k,K] (one row per routed copy).
// Work is split in tiles of one output row by up to 64 columns; each output sums k ascending.
#include "skforge_host_kernel.h"

namespace {
constexpr int64_t k_tile = 64;
}

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* w = &ctx->args[1];
    const sk_tensor* ids = ctx->num_inputs > 2 ? &ctx->args[2] : nullptr;
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t groups = w->shape[0], n = sk_cols(w), k = sk_numel(w) / groups / n;
    int64_t x_rows = sk_numel(x) / k;
    int64_t out_rows = sk_numel(y) / n; // T, or T*topk
    int64_t topk = ids ? sk_cols(ids) : 1;
    int64_t tiles = (n + k_tile - 1) / k_tile, begin, end;
    sk_block_range(ctx, out_rows * tiles, &begin, &end);
    float acc[k_tile], wrow[k_tile];
    for (int64_t u = begin; u < end; ++u) {
        int64_t r = u / tiles, c0 = (u % tiles) * k_tile;
        int64_t width = n - c0 < k_tile ? n - c0 : k_tile;
        int64_t g, xr;
        if (ids) {
            g = static_cast<const int32_t*>(ids->data)[r] % groups;
            g = g < 0 ? g + groups : g;
            xr = x_rows == out_rows ? r : r / topk;
        } else {
            g = r / ((out_rows + groups - 1) / groups);
            xr = r;
        }
        for (int64_t j = 0; j < width; ++j)
            acc[j] = 0.0f;
        for (int64_t kk = 0; kk < k; ++kk) {
            float xv = sk_load(x, xr * k + kk);
            sk_load_row(w, (g * k + kk) * n + c0, width, wrow);
            for (int64_t j = 0; j < width; ++j)
                acc[j] += xv * wrow[j];
        }
        for (int64_t j = 0; j < width; ++j)
            sk_store(y, r * n + c0 + j, acc[j]);
    }
}
