// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/interrupt.hpp"

#include <string>
#include <string_view>

namespace skforge::support {

/// A new private directory `<parent>/<prefix><pid>.XXXXXX`, removed with everything in it when
/// the object goes away or the process is interrupted (interrupt.hpp), and by a later run when
/// its process was killed: scratch space for builds and child processes' files.
class TempDir {
  public:
    /// Creates it (mode 0700); throws an Error naming `parent` when it cannot.
    TempDir(const std::string& parent, std::string_view prefix);
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    /// The directory's path.
    const std::string& path() const { return m_path; }
    /// The directory was renamed into place: nothing to remove any more.
    void release();

  private:
    std::string m_path;
    TempRegistration m_registration;
};

/// Where scratch directories go: $TMPDIR when set and not empty, else /tmp.
std::string temp_parent();

} // namespace skforge::support
