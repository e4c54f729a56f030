// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/fault.hpp"

#ifdef SKFORGE_FAULT_INJECTION
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#endif

namespace skforge::support {

#ifdef SKFORGE_FAULT_INJECTION
void fault_point(std::string_view step) {
    static const long target = [] {
        const char* env = std::getenv("SKFORGE_FAULT_AT");
        return env ? std::atol(env) : 0L;
    }();
    static std::atomic<long> count{0};
    if (target > 0 && ++count == target) {
        std::fprintf(stderr, "fault injected at step %ld: %.*s\n", target,
                     static_cast<int>(step.size()), step.data());
        std::fflush(stderr);
        ::_exit(99);
    }
}
#else
void fault_point(std::string_view) {}
#endif

} // namespace skforge::support
