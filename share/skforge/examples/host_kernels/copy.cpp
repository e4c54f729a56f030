// Reshape, Concat and friends: the outputs are the inputs' bytes, concatenated in order
// (Reshape has one input; ConcatD concatenates along the first dimension).
#include "skforge_host_kernel.h"

namespace {
int64_t element_bytes(uint32_t dtype) {
    switch (dtype) {
    case SK_DT_FLOAT16:
    case SK_DT_BFLOAT16:
    case SK_DT_INT16:
        return 2;
    case SK_DT_INT8:
    case SK_DT_UINT8:
    case SK_DT_BOOL:
        return 1;
    case SK_DT_INT64:
        return 8;
    default:
        return 4;
    }
}
} // namespace

SKFORGE_HOST_KERNEL(ctx) {
    const sk_tensor* out = &ctx->args[ctx->num_inputs];
    int64_t total = sk_numel(out) * element_bytes(out->dtype), begin, end;
    sk_block_range(ctx, total, &begin, &end);
    int64_t at = 0;
    for (uint32_t a = 0; a < ctx->num_inputs && at < end; ++a) {
        const sk_tensor* in = &ctx->args[a];
        int64_t bytes = sk_numel(in) * element_bytes(in->dtype);
        int64_t lo = begin > at ? begin : at, hi = end < at + bytes ? end : at + bytes;
        if (lo < hi)
            memcpy(static_cast<char*>(out->data) + lo,
                   static_cast<const char*>(in->data) + (lo - at), static_cast<size_t>(hi - lo));
        at += bytes;
    }
}
