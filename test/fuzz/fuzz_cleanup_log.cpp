// SPDX-License-Identifier: Apache-2.0
// Fuzz target: `skinstall cleanup-from-log`'s parser. A compile job's log is anything the job
// printed; every candidate it yields must be an absolute path ending in /uninstall.sh, and the
// text check must accept only <install-path>/opp/static_kernel/ai_core/<stem>/uninstall.sh.
#include "skforge/install/cleanup_log.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void fail(const char* what, const std::string& candidate) {
    std::fprintf(stderr, "%s: '%s'\n", what, candidate.c_str());
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::vector<std::string> stems = {"pkg", "decoder_host"};
    for (const auto& c : skforge::install::uninstall_candidates(text)) {
        if (c.empty() || c.front() != '/' || !c.ends_with("/uninstall.sh"))
            fail("candidate is not an absolute .../uninstall.sh", c);
        std::string stem;
        std::string why =
            skforge::install::check_candidate_text(c, "/opt/x", "/real/x", stems, stem);
        if (!why.empty())
            continue;
        bool exact = false;
        for (const char* root : {"/opt/x", "/real/x"})
            exact = exact ||
                    c == std::string(root) + "/opp/static_kernel/ai_core/" + stem + "/uninstall.sh";
        if (!exact || (stem != "pkg" && stem != "decoder_host"))
            fail("accepted a candidate outside the install path's packages", c);
    }
    return 0;
}
