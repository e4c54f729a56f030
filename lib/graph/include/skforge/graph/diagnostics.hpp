// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace skforge::graph {

/// Where something is in a file (1-based; 0 when unknown). The file name is shared, so the
/// hundreds of thousands of locations of a large graph cost no allocation each.
struct Location {
    Location() = default;
    Location(std::shared_ptr<const std::string> file_, int line_, int column_)
        : file(std::move(file_)), line(line_), column(column_) {}
    Location(const std::string& file_, int line_, int column_)
        : Location(std::make_shared<const std::string>(file_), line_, column_) {}
    Location(const char* file_, int line_, int column_)
        : Location(std::string(file_), line_, column_) {}

    /// The file's name ("" when unknown).
    const std::string& file_name() const;

    std::shared_ptr<const std::string> file;
    int line = 0;
    int column = 0;
};

/// How bad a diagnostic is.
enum class Severity { error, warning };

/// One finding, shown to the user as `file:line:col: error: message (hint)`.
struct Diagnostic {
    Severity severity = Severity::error;
    Location where;
    std::string message;
    std::string hint; ///< what to do; may be empty
};

/// Collects every finding of a pipeline step so the user sees all of them at once.
class Diagnostics {
  public:
    /// Adds an error.
    void error(const Location& where, std::string message, std::string hint = {});
    /// Adds a warning.
    void warning(const Location& where, std::string message, std::string hint = {});
    /// Adds everything `other` holds, in its order (reports gathered on other threads).
    void append(const Diagnostics& other);
    /// True when any error was added.
    bool has_errors() const { return m_errors > 0; }
    /// Number of errors.
    std::size_t error_count() const { return m_errors; }
    /// Everything, in the order it was found.
    const std::vector<Diagnostic>& items() const { return m_items; }
    /// One line per diagnostic.
    std::string format() const;

  private:
    std::vector<Diagnostic> m_items;
    std::size_t m_errors = 0;
};

/// `file:line:col: error: message (hint)`.
std::string format_diagnostic(const Diagnostic& d);

} // namespace skforge::graph
