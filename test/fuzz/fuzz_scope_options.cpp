// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the scope option string parser and OpType pattern matching.
#include "skforge/graph/options.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    skforge::graph::Diagnostics diags;
    auto o = skforge::graph::parse_scope_options(text, {}, {"fuzz", 1, 1}, diags);
    for (const auto& p : o.dcci_before_kernel_start)
        (void)skforge::graph::op_type_matches(p, text);
    (void)diags.format();
    return 0;
}
