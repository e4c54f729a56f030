// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/progress.hpp"

#include <cstdio>

namespace skforge::support {

void TerminalProgress::begin(const std::string& label, std::uint64_t total) {
    m_label = label;
    m_total = total;
    m_shown = -1;
    m_active = total >= m_min_total;
    update(0);
}

void TerminalProgress::update(std::uint64_t done) {
    if (!m_active)
        return;
    int percent = m_total == 0 ? 100 : static_cast<int>(done * 100 / m_total);
    if (percent == m_shown)
        return;
    m_shown = percent;
    constexpr int k_width = 30;
    int filled = percent * k_width / 100;
    std::fprintf(stderr, "\r%s [%-*.*s] %3d%%", m_label.c_str(), k_width, filled,
                 "##############################", percent);
    std::fflush(stderr);
}

void TerminalProgress::end() {
    // A task ends complete: work the updates did not count (generated files) is done too.
    if (m_shown >= 0 && m_shown < 100)
        update(m_total);
    if (m_shown >= 0)
        std::fputs("\n", stderr);
    m_shown = -1;
}

} // namespace skforge::support
