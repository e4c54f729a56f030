#pragma once

// The main() shared by skforge's executables: a table of subcommands, --help/--version, and the
// one place where errors become messages and exit codes (0 ok, 1 failure, 2 usage).
#include "skforge/support/error.hpp"
#include "skforge/support/log.hpp"

#include <boost/program_options/errors.hpp>
#include <clocale>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace skforge::cli {

/// `m` with every control character but newline and tab shown as '?': messages quote names and
/// paths read from packages, which must not reach the terminal as escape sequences.
inline std::string terminal_safe(std::string m) {
    for (char& c : m)
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
            c = '?';
    return m;
}

/// Messages from the library: information on stdout (unless quiet), warnings on stderr as
/// `WARN: ...`.
class ConsoleLog final : public support::Log {
  public:
    explicit ConsoleLog(bool quiet = false) : m_quiet(quiet) {}
    void info(const std::string& m) override {
        if (!m_quiet)
            std::printf("%s\n", terminal_safe(m).c_str());
    }
    void warn(const std::string& m) override {
        std::fprintf(stderr, "WARN: %s\n", terminal_safe(m).c_str());
    }

  private:
    bool m_quiet;
};

/// One subcommand: its name, a line of help, and the handler given the remaining arguments.
struct Command {
    const char* name;
    const char* help;
    std::function<int(const std::vector<std::string>&)> run;
};

/// Prints "Usage: TOOL COMMAND [options]" and the command table to `to`.
inline void print_usage(std::FILE* to, const char* tool, const std::vector<Command>& commands,
                        const char* footer) {
    std::fprintf(to, "Usage: %s COMMAND [options]   (%s COMMAND --help for its options)\n\n", tool,
                 tool);
    for (const auto& c : commands)
        std::fprintf(to, "  %-18s %s\n", c.name, c.help);
    if (footer != nullptr)
        std::fprintf(to, "\n%s\n", footer);
}

/// Dispatches argv[1] to its command and maps every error to an exit code.
inline int run_main(const char* tool, int argc, char** argv, const std::vector<Command>& commands,
                    const char* footer = nullptr) {
    std::setlocale(LC_ALL, "C.UTF-8");
    if (argc < 2) {
        print_usage(stderr, tool, commands, footer);
        return 2;
    }
    std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        print_usage(stdout, tool, commands, footer);
        return 0;
    }
    if (name == "--version") {
        std::printf("%s %s\n", tool, SKFORGE_VERSION);
        return 0;
    }
    for (const auto& c : commands) {
        if (name != c.name)
            continue;
        try {
            return c.run(std::vector<std::string>(argv + 2, argv + argc));
        } catch (const boost::program_options::error& e) {
            std::fprintf(stderr, "%s %s: %s (see %s %s --help)\n", tool, c.name, e.what(), tool,
                         c.name);
            return 2;
        } catch (const support::Error& e) {
            std::fprintf(stderr, "%s %s: error: %s\n", tool, c.name,
                         terminal_safe(e.what()).c_str());
            return e.kind() == support::ErrorKind::usage ? 2 : 1;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s %s: error: %s\n", tool, c.name,
                         terminal_safe(e.what()).c_str());
            return 1;
        }
    }
    std::fprintf(stderr, "%s: unknown command '%s'\n", tool, name.c_str());
    print_usage(stderr, tool, commands, footer);
    return 2;
}

} // namespace skforge::cli
