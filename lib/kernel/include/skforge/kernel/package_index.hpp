// SPDX-License-Identifier: Apache-2.0
#pragma once

// A package's own static-kernel index as skc writes it (config/<soc dir>/binary_info_config.json):
// the entries CANN's runtime reads (opbase, individual_op/executor/indv_collector.cpp), collected
// per OpType and written in one canonical form, so that the same package gives the same bytes.
#include "skforge/kernel/static_index.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::kernel {

/// One staticList entry: binDesc (blockDim, kernelName, workspace), the integer coreType,
/// binPath relative to static_kernel/ai_core/ and the simplifiedKey a call is matched by.
struct StaticEntry {
    std::uint32_t block_dim = 0;
    std::string kernel_name;
    std::vector<std::uint64_t> workspace;
    CoreType core = CoreType::mix;
    std::string bin_path;
    std::string key;
    bool operator==(const StaticEntry&) const = default;
};

/// A package's index while it is being written: per OpType its staticList, in the order the
/// entries were added, each entry once.
class PackageIndex {
  public:
    /// Adds `entry` to `op_type`'s staticList unless an equal entry is already there.
    void add(const std::string& op_type, StaticEntry entry);
    /// The index as the file holds it: per OpType (sorted) `dynamicRankSupport` true,
    /// `simplifiedKeyMode` 0 and the staticList; two-space JSON and a final newline.
    std::string text() const;
    /// How many entries it holds, over every OpType.
    std::size_t size() const;

  private:
    std::map<std::string, std::vector<StaticEntry>> m_ops;
};

/// `rel` (a file in package `package`) as an index binPath, `<package>/<rel>`. Throws an Error
/// when ".o" appears before the end of a path that ends in ".o": the runtime finds a kernel's JSON
/// by cutting binPath at its first ".o", so it would read the wrong file.
std::string index_bin_path(std::string_view package, std::string_view rel);

} // namespace skforge::kernel
