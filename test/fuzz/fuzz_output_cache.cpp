// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the output directory's cache (OUTDIR/static_kernel_cache/skforge-*.json) read as
// skc compile reads it. Whatever it holds, reading it never throws, keeps only entries with
// string "run" and "sha256", and judging an entry never reads outside OUTDIR.
#include "fuzz_dir.hpp"
#include "skforge/compile/output_cache.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/log.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string out = skforge::fuzz::scratch_dir() + "/out";
    static const std::string file = out + "/static_kernel_cache/skforge-0.1.0_host.json";
    static const bool seeded = [] {
        skforge::fuzz::put(out + "/g_host.run", "run");
        return true;
    }();
    (void)seeded;
    skforge::fuzz::put(file, std::string_view(reinterpret_cast<const char*>(data), size));
    skforge::support::NullLog log;
    auto cache = skforge::compile::read_output_cache(file, log);
    if (!cache.is_object())
        std::abort();
    for (const auto& [key, entry] : cache.items()) {
        if (!skforge::support::json_get<std::string>(entry, "run") ||
            !skforge::support::json_get<std::string>(entry, "sha256")) {
            std::fprintf(stderr, "kept an entry without string run and sha256\n");
            std::abort();
        }
        (void)skforge::compile::output_cache_entry_live(entry, out);
    }
    (void)skforge::support::dump_json(cache, 2);
    return 0;
}
