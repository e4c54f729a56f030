// SPDX-License-Identifier: Apache-2.0
#pragma once

// What both program loaders (host/program.json, npu/program.json) check of every number they
// read: a program is input, even in an installed package. Each check throws a support::Error
// naming the file and the field ("<file>: ops[2].block_dim: ...").
#include "skforge/runtime/package.hpp"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace skforge::runtime::check {

/// Our limit on a SuperKernel's parameter table on an NPU: slots of 8 bytes.
constexpr std::uint64_t k_max_slots = 65536;

/// `v` as an integer from `low` to `high`; else throws naming `field` of `file`.
std::int64_t integer(const nlohmann::json& v, std::int64_t low, std::int64_t high,
                     const std::string& file, const std::string& field);
/// ... for unsigned integers up to `high`.
std::uint64_t unsigned_integer(const nlohmann::json& v, std::uint64_t high, const std::string& file,
                               const std::string& field);

/// `v` as a list of integers (each any int64), or `fallback` when `v` is null and one is given;
/// else throws naming `field` and the element (a float such as 3e20 is not read as an integer:
/// converting it would be undefined).
std::vector<std::int64_t> integers(const nlohmann::json& v, const std::string& file,
                                   const std::string& field);

/// The member `key` of object `j` as an integer of type T (every value T holds), or `fallback`
/// when absent (no fallback: required, and a missing one is a damaged program).
template <class T>
T member(const nlohmann::json& j, const char* key, const std::string& file,
         const std::string& where, std::optional<T> fallback = std::nullopt) {
    if (fallback && !j.contains(key))
        return *fallback;
    const auto& v = j.at(key);
    if constexpr (std::is_signed_v<T>)
        return static_cast<T>(integer(v, std::numeric_limits<T>::min(),
                                      std::numeric_limits<T>::max(), file, where + "." + key));
    else
        return static_cast<T>(
            unsigned_integer(v, std::numeric_limits<T>::max(), file, where + "." + key));
}

/// `v` as an index into a list of `size` `what` (e.g. "tensors"); else throws naming `field`.
std::size_t index(const nlohmann::json& v, std::size_t size, const char* what,
                  const std::string& file, const std::string& field);

/// Throws naming `where`.shape when the tensor has more than SK_MAX_RANK dims.
void rank(const TensorInfo& t, const std::string& file, const std::string& where);

/// The tensor's shape (`where`.shape): at most SK_MAX_RANK dims (the kernel ABI's and
/// skf_tensor_info's), none negative; returns its element count, which fits in 64 bits.
std::uint64_t elements(const TensorInfo& t, const std::string& file, const std::string& where);

/// The size of a 64-byte aligned block for `bytes` bytes (at least 64), or nullopt when that
/// does not fit in a size_t: what the host runtime allocates for a tensor, a workspace, a
/// parameter block or skf_device_malloc.
std::optional<std::uint64_t> block_size(std::uint64_t bytes);

/// Throws naming `field` unless block_size(bytes) fits.
void allocatable(std::uint64_t bytes, const std::string& file, const std::string& field);

/// Throws naming the tensor when two tensors have the same name (a caller binds by name).
void unique_names(const std::vector<TensorInfo>& tensors, const std::string& file);

} // namespace skforge::runtime::check
