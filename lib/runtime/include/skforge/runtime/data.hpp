// SPDX-License-Identifier: Apache-2.0
#pragma once

// Tensor contents for running a package without a model around it: pseudo-random inputs, inputs
// read from files, bitwise comparison. On their own (skforge_runtime_data) so that a client of
// libskforge_runtime such as skrun uses them without a second copy of the runtime.
#include <cstddef>
#include <cstdint>
#include <string>

namespace skforge::runtime {

/// Fills `memory` (`bytes` of graph dtype `dtype`) with the values of tensor number `index` for
/// `seed`: floats uniform in [-1, 1), int8 in [-127, 127], bool and uint8 0 or 1, other integers
/// in [0, 16); the same arguments give the same bytes. Throws naming the dtype when unknown.
void random_fill(void* memory, std::uint64_t bytes, const std::string& dtype, std::size_t index,
                 std::uint64_t seed);

/// Reads tensor `name` from `<dir>/<name>.bin` (raw, little-endian) into `memory`; throws naming
/// the file when it is missing or not exactly `bytes` long.
void read_tensor_file(void* memory, std::uint64_t bytes, const std::string& dir,
                      const std::string& name, const std::string& dtype);

/// Where two copies of a tensor differ.
struct Difference {
    std::string tensor;
    std::uint64_t first_byte = 0; ///< offset of the first differing byte
    std::uint64_t differing_bytes = 0;
};

/// Compares `bytes` bytes of `a` and `b`.
Difference compare_bytes(const std::string& tensor, const void* a, const void* b,
                         std::uint64_t bytes);

} // namespace skforge::runtime
