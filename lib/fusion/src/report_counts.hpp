// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/fusion/plan.hpp"

#include <array>
#include <cstddef>
#include <string>

namespace skforge::fusion {

/// How many of the segment's barriers are vector, cube and full wide, in that order.
std::array<std::size_t, 3> barrier_counts(const Segment& s);

/// The barriers of the naive plan: a full one between every two consecutive sub-kernels.
std::size_t naive_barriers(const Segment& s);

/// The launch as the text plan and the picture show it: "blockDim B, coreType, taskRation R",
/// on an NPU target followed by ", KERNEL_TYPE_… (largest sub-kernel blockDim M)".
std::string launch_text(const Segment& s);

} // namespace skforge::fusion
