// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the shared compile cache's own files, which every user of a shared directory can
// write. The first byte picks the file the rest replaces: an entry's metadata (<key>.json),
// DIR/config.json or DIR/stats.json; then the store is opened, listed, counted, verified and
// looked up as skc compile and skc cache do. Whatever the file holds is a damaged entry or a
// warning: an exception other than support::Error, a crash or undefined behaviour is a finding.
#include "fuzz_dir.hpp"
#include "skforge/compile/cache_store.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/sha256.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

namespace compile = skforge::compile;

// A store holding one real entry, made once; returns its key.
const std::string& seeded_store(const std::string& dir) {
    static const std::string key = [&] {
        const std::string src = skforge::fuzz::scratch_dir() + "/src";
        skforge::fuzz::put(src + "/soc/Add/add.json", "{\"kernelName\":\"add\"}\n");
        skforge::fuzz::put(src + "/soc/Add/add.o", "object");
        const std::string run = skforge::fuzz::scratch_dir() + "/a.run";
        skforge::package::pack({src, run, "1.0", "dav-2201", "Ascend910B1"});
        std::string k = skforge::support::sha256_hex("a");
        compile::CacheStore({dir, std::nullopt, compile::CacheOpen::create, {}, {}}).insert(k, run);
        return k;
    }();
    return key;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::string dir = skforge::fuzz::scratch_dir() + "/cache";
    const std::string& key = seeded_store(dir);
    if (size == 0)
        return 0;
    std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    const std::string meta = dir + "/" + key.substr(0, 2) + "/" + key + ".json";
    const std::string which = data[0] % 3 == 0   ? meta
                              : data[0] % 3 == 1 ? dir + "/config.json"
                                                 : dir + "/stats.json";
    skforge::fuzz::put(which, text);
    try {
        compile::CacheStore store(
            {dir, std::nullopt, compile::CacheOpen::existing, {}, [](const std::string&) {}});
        (void)store.entries();
        (void)store.stats();
        (void)store.verify(compile::VerifyFix::report);
        (void)store.fetch(key, skforge::fuzz::scratch_dir() + "/out.run");
    } catch (const skforge::support::Error&) {
        // A bad config.json: the store is not used (compile warns and goes on without it).
    }
    // Put back what the next input does not replace.
    std::error_code ec;
    std::filesystem::remove(dir + "/config.json", ec);
    std::filesystem::remove(dir + "/stats.json", ec);
    std::filesystem::remove(meta, ec);
    std::filesystem::remove(dir + "/" + key.substr(0, 2) + "/" + key + ".run", ec);
    compile::CacheStore({dir, std::nullopt, compile::CacheOpen::existing, {}, {}})
        .insert(key, skforge::fuzz::scratch_dir() + "/a.run");
    return 0;
}
