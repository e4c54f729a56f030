// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <string>

namespace skforge::support {

/// How the library reports progress of long operations; the app decides where it goes.
class Progress {
  public:
    virtual ~Progress() = default;
    /// A task of `total` units (bytes) starts.
    virtual void begin(const std::string& label, std::uint64_t total) = 0;
    /// `done` units of the current task are complete.
    virtual void update(std::uint64_t done) = 0;
    /// The current task is over.
    virtual void end() = 0;
};

/// Reports nothing.
class NullProgress final : public Progress {
  public:
    void begin(const std::string&, std::uint64_t) override {}
    void update(std::uint64_t) override {}
    void end() override {}
};

/// A one-line bar on standard error, redrawn at most once per percent; only for a TTY. Tasks
/// smaller than `min_total` units draw nothing, so small jobs stay quiet.
class TerminalProgress final : public Progress {
  public:
    explicit TerminalProgress(std::uint64_t min_total = 0) : m_min_total(min_total) {}
    void begin(const std::string& label, std::uint64_t total) override;
    void update(std::uint64_t done) override;
    void end() override;

  private:
    std::uint64_t m_min_total;
    std::string m_label;
    std::uint64_t m_total = 0;
    bool m_active = false;
    int m_shown = -1;
};

} // namespace skforge::support
