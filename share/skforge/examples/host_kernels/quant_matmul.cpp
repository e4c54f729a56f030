// SPDX-License-Identifier: Apache-2.0
// QuantMatmul: y[T,N] = (sum_k q[t,k] * w[k,N]) * act_scale[t] / 127, with q[T,K] and w[K,N]
// int8 (w quantised symmetrically with scale 1/127) and exact int32 accumulation.
#include "skforge_host_kernel.h"

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* q = &ctx->args[0];
    const sk_tensor* act_scale = &ctx->args[1];
    const sk_tensor* w = &ctx->args[2];
    const sk_tensor* y = &ctx->args[ctx->num_inputs];
    const int8_t* qd = static_cast<const int8_t*>(q->data);
    const int8_t* wd = static_cast<const int8_t*>(w->data);
    int64_t n = sk_cols(w), k = sk_numel(w) / n, rows = sk_numel(q) / k, begin, end;
    sk_block_range(ctx, rows, &begin, &end);
    for (int64_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < n; ++c) {
            int32_t acc = 0;
            for (int64_t kk = 0; kk < k; ++kk)
                acc += static_cast<int32_t>(qd[r * k + kk]) * static_cast<int32_t>(wd[kk * n + c]);
            sk_store(y, r * n + c, static_cast<float>(acc) * sk_load(act_scale, r) / 127.0f);
        }
}
