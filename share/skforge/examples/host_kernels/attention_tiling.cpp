// SPDX-License-Identifier: Apache-2.0
// The AICPU tiling of Attention (an aicpu_tiling operator, tiling sink): how many leading key
// tokens the attention may read, from the values of k [T, H, D] — the tokens up to the first
// whose key row is not finite. A tiling that depends on an earlier operator's output is why it
// runs on the AICPU and not on the host. Output: int32 [1].
#include "skforge_host_kernel.h"

#include <cmath>

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* k = &ctx->args[0];
    const sk_tensor* tiling = &ctx->args[ctx->num_inputs];
    if (ctx->block_idx != 0)
        return;
    int64_t tokens = k->shape[0], row = sk_numel(k) / (tokens ? tokens : 1), valid = 0;
    for (; valid < tokens; ++valid) {
        bool finite = true;
        for (int64_t i = 0; i < row && finite; ++i)
            finite = std::isfinite(sk_load(k, valid * row + i));
        if (!finite)
            break;
    }
    static_cast<int32_t*>(tiling->data)[0] = static_cast<int32_t>(valid);
}
