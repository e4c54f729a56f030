// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the per-key record (config/static_kernel.keys) as skinstall reads it before an
// install or uninstall (its check taken as passed: the fuzzer writes what a forger could), then
// the change made on its text for each package it names and for a new one. Whatever the text
// says, nothing may crash, and every range of the old global index the change copies must lie
// within the size the record gives that index.
#include "skforge/install/index_record.hpp"
#include "skforge/support/error.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace skforge;
    static const install::PackageIndex fresh = {
        {"soc", install::scan_index_text(
                    R"({"Add":{"staticList":[{"simplifiedKey":"Add/1","binPath":"fz/soc/a.o"},
                    {"simplifiedKey":"Add/2","binPath":"fz/soc/b.o"}]},
                    "Mul":{"staticList":[{"binPath":"fz/soc/a.o"}]}})")}};
    static const install::SocIndex other = install::scan_index_text(
        R"({"Add":{"staticList":[{"simplifiedKey":"Add/1","binPath":"o/soc/a.o"}]}})");
    install::IndexLoader load = [](const std::string&,
                                   const std::string& soc) -> const install::SocIndex& {
        if (soc != "soc")
            throw support::Error("no index for " + soc);
        return other;
    };
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        auto head = install::parse_record(text, {}, install::RecordBody::skip,
                                          install::RecordDigest::known);
        if (!head)
            return 0;
        std::vector<std::string> names = head->order();
        names.resize(std::min<std::size_t>(names.size(), 3));
        names.push_back("fz");
        for (const auto& name : names)
            for (bool stays : {false, true}) {
                try {
                    auto patch = install::patch_record(*head, name, stays ? &fresh : nullptr, load);
                    auto bodies = install::body_pieces(*head);
                    for (const auto& [soc, ps] : patch.socs) {
                        if (!ps) {
                            bodies.erase(soc);
                            continue;
                        }
                        for (const auto& p : ps->global)
                            if (p.len > 0 && (!ps->has_old || p.from + p.len > ps->old_size))
                                __builtin_trap();
                        bodies[soc] = ps->body;
                    }
                    auto out =
                        install::assemble_record(patch.packages, head->soc_stamps, bodies).joined();
                    (void)install::parse_record(out, {}, install::RecordBody::skip);
                } catch (const support::Error&) {
                }
            }
        (void)install::record_shadows(*head, head->order());
    } catch (const support::Error&) {
    }
    return 0;
}
