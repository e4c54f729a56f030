// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/cann_stamp.hpp"

#include <charconv>

namespace skforge::package {

using nlohmann::json;

namespace {

bool is_number(std::string_view s) {
    if (s.empty() || s.size() > 4)
        return false;
    unsigned v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size();
}

} // namespace

std::optional<std::string> cann_line(std::string_view version) {
    if (version.empty() || version.size() > 64)
        return std::nullopt;
    for (char c : version)
        if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
            c != '.' && c != '-' && c != '+')
            return std::nullopt;
    auto first = version.find('.');
    if (first == std::string_view::npos)
        return std::nullopt;
    std::string_view major = version.substr(0, first);
    std::string_view rest = version.substr(first + 1);
    std::string_view minor = rest.substr(0, rest.find_first_of(".-+"));
    if (!is_number(major) || !is_number(minor))
        return std::nullopt;
    // "09.1" and "9.01" name the same line as "9.1": compare numbers, print them plainly.
    unsigned a = 0;
    unsigned b = 0;
    std::from_chars(major.data(), major.data() + major.size(), a);
    std::from_chars(minor.data(), minor.data() + minor.size(), b);
    return std::to_string(a) + "." + std::to_string(b);
}

std::string CannStamp::line() const {
    return cann_line(version).value_or("");
}

std::string_view stamp_source_name(StampSource source) {
    switch (source) {
    case StampSource::toolkit:
        return "toolkit";
    case StampSource::option:
        return "option";
    }
    return "toolkit";
}

std::optional<StampSource> parse_stamp_source(std::string_view name) {
    for (auto s : {StampSource::toolkit, StampSource::option})
        if (stamp_source_name(s) == name)
            return s;
    return std::nullopt;
}

json stamp_json(const CannStamp& s) {
    json j = {{"version", s.version}, {"line", s.line()}, {"from", stamp_source_name(s.source)}};
    if (s.cube_cores)
        j["cube_core_cnt"] = *s.cube_cores;
    if (s.vector_cores)
        j["vector_core_cnt"] = *s.vector_cores;
    return j;
}

CannStamp parse_stamp(const json& doc, std::vector<std::string>& errors) {
    CannStamp s;
    if (!doc.is_object()) {
        errors.push_back("'cann' is not an object");
        return s;
    }
    auto text = [&](const char* key) -> std::string {
        auto it = doc.find(key);
        if (it == doc.end() || !it->is_string()) {
            errors.push_back(std::string("cann.") + key + " is missing or not a string");
            return {};
        }
        return it->get<std::string>();
    };
    s.version = text("version");
    std::string line = text("line");
    std::string from = text("from");
    auto derived = cann_line(s.version);
    if (!s.version.empty() && !derived)
        errors.push_back("cann.version '" + s.version + "' is not a CANN version (major.minor…)");
    else if (derived && line != *derived)
        errors.push_back("cann.line '" + line + "' is not the line of cann.version '" + s.version +
                         "' (" + *derived + ")");
    if (auto src = parse_stamp_source(from))
        s.source = *src;
    else if (!from.empty())
        errors.push_back("cann.from '" + from + "' is not toolkit or option");
    for (auto [key, field] : {std::pair{"cube_core_cnt", &s.cube_cores},
                              std::pair{"vector_core_cnt", &s.vector_cores}}) {
        auto it = doc.find(key);
        if (it == doc.end())
            continue;
        if (!it->is_number_unsigned() || it->get<std::uint64_t>() == 0 ||
            it->get<std::uint64_t>() > 4096)
            errors.push_back(std::string("cann.") + key + " is not a core count (1 to 4096)");
        else
            *field = it->get<unsigned>();
    }
    return s;
}

std::string stamp_version_info(const CannStamp& s) {
    return "cann_version=" + s.version + "\ncann_line=" + s.line() + "\n";
}

std::optional<std::string> cann_mismatch(const CannStamp& stamp, std::string_view host) {
    auto host_line = cann_line(host);
    if (!host_line || *host_line == stamp.line())
        return std::nullopt;
    return "built for CANN " + stamp.version + " (line " + stamp.line() +
           "), and the toolkit here is CANN " + std::string(host) + " (line " + *host_line + ")";
}

} // namespace skforge::package
