// SPDX-License-Identifier: Apache-2.0
// Fuzz target (issue 36): config.ini as skinstall reads it. Every name it returns is a valid
// package name; the order is the first line starting with "install_order=" (a final CR removed),
// as the scripts' skf_read_order reads it; writing the order and reading it back gives it again.
#include "skforge/install/layout.hpp"
#include "skforge/package/path_rules.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace {

// What skf_read_order takes from the text (the shell's `read` line by line), as a reference.
std::string order_line(const std::string& text) {
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        if (end == std::string::npos)
            end = text.size();
        std::string line = text.substr(at, end - at);
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (line.rfind("install_order=", 0) == 0)
            return line.substr(14) + ",";
        at = end + 1;
    }
    return {};
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace skforge;
    std::string text(reinterpret_cast<const char*>(data), size);
    auto names = install::parse_config_ini(text);
    std::vector<std::string> expected;
    std::string rest = order_line(text);
    for (std::size_t comma; (comma = rest.find(',')) != std::string::npos; rest.erase(0, comma + 1))
        if (!package::check_package_name(rest.substr(0, comma)))
            expected.push_back(rest.substr(0, comma));
    if (names != expected)
        __builtin_trap();
    if (install::parse_config_ini(install::render_config_ini(names)) != names)
        __builtin_trap();
    return 0;
}
