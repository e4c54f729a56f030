// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/cleanup_log.hpp"

#include <cctype>
#include <string_view>
#include <unordered_set>

namespace skforge::install {

namespace {

// Characters that end a path in a log line: whitespace and what a shell would not take as part
// of a word.
bool ends_path(char c) {
    return std::isspace(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("'\"`<>|;&(){}$").find(c) != std::string_view::npos;
}

bool continues_name(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
}

// In a word (a run of path characters): from its first '/' to the end of its last
// "/uninstall.sh" that no name character follows, or "" when it has none. Every search stays
// inside the word, so a log is read a bounded number of times whatever its words.
std::string_view candidate_in(std::string_view word) {
    static constexpr std::string_view k_tail = "/uninstall.sh";
    std::size_t start = word.find('/');
    if (start == std::string_view::npos)
        return {};
    for (std::size_t p = word.size(); p > start + 1;) {
        p = word.rfind(k_tail, p - 1);
        if (p == std::string_view::npos || p <= start)
            break;
        std::size_t after = p + k_tail.size();
        if (after == word.size() || !continues_name(word[after]))
            return word.substr(start, after - start);
    }
    return {};
}

} // namespace

// Linear in the log's size: a CI log may hold lines of megabytes (std::regex recursed once per
// character there and overflowed the stack) and megabytes of short words (a search from each
// word to the log's end or start was quadratic, minutes for a few megabytes).
std::vector<std::string> uninstall_candidates(const std::string& log_text) {
    std::string_view text = log_text;
    std::vector<std::string> out;
    std::unordered_set<std::string_view> seen;
    for (std::size_t i = 0; i < text.size();) {
        if (ends_path(text[i])) {
            ++i;
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && !ends_path(text[end]))
            ++end;
        std::string_view p = candidate_in(text.substr(i, end - i));
        if (!p.empty() && seen.insert(p).second)
            out.emplace_back(p);
        i = end;
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
