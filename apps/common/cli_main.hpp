// SPDX-License-Identifier: Apache-2.0
#pragma once

// The main() shared by skforge's executables: a table of subcommands, --help/--version, and the
// one place where errors become messages and exit codes (0 ok, 1 failure, 2 usage).
#include "skforge/support/error.hpp"
#include "skforge/support/format.hpp"
#include "skforge/support/log.hpp"
#include "skforge/support/printable.hpp"

#include <boost/program_options.hpp>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <clocale>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace skforge::cli {

/// A message of one or more lines as it may reach the terminal (support::printable): messages
/// quote names and paths read from packages, which must not reach it as escape sequences.
inline std::string terminal_safe(std::string_view m) {
    return support::printable(m, support::Lines::keep);
}

/// printf to stdout through support::printable (newlines and tabs kept): what a command prints
/// may quote names, paths and fields read from trees, logs, caches and packages, which must not
/// reach the terminal as escape sequences.
[[gnu::format(printf, 1, 2)]] inline void print_safe(const char* format, ...) {
    va_list args;
    va_start(args, format);
    std::string text = support::vformat(format, args);
    va_end(args);
    std::fputs(terminal_safe(text).c_str(), stdout);
}

/// Messages from the library: information on `info_to` (stdout, or stderr when stdout carries
/// the command's result) unless quiet, warnings on stderr as `WARN: ...`.
class ConsoleLog final : public support::Log {
  public:
    explicit ConsoleLog(bool quiet = false, std::FILE* info_to = stdout)
        : m_quiet(quiet), m_to(info_to) {}
    void info(const std::string& m) override {
        if (!m_quiet)
            std::fprintf(m_to, "%s\n", terminal_safe(m).c_str());
    }
    void warn(const std::string& m) override {
        std::fprintf(stderr, "WARN: %s\n", terminal_safe(m).c_str());
    }

  private:
    bool m_quiet;
    std::FILE* m_to;
};

/// The width of every --help: fixed, not the terminal's, so the text (and share/doc/cli.md,
/// which holds it verbatim) is the same everywhere.
constexpr unsigned k_help_width = 80;

/// `text` as an integer option's value in [min, max], or a usage error naming `option`. Parsed
/// as signed text: "-1" for a count is refused, not wrapped to four billion.
inline std::int64_t parse_integer(const std::string& option, const std::string& text,
                                  std::int64_t min, std::int64_t max) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max)
        throw support::Error(option + " must be an integer from " + std::to_string(min) + " to " +
                                 std::to_string(max) + ", not '" + text + "'",
                             support::ErrorKind::usage);
    return v;
}

/// An option value parsed by parse_integer into `target` (left alone when the option is absent).
template <class T>
boost::program_options::typed_value<std::string>* integer_value(T& target, const char* option,
                                                                std::int64_t min, std::int64_t max,
                                                                const char* value_name = "N") {
    return boost::program_options::value<std::string>()
        ->value_name(value_name)
        ->notifier([&target, option, min, max](const std::string& text) {
            target = static_cast<T>(parse_integer(option, text, min, max));
        });
}

/// Refuses option words the shell and boost would silently misread: `--opt=~/x` (the shell
/// expands ~ only at the start of a word, so the program would get a literal "~") when no file
/// "~" exists here, and `-o=x` (a short option's value would be "=x").
inline void check_option_words(const std::vector<std::string>& args) {
    for (const auto& a : args) {
        if (a == "--")
            return;
        auto eq = a.find('=');
        if (a.size() < 3 || a[0] != '-' || eq == std::string::npos)
            continue;
        std::string option = a.substr(0, eq), value = a.substr(eq + 1);
        struct stat st {};
        std::string first = value.substr(0, value.find('/'));
        if (value.starts_with('~') && ::lstat(first.c_str(), &st) != 0)
            throw support::Error("'" + a + "': there is no '" + first +
                                     "' here: the shell does not expand ~ after '='; write " +
                                     option + " " + value + " or the full path",
                                 support::ErrorKind::usage);
        if (a[1] != '-' && eq == 2)
            throw support::Error("'" + a + "': a short option takes its value after a space: " +
                                     "write " + option + " " + value,
                                 support::ErrorKind::usage);
    }
}

/// Refuses `value` of `option` unless it names an existing file that is not a directory (an
/// input such as --from X.run), before the command does any work.
inline void require_input_file(const std::string& option, const std::string& value) {
    struct stat st {};
    std::string why = value.empty()                     ? "is empty"
                      : ::stat(value.c_str(), &st) != 0 ? std::strerror(errno)
                      : S_ISDIR(st.st_mode)             ? "is a directory: name a file"
                      : !S_ISREG(st.st_mode)            ? "is not a regular file"
                                                        : "";
    if (!why.empty())
        throw support::Error(option + " '" + value + "': " + why, support::ErrorKind::usage);
}

/// Whether `word` reads as an option (`-q`, `--quiet`), not a value such as `-` or `-1`.
inline bool looks_like_option(const std::string& word) {
    return word.size() >= 2 && word[0] == '-' &&
           (word[1] == '-' || std::isalpha(static_cast<unsigned char>(word[1])));
}

/// `args` parsed against `options` and `positional` in skforge's style (no abbreviations: an
/// option added later must not change what a short prefix meant). An option that takes a value
/// never takes the next option as it: `--install-path --quiet` is refused, not read as the path
/// "--quiet" (`--install-path=--quiet` says that on purpose).
inline boost::program_options::parsed_options
parse_options(const std::vector<std::string>& args,
              const boost::program_options::options_description& options,
              const boost::program_options::positional_options_description& positional) {
    namespace po = boost::program_options;
    auto style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    auto parsed =
        po::command_line_parser(args).options(options).positional(positional).style(style).run();
    for (const auto& opt : parsed.options) {
        const auto& tokens = opt.original_tokens;
        if (opt.position_key >= 0 || tokens.size() != 2 || opt.value.size() != 1 ||
            tokens[1] != opt.value.front() || !looks_like_option(tokens[1]))
            continue;
        throw support::Error(tokens[0] + " needs a value, not the option '" + tokens[1] +
                                 "' (for a value that starts with '-', write " + tokens[0] + "=" +
                                 tokens[1] + ")",
                             support::ErrorKind::usage);
    }
    return parsed;
}

/// Whether `args` ask for the tool's version: a `--version` that no value follows.
/// Prints "<tool> <version>" and the license, as --version answers everywhere.
inline void print_version(const char* tool) {
    std::printf("%s %s\nLicense: Apache-2.0 <https://www.apache.org/licenses/LICENSE-2.0>\n", tool,
                SKFORGE_VERSION);
}

inline bool asks_version(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size() && args[i] != "--"; ++i)
        if (args[i] == "--version" && (i + 1 == args.size() || args[i + 1].starts_with('-')))
            return true;
    return false;
}

/// One command's command line: its options, its positional arguments and its help. Every
/// command also takes -h/--help and --version (the tool's version).
class CommandLine {
  public:
    /// `usage` follows "Usage: "; `summary` says what the command does; `footer` ends the help.
    CommandLine(std::string tool, std::string usage, std::string summary, std::string footer)
        : m_tool(std::move(tool)), m_usage(std::move(usage)), m_summary(std::move(summary)),
          m_footer(std::move(footer)), m_desc("Options", k_help_width) {}

    /// Adds options shown in the help.
    boost::program_options::options_description_easy_init add() { return m_desc.add_options(); }

    /// The positional argument `meta` (as the usage names it) into `target`; required unless
    /// `required` is false.
    void positional(const char* meta, std::string& target, bool required = true) {
        m_hidden.add_options()(meta, boost::program_options::value(&target));
        m_pos.add(meta, 1);
        if (required)
            m_required.emplace_back(meta, &target);
    }

    /// Refuses `--version VALUE` and `--version=VALUE`, the old spelling of --package-version.
    void has_package_version() { m_package_version = true; }

    /// Parses `args`. Returns false when --help or --version was answered (the command is done).
    bool parse(const std::vector<std::string>& args) {
        namespace po = boost::program_options;
        if (m_package_version)
            refuse_version_value(args);
        m_desc.add_options()("help,h", po::bool_switch(), "print this help and exit")(
            "version", po::bool_switch(), ("print " + m_tool + "'s version and exit").c_str());
        po::options_description all(m_desc);
        all.add(m_hidden);
        po::variables_map vm;
        po::store(parse_options(args, all, m_pos), vm);
        // Answered before notify(): --help needs no required option.
        if (vm["help"].as<bool>()) {
            std::printf("Usage: %s\n%s\n\n", m_usage.c_str(), m_summary.c_str());
            std::cout << m_desc << "\n" << m_footer << "\n";
            return false;
        }
        if (vm["version"].as<bool>()) {
            print_version(m_tool.c_str());
            return false;
        }
        po::notify(vm);
        for (const auto& [meta, target] : m_required)
            if (target->empty())
                throw po::error(std::string("missing ") + meta);
        return true;
    }

  private:
    void refuse_version_value(const std::vector<std::string>& args) const {
        for (std::size_t i = 0; i < args.size() && args[i] != "--"; ++i) {
            std::string value;
            if (args[i].starts_with("--version="))
                value = args[i].substr(10);
            else if (args[i] == "--version" && i + 1 < args.size() && !args[i + 1].starts_with('-'))
                value = args[i + 1];
            else
                continue;
            throw support::Error("--version prints " + m_tool +
                                     "'s version and takes no value; give the package version "
                                     "as --package-version " +
                                     value,
                                 support::ErrorKind::usage);
        }
    }

    std::string m_tool, m_usage, m_summary, m_footer;
    boost::program_options::options_description m_desc;
    boost::program_options::options_description m_hidden;
    boost::program_options::positional_options_description m_pos;
    std::vector<std::pair<const char*, std::string*>> m_required;
    bool m_package_version = false;
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
    std::vector<std::string> args(argv + 2, argv + argc);
    if (name == "help" && !args.empty()) { // `skc help pack` is `skc pack --help`
        name = args.front();
        args = {"--help"};
    }
    if (name == "--help" || name == "-h" || name == "help") {
        print_usage(stdout, tool, commands, footer);
        return 0;
    }
    if (name == "--version") {
        print_version(tool);
        return 0;
    }
    for (const auto& c : commands) {
        if (name != c.name)
            continue;
        try {
            check_option_words(args);
            if (asks_version(args)) {
                print_version(tool);
                return 0;
            }
            return c.run(args);
        } catch (const boost::program_options::error& e) {
            std::fprintf(stderr, "%s %s: %s (see %s %s --help)\n", tool, c.name,
                         terminal_safe(e.what()).c_str(), tool, c.name);
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
    std::fprintf(stderr, "%s: unknown command '%s'\n", tool, terminal_safe(name).c_str());
    print_usage(stderr, tool, commands, footer);
    return 2;
}

} // namespace skforge::cli
