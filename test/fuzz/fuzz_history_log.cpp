// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the installer's history log (ai_core/log/skinstall.log) read back as `skinstall
// history` does. Any bytes a member of the run user's group writes there must come back as JSON
// objects (unreadable lines as {"unreadable": text}), never an exception, and write out again.
#include "fuzz_dir.hpp"
#include "skforge/install/history.hpp"
#include "skforge/install/layout.hpp"
#include "skforge/support/json.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    namespace inst = skforge::install;
    static const std::string root = skforge::fuzz::scratch_dir() + "/root";
    static const std::string log = root + "/opp/static_kernel/ai_core/log/" + inst::k_history_file;
    skforge::fuzz::put(log, std::string_view(reinterpret_cast<const char*>(data), size));
    auto tree = inst::InstallTree::open(root, inst::Create::yes);
    if (!tree)
        std::abort();
    for (const auto& entry : inst::read_history(*tree)) {
        auto line = entry.as_json();
        if (!line.is_object() || (entry.readable() && !entry.line.is_object())) {
            std::fprintf(stderr, "read_history returned a line that is not an object\n");
            std::abort();
        }
        (void)skforge::support::dump_json(line, 2);
    }
    return 0;
}
