/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A client of libskforge_runtime written against include/skforge/runtime.h alone (C99, linked
 * with -lskforge_runtime): for every package named on the command line it opens the package on
 * the host, runs it fused and op by op on two sets of memory, compares every tensor the runs
 * write bitwise after the FIRST run, then launches each SuperKernel alone with skf_run_segment
 * (after checking that it refuses while the SuperKernel's tensors are unbound) and compares what
 * it writes with the fused run's bytes. Prints one line per package with the launch counts.
 *
 *   skf_examples INSTALL_PATH PACKAGE...      exit 0 when everything agrees, 1 otherwise
 */
#include <skforge/runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "skf_examples: " __VA_ARGS__);                                         \
            fputc('\n', stderr);                                                                   \
            ++failures;                                                                            \
        }                                                                                          \
    } while (0)

/* Exact small values m / 32 (m in [-32, 31]) in the tensor's dtype. */
static void fill(void* memory, const skf_tensor_info* t, uint32_t seed) {
    size_t i, n;
    uint32_t state = seed * 2654435761u + 1u;
    if (strcmp(t->dtype, "float32") == 0 || strcmp(t->dtype, "float") == 0) {
        float* p = memory;
        for (i = 0, n = t->bytes / 4; i < n; ++i) {
            state = state * 1664525u + 1013904223u;
            p[i] = (float)((int)(state >> 26) - 32) / 32.0f;
        }
    } else if (strcmp(t->dtype, "float16") == 0 || strcmp(t->dtype, "bfloat16") == 0) {
        uint16_t* p = memory;
        int bf16 = t->dtype[0] == 'b';
        for (i = 0, n = t->bytes / 2; i < n; ++i) {
            float f;
            uint32_t bits;
            state = state * 1664525u + 1013904223u;
            f = (float)((int)(state >> 26) - 32) / 32.0f;
            memcpy(&bits, &f, 4);
            if (bf16 || f == 0.0f) {
                p[i] = (uint16_t)(bits >> 16);
            } else { /* normal, exact in 5 mantissa bits: re-bias the exponent 127 -> 15 */
                uint32_t sign = bits >> 31, exp = (bits >> 23) & 0xffu, man = bits & 0x7fffffu;
                p[i] = (uint16_t)((sign << 15) | ((exp - 112u) << 10) | (man >> 13));
            }
        }
    } else { /* integers and bool: 0 or 1 in every element's lowest byte */
        unsigned char* p = memory;
        size_t size = strstr(t->dtype, "64") ? 8 : strstr(t->dtype, "32") ? 4 : strstr(t->dtype, "16") ? 2 : 1;
        memset(memory, 0, t->bytes);
        for (i = 0; i < t->bytes; i += size) {
            state = state * 1664525u + 1013904223u;
            p[i] = (unsigned char)((state >> 28) & 1u);
        }
    }
}

typedef struct {
    size_t count;
    skf_tensor_info* info;
    int* role;
    void** fused;
    void** unfused;
    void** alone;
} tensors;

static void* zeroed(size_t bytes) {
    void* p = calloc(1, bytes == 0 ? 1 : bytes);
    if (p == NULL) {
        fprintf(stderr, "skf_examples: out of memory\n");
        exit(1);
    }
    return p;
}

static int bind_all(skf_package* pkg, const tensors* t, void** set) {
    size_t i;
    for (i = 0; i < t->count; ++i)
        if (skf_bind(pkg, t->info[i].name, set ? set[i] : NULL) != SKF_OK)
            return -1;
    return 0;
}

/* Each SuperKernel alone: refused, naming its tensors, while they are unbound; then one launch
 * that writes the bytes skf_run wrote (what it writes starts as 0xa5 poison). */
static void run_segments(skf_package* pkg, const char* name, const tensors* t) {
    size_t s, j, k, ti;
    int writes;
    for (s = 0; s < skf_segment_count(pkg); ++s) {
        const char* seg = skf_segment_name(pkg, s);
        size_t n = skf_segment_tensor_count(pkg, s);
        skf_stats st;
        char refusal[4096];
        bind_all(pkg, t, NULL);
        EXPECT(skf_run_segment(pkg, seg, NULL) == SKF_E_UNBOUND, "%s: %s ran with nothing bound",
               name, seg);
        /* the next call that returns a code replaces the message: keep it */
        snprintf(refusal, sizeof refusal, "%s", skf_last_error());
        for (j = 0; j < n; ++j) {
            skf_segment_tensor_at(pkg, s, j, &ti, &writes);
            EXPECT(strstr(refusal, t->info[ti].name) != NULL,
                   "%s: %s: the refusal does not name %s: %s", name, seg, t->info[ti].name,
                   refusal);
        }
        for (j = 0; j < n; ++j) {
            skf_segment_tensor_at(pkg, s, j, &ti, &writes);
            memcpy(t->alone[ti], t->fused[ti], t->info[ti].bytes);
            if (writes)
                memset(t->alone[ti], 0xa5, t->info[ti].bytes);
            skf_bind(pkg, t->info[ti].name, t->alone[ti]);
        }
        EXPECT(skf_run_segment(pkg, seg, NULL) == SKF_OK, "%s: %s: %s", name, seg,
               skf_last_error());
        skf_get_stats(pkg, &st);
        EXPECT(st.last_launches == 1, "%s: %s alone made %llu launches", name, seg,
               (unsigned long long)st.last_launches);
        for (j = 0; j < n; ++j) {
            skf_segment_tensor_at(pkg, s, j, &ti, &writes);
            for (k = 0; writes && k < t->info[ti].bytes; ++k)
                if (((unsigned char*)t->alone[ti])[k] != ((unsigned char*)t->fused[ti])[k]) {
                    EXPECT(0, "%s: %s alone wrote other bytes to %s than skf_run (byte %zu)", name,
                           seg, t->info[ti].name, k);
                    break;
                }
        }
    }
}

static void run_package(const char* root, const char* name) {
    skf_package* pkg = NULL;
    tensors t;
    size_t i, k, compared = 0, differing = 0;
    skf_stats fused, unfused;
    if (skf_open(root, name, "host", &pkg) != SKF_OK) {
        EXPECT(0, "%s: %s", name, skf_last_error());
        return;
    }
    t.count = skf_tensor_count(pkg);
    t.info = calloc(t.count, sizeof *t.info);
    t.role = calloc(t.count, sizeof *t.role);
    t.fused = calloc(t.count, sizeof(void*));
    t.unfused = calloc(t.count, sizeof(void*));
    t.alone = calloc(t.count, sizeof(void*));
    for (i = 0; i < t.count; ++i) {
        skf_tensor_info_at(pkg, i, &t.info[i]);
        t.role[i] = skf_tensor_role(pkg, i);
        t.fused[i] = zeroed(t.info[i].bytes);
        t.unfused[i] = zeroed(t.info[i].bytes);
        t.alone[i] = zeroed(t.info[i].bytes);
        if (t.role[i] == SKF_ROLE_INPUT) {
            fill(t.fused[i], &t.info[i], (uint32_t)i);
            memcpy(t.unfused[i], t.fused[i], t.info[i].bytes);
        }
    }
    bind_all(pkg, &t, t.fused);
    EXPECT(skf_run(pkg, NULL) == SKF_OK, "%s: skf_run: %s", name, skf_last_error());
    skf_get_stats(pkg, &fused);
    bind_all(pkg, &t, t.unfused);
    EXPECT(skf_run_unfused(pkg, NULL) == SKF_OK, "%s: skf_run_unfused: %s", name,
           skf_last_error());
    skf_get_stats(pkg, &unfused);
    for (i = 0; i < t.count; ++i) {
        if (t.role[i] == SKF_ROLE_INPUT)
            continue;
        ++compared;
        for (k = 0; k < t.info[i].bytes; ++k)
            if (((unsigned char*)t.fused[i])[k] != ((unsigned char*)t.unfused[i])[k]) {
                EXPECT(0, "%s: %s differs fused vs op by op after the first run (byte %zu)", name,
                       t.info[i].name, k);
                ++differing;
                break;
            }
    }
    run_segments(pkg, name, &t);
    printf("%s: %s, %zu operators, %zu SuperKernels: fused %llu launches, op by op %llu "
           "launches, %zu of %zu tensors differ\n",
           name, skf_device(pkg), skf_operator_count(pkg), skf_segment_count(pkg),
           (unsigned long long)fused.last_launches, (unsigned long long)unfused.last_launches,
           differing, compared);
    skf_close(pkg);
    for (i = 0; i < t.count; ++i) {
        free(t.fused[i]);
        free(t.unfused[i]);
        free(t.alone[i]);
    }
    free(t.info);
    free(t.role);
    free(t.fused);
    free(t.unfused);
    free(t.alone);
}

int main(int argc, char** argv) {
    int i;
    if (argc < 3) {
        fprintf(stderr, "usage: skf_examples INSTALL_PATH PACKAGE...\n");
        return 2;
    }
    printf("libskforge_runtime %s (%d)\n", skf_version(), skf_version_number());
    for (i = 2; i < argc; ++i)
        run_package(argv[1], argv[i]);
    return failures == 0 ? 0 : 1;
}
