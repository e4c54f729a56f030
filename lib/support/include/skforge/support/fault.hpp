// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string_view>

namespace skforge::support {

/// A named step of a transaction where a test may kill the process. In builds configured with
/// SKFORGE_FAULT_INJECTION, the N-th call (N from the environment variable SKFORGE_FAULT_AT)
/// prints the step's name to stderr and ends the process at once with _exit(99), as a power cut
/// or `kill -9` would: no destructor, no cleanup. Elsewhere it does nothing.
void fault_point(std::string_view step);

} // namespace skforge::support
