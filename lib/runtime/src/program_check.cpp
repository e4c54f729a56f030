// SPDX-License-Identifier: Apache-2.0
// The checks both program loaders make of every count, index, rank and size they read.
#include "program_check.hpp"

#include "skforge/support/checked.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/json.hpp"
#include "skforge_host_kernel.h"

#include <map>

namespace skforge::runtime::check {

using nlohmann::json;
using support::Error;

std::int64_t integer(const json& v, std::int64_t low, std::int64_t high, const std::string& file,
                     const std::string& field) {
    auto x = support::json_as<std::int64_t>(v);
    if (!x || *x < low || *x > high)
        throw Error(file + ": " + field + ": " +
                    (v.is_number() ? v.dump() : "a " + std::string(v.type_name())) +
                    " is not an integer from " + std::to_string(low) + " to " +
                    std::to_string(high));
    return *x;
}

std::vector<std::int64_t> integers(const json& v, const std::string& file,
                                   const std::string& field) {
    if (!v.is_array())
        throw Error(file + ": " + field + ": a " + std::string(v.type_name()) +
                    ", not a list of integers");
    std::vector<std::int64_t> out;
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        out.push_back(integer(v[i], std::numeric_limits<std::int64_t>::min(),
                              std::numeric_limits<std::int64_t>::max(), file,
                              field + "[" + std::to_string(i) + "]"));
    return out;
}

std::uint64_t unsigned_integer(const json& v, std::uint64_t high, const std::string& file,
                               const std::string& field) {
    auto x = support::json_as<std::uint64_t>(v);
    if (!x || *x > high)
        throw Error(file + ": " + field + ": " +
                    (v.is_number() ? v.dump() : "a " + std::string(v.type_name())) +
                    " is not an integer from 0 to " + std::to_string(high));
    return *x;
}

std::size_t index(const json& v, std::size_t size, const char* what, const std::string& file,
                  const std::string& field) {
    auto x = support::json_as<std::uint64_t>(v);
    if (!x || *x >= size)
        throw Error(file + ": " + field + ": " +
                    (v.is_number() ? v.dump() : "a " + std::string(v.type_name())) +
                    " is out of range (" + std::to_string(size) + " " + what + ")");
    return static_cast<std::size_t>(*x);
}

void rank(const TensorInfo& t, const std::string& file, const std::string& where) {
    if (t.shape.size() > SK_MAX_RANK)
        throw Error(file + ": " + where + ".shape: " + std::to_string(t.shape.size()) +
                    " dimensions; a tensor has at most " + std::to_string(SK_MAX_RANK) +
                    " (the kernel ABI's and skf_tensor_info's)");
}

std::uint64_t elements(const TensorInfo& t, const std::string& file, const std::string& where) {
    rank(t, file, where);
    std::optional<std::uint64_t> n = 1;
    for (auto d : t.shape) {
        if (d < 0)
            throw Error(file + ": " + where + ".shape: negative dimension " + std::to_string(d));
        n = support::checked_mul(*n, static_cast<std::uint64_t>(d));
        if (!n)
            throw Error(file + ": " + where + ".shape: more elements than 64 bits count");
    }
    return *n;
}

std::optional<std::uint64_t> block_size(std::uint64_t bytes) {
    auto n = support::round_up(bytes == 0 ? 1 : bytes, 64);
    if (!n || *n > std::numeric_limits<std::size_t>::max() / 2) // no object is larger
        return std::nullopt;
    return n;
}

void allocatable(std::uint64_t bytes, const std::string& file, const std::string& field) {
    if (!block_size(bytes))
        throw Error(file + ": " + field + ": " + std::to_string(bytes) +
                    " bytes, more than memory can hold");
}

void unique_names(const std::vector<TensorInfo>& tensors, const std::string& file) {
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < tensors.size(); ++i)
        if (auto [it, fresh] = seen.emplace(tensors[i].name, i); !fresh)
            throw Error(file + ": tensors[" + std::to_string(i) + "]: tensor '" + tensors[i].name +
                        "' is named twice (also tensors[" + std::to_string(it->second) +
                        "]); a caller binds tensors by name");
}

} // namespace skforge::runtime::check
