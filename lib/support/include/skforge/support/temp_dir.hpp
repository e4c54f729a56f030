#pragma once

#include <string>
#include <string_view>

namespace skforge::support {

/// A new private directory `<parent>/<prefix>XXXXXX`, removed with everything in it when the
/// object goes away (scratch space for a child process's files).
class TempDir {
  public:
    /// Creates it (mode 0700); throws an Error naming `parent` when it cannot.
    TempDir(const std::string& parent, std::string_view prefix);
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    /// The directory's path.
    const std::string& path() const { return m_path; }

  private:
    std::string m_path;
};

/// Where scratch directories go: $TMPDIR when set and not empty, else /tmp.
std::string temp_parent();

} // namespace skforge::support
