// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/cleanup_log.hpp"

#include <algorithm>
#include <regex>

namespace skforge::install {

std::vector<std::string> uninstall_candidates(const std::string& log_text) {
    static const std::regex k_path(R"((/[^\s'"`<>|;&(){}$]*/uninstall\.sh)(?![A-Za-z0-9_.-]))");
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(log_text.begin(), log_text.end(), k_path);
         it != std::sregex_iterator(); ++it) {
        std::string p = (*it)[1].str();
        if (std::find(out.begin(), out.end(), p) == out.end())
            out.push_back(std::move(p));
    }
    return out;
}

namespace {

std::string trim_slashes(std::string p) {
    while (p.size() > 1 && p.back() == '/')
        p.pop_back();
    return p;
}

bool has_dot_component(const std::string& path) {
    std::size_t start = 0;
    while (start <= path.size()) {
        std::size_t slash = path.find('/', start);
        std::string comp =
            path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (comp == ".." || comp == ".")
            return true;
        if (slash == std::string::npos)
            break;
        start = slash + 1;
    }
    return false;
}

} // namespace

std::string check_candidate_text(const std::string& candidate, const std::string& given,
                                 const std::string& resolved, const std::vector<std::string>& stems,
                                 std::string& stem_out) {
    if (has_dot_component(candidate))
        return "it has a '..' or '.' component";
    for (const std::string& root : {trim_slashes(given), trim_slashes(resolved)}) {
        for (const auto& stem : stems) {
            if (candidate == root + "/opp/static_kernel/ai_core/" + stem + "/uninstall.sh") {
                stem_out = stem;
                return {};
            }
        }
    }
    return "it is not <install-path>/opp/static_kernel/ai_core/<stem>/uninstall.sh for a .run in "
           "the outputs";
}

} // namespace skforge::install
