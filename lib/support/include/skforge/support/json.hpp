// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace skforge::support {

/// `text` parsed, or a discarded value when it is not JSON or nests deeper than
/// k_max_json_depth (json_depth.hpp); never throws.
nlohmann::json parse_json(std::string_view text);

/// `j` as JSON text (`indent` as nlohmann's dump), every byte of a string that is not valid
/// UTF-8 replaced by U+FFFD instead of throwing: what skforge writes never fails on a name
/// or path read from a file or the command line; C1 controls are written as \u escapes.
std::string dump_json(const nlohmann::json& j, int indent = -1);

/// `v` as a T when it is one, else nullopt; never throws and never converts out of range.
/// std::uint64_t and std::int64_t take integers within their range (no fraction, no 1e30, no
/// negative byte count); double takes any number; std::string and bool only their own type.
template <class T> std::optional<T> json_as(const nlohmann::json& v);
template <> std::optional<std::uint64_t> json_as<std::uint64_t>(const nlohmann::json& v);
template <> std::optional<std::int64_t> json_as<std::int64_t>(const nlohmann::json& v);
template <> std::optional<double> json_as<double>(const nlohmann::json& v);
template <> std::optional<std::string> json_as<std::string>(const nlohmann::json& v);
template <> std::optional<bool> json_as<bool>(const nlohmann::json& v);

/// The member `key` of `j` as a T (json_as), or nullopt when `j` is not an object or has no
/// such member: how every JSON value skforge reads is checked before use.
template <class T> std::optional<T> json_get(const nlohmann::json& j, std::string_view key) {
    if (!j.is_object())
        return std::nullopt;
    auto it = j.find(key);
    return it == j.end() ? std::nullopt : json_as<T>(*it);
}

/// The member `key` of `j` when `j` is an object and the member is of type `type`, else null.
const nlohmann::json* json_member(const nlohmann::json& j, std::string_view key,
                                  nlohmann::json::value_t type);

/// The member `key` of a document skforge built itself (a command's result, rendered as text
/// from its JSON): a string, or an unsigned count. A missing or mistyped member is a programming
/// error and throws nlohmann's exception; documents read from files go through json_get.
inline std::string field_str(const nlohmann::json& j, const char* key) {
    return j.at(key).get<std::string>();
}
inline unsigned long long field_num(const nlohmann::json& j, const char* key) {
    return j.at(key).get<unsigned long long>();
}

} // namespace skforge::support
