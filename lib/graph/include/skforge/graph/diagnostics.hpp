#pragma once

#include <string>
#include <vector>

namespace skforge::graph {

/// Where something is in a file (1-based; 0 when unknown).
struct Location {
    std::string file;
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
