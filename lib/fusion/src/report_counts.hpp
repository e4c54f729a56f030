#pragma once

#include "skforge/fusion/plan.hpp"

#include <array>
#include <cstddef>

namespace skforge::fusion {

/// How many of the segment's barriers are vector, cube and full wide, in that order.
std::array<std::size_t, 3> barrier_counts(const Segment& s);

/// The barriers of the naive plan: a full one between every two consecutive sub-kernels.
std::size_t naive_barriers(const Segment& s);

} // namespace skforge::fusion
