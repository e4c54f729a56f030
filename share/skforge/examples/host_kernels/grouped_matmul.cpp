// GroupedMatmul: one weight matrix per group, w[G,K,N].
//  - inputs (x[T,K], w): the T rows are split into G equal contiguous groups; y[T,N].
//  - inputs (x[T,K], w, ids[T,k] int32): y[t,j,:] = x[t,:] * w[ids[t,j] mod G]; y[T,k,N].
//    x may also be [T,k,K] (one row per routed copy).
#include "skforge_host_kernel.h"

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* x = &ctx->args[0];
    const sk_tensor* w = &ctx->args[1];
    const sk_tensor* ids = ctx->num_inputs > 2 ? &ctx->args[2] : nullptr;
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    int64_t groups = w->shape[0], n = sk_cols(w), k = sk_numel(w) / groups / n;
    int64_t x_rows = sk_numel(x) / k;
    int64_t out_rows = sk_numel(y) / n; // T, or T*topk
    int64_t topk = ids ? sk_cols(ids) : 1;
    int64_t begin, end;
    sk_block_range(ctx, out_rows, &begin, &end);
    for (int64_t r = begin; r < end; ++r) {
        int64_t g, xr;
        if (ids) {
            g = static_cast<const int32_t*>(ids->data)[r] % groups;
            g = g < 0 ? g + groups : g;
            xr = x_rows == out_rows ? r : r / topk;
        } else {
            g = r / ((out_rows + groups - 1) / groups);
            xr = r;
        }
        for (int64_t c = 0; c < n; ++c) {
            float acc = 0.0f;
            for (int64_t kk = 0; kk < k; ++kk)
                acc += sk_load(x, xr * k + kk) * sk_load(w, (g * k + kk) * n + c);
            sk_store(y, r * n + c, acc);
        }
    }
}
