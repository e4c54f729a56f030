// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/layout.hpp"

#include "skforge/package/path_rules.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/printable.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <thread>
#include <unistd.h>

namespace skforge::install {

using support::Error;
using support::UniqueFd;

std::string choose_install_path(const std::string& option) {
    if (!option.empty() && option.front() == '~')
        throw Error("install path '" + option +
                        "': the shell did not expand '~' (it does not after '=', as in "
                        "--install-path=~/x); write --install-path ~/x (two words) or "
                        "--install-path=$HOME/x, or ./" +
                        option + " for a directory really named '~'",
                    support::ErrorKind::usage);
    if (!option.empty())
        return option;
    const char* env = std::getenv("ASCEND_HOME_PATH");
    if (env != nullptr && *env != '\0')
        return env;
    throw Error("no install path: pass --install-path PATH or set ASCEND_HOME_PATH",
                support::ErrorKind::usage);
}

std::string absolute_install_path(const std::string& given, const std::string& resolved) {
    std::string out;
    if (given.empty() || given.front() != '/') {
        char cwd[PATH_MAX];
        if (::getcwd(cwd, sizeof cwd) == nullptr)
            return resolved;
        out = cwd;
    }
    std::size_t start = 0;
    while (start <= given.size()) {
        std::size_t slash = given.find('/', start);
        std::string comp = given.substr(start, slash == std::string::npos ? slash : slash - start);
        if (comp == "..")
            return resolved;
        if (!comp.empty() && comp != ".")
            out += (out.ends_with("/") ? "" : "/") + comp;
        if (slash == std::string::npos)
            break;
        start = slash + 1;
    }
    return out.empty() ? "/" : out;
}

Modes Modes::for_process(bool install_for_all) {
    if (::geteuid() == 0)
        return {0755, true};
    return install_for_all ? Modes{0775, true} : Modes{0770, false};
}

std::optional<Modes> Modes::of_package_dir(mode_t dir_mode) {
    switch (dir_mode & 07777) {
    case 0755:
        return Modes{0755, true};
    case 0770:
        return Modes{0770, false};
    case 0775:
        return Modes{0775, true};
    default:
        return std::nullopt;
    }
}

std::optional<InstallTree> InstallTree::open(const std::string& install_path, Create create,
                                             Modes modes) {
    char buf[PATH_MAX];
    if (::realpath(install_path.c_str(), buf) == nullptr) {
        if (errno != ENOENT)
            throw support::io_error("cannot resolve install path", install_path, errno);
        throw Error("install path '" + support::printable(install_path) +
                    "' does not exist. It is the CANN toolkit root that holds opp/ (CANN's "
                    "set_env.sh sets ASCEND_HOME_PATH to it, e.g. "
                    "/usr/local/Ascend/ascend-toolkit/latest); " +
                    (create == Create::yes
                         ? "for a new tree, create the directory first: mkdir -p '" +
                               support::printable(install_path) + "'"
                         : std::string("nothing is installed there")));
    }
    std::string resolved = buf;
    int fd = ::open(resolved.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        throw support::io_error("cannot open install path", install_path, errno);
    Dir dir{UniqueFd(fd), absolute_install_path(install_path, resolved)};
    for (const char* comp : {"opp", "static_kernel", "ai_core"}) {
        if (create == Create::yes) {
            dir = ensure_dir(dir, comp, modes.dir);
            continue;
        }
        auto next = open_dir_beneath(dir, comp);
        if (!next)
            return std::nullopt;
        dir = std::move(*next);
    }
    return InstallTree(std::move(dir), resolved, modes);
}

Dir InstallTree::config_dir() const {
    return ensure_dir(m_ai_core, k_config_dir, m_modes.dir);
}

void InstallTree::require_writable() const {
    auto check = [](const Dir& d) {
        if (auto why = write_refusal(d))
            throw Error(*why);
    };
    check(m_ai_core);
    if (auto log = open_dir_beneath(m_ai_core, k_log_dir))
        check(*log);
    auto config = open_dir_beneath(m_ai_core, k_config_dir);
    if (!config)
        return;
    check(*config);
    for (const auto& name : list_dir(*config)) {
        auto st = stat_at(*config, name);
        if (st && S_ISDIR(st->st_mode))
            if (auto soc = open_dir_beneath(*config, name))
                check(*soc);
    }
}

std::vector<std::string> InstallTree::install_order() const {
    auto text = read_file_at(m_ai_core, k_config_ini);
    return text ? parse_config_ini(*text) : std::vector<std::string>{};
}

void InstallTree::write_install_order(const std::vector<std::string>& order, Sync sync) const {
    write_file_at(m_ai_core, k_config_ini, render_config_ini(order), m_modes.file(0644), sync);
}

std::optional<std::string> runtime_path_problem(const std::string& given,
                                                const std::string& resolved) {
    for (const auto* path : {&given, &resolved})
        if (path->find(".o") != std::string::npos)
            return "the install path '" + *path +
                   "' contains \".o\": CANN's runtime cuts a static kernel's path at its first "
                   "\".o\" to find the kernel's JSON, so it will not read these kernels' JSON "
                   "there; install under a path without \".o\"";
    return std::nullopt;
}

std::string render_config_ini(const std::vector<std::string>& order) {
    std::string line;
    for (const auto& n : order)
        line += (line.empty() ? "" : ",") + n;
    return "# skforge: static-kernel packages in install order, oldest first\ninstall_order=" +
           line + "\n";
}

std::vector<std::string> parse_config_ini(const std::string& text) {
    // Line by line, as the scripts' skf_read_order reads it: the first line that starts with
    // "install_order=" holds the list; a comment or another key that mentions it is not that
    // line; a line may end in CR (a file edited on Windows).
    std::string_view list;
    for (std::size_t at = 0; at < text.size();) {
        std::size_t end = std::min(text.find('\n', at), text.size());
        std::string_view line(text.data() + at, end - at);
        if (line.ends_with('\r'))
            line.remove_suffix(1);
        if (line.starts_with("install_order=")) {
            list = line.substr(14);
            break;
        }
        at = end + 1;
    }
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t comma = std::min(list.find(',', start), list.size());
        std::string name(list.substr(start, comma - start));
        if (!package::check_package_name(name))
            out.push_back(name);
        start = comma + 1;
    }
    return out;
}

namespace {

// "pid N (command line)" for the process /proc/locks says holds a lock on the file `fd` is open
// on, or "another process" when /proc does not say.
std::string lock_holder(int fd) {
    struct stat st {};
    std::ifstream locks("/proc/locks");
    if (::fstat(fd, &st) != 0 || !locks)
        return "another process";
    char dev[32];
    std::snprintf(dev, sizeof dev, "%02x:%02x:%llu", major(st.st_dev), minor(st.st_dev),
                  static_cast<unsigned long long>(st.st_ino));
    std::string line;
    while (std::getline(locks, line)) {
        std::istringstream in(line);
        std::string id, kind, advisory, mode, pid, where;
        in >> id >> kind;
        if (kind == "->" || kind != "FLOCK")
            continue; // a waiter, or a POSIX lock
        in >> advisory >> mode >> pid >> where;
        if (where != dev || pid == std::to_string(::getpid()))
            continue;
        std::ifstream cmd("/proc/" + pid + "/cmdline", std::ios::binary);
        std::string args((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
        std::replace(args.begin(), args.end(), '\0', ' ');
        while (!args.empty() && args.back() == ' ')
            args.pop_back();
        if (auto slash = args.find_last_of('/', args.find(' ')); slash != std::string::npos)
            args.erase(0, slash + 1);
        if (args.size() > 160)
            args = args.substr(0, 157) + "...";
        return "pid " + pid + (args.empty() ? "" : " (" + args + ")");
    }
    return "another process";
}

} // namespace

namespace {
std::atomic<std::uint64_t> g_lock_generation{0};
} // namespace

std::uint64_t TreeLock::generation() {
    return g_lock_generation.load();
}

TreeLock::~TreeLock() {
    ++g_lock_generation;
}

TreeLock::TreeLock(const InstallTree& tree, LockMode mode, const LockWait& wait) {
    ++g_lock_generation;
    std::optional<Dir> existing;
    if (mode == LockMode::shared) {
        // Readers create nothing: without a lock file no writer has ever run here.
        existing = open_dir_beneath(tree.ai_core(), k_config_dir);
        if (!existing || !stat_at(*existing, k_lock_file))
            return;
    }
    Dir config = existing ? std::move(*existing) : tree.config_dir();
    std::string path = config.path + "/" + k_lock_file;
    // A shared lock needs only a read-only descriptor, so queries work for users who cannot
    // write the tree and on read-only mounts; O_NONBLOCK so a FIFO planted there cannot hang us.
    if (mode == LockMode::shared) {
        m_fd = open_beneath(config, k_lock_file, O_RDONLY | O_NONBLOCK);
    } else {
        try {
            m_fd = open_beneath(config, k_lock_file, O_RDWR | O_CREAT | O_NONBLOCK,
                                tree.modes().file(0644));
        } catch (const Error&) {
            // Another member of the run user's group created it (0640): flock needs no write
            // access, so a read-only descriptor locks it as well.
            m_fd = open_beneath(config, k_lock_file, O_RDONLY | O_NONBLOCK);
            if (!m_fd)
                throw;
        }
    }
    if (!m_fd && mode == LockMode::shared)
        return; // removed since we looked: no writer holds it
    struct stat st {};
    if (!m_fd || ::fstat(m_fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error("refusing lock '" + path + "': not a regular file");
    int op = mode == LockMode::exclusive ? LOCK_EX : LOCK_SH;
    if (::flock(m_fd.get(), op | LOCK_NB) == 0)
        return;
    if (errno != EWOULDBLOCK && errno != EINTR)
        throw support::io_error("cannot lock", path, errno);
    std::string held = "the lock '" + path + "' held by " + lock_holder(m_fd.get());
    if (wait.timeout_seconds && *wait.timeout_seconds <= 0)
        throw Error("gave up waiting for " + held + " (--lock-timeout 0)");
    if (wait.log != nullptr)
        wait.log->warn("waiting for " + held);
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::duration<double>(wait.timeout_seconds.value_or(0));
    while (::flock(m_fd.get(), op | (wait.timeout_seconds ? LOCK_NB : 0)) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR)
            throw support::io_error("cannot lock", path, errno);
        if (wait.timeout_seconds && std::chrono::steady_clock::now() >= deadline) {
            std::ostringstream secs;
            secs << *wait.timeout_seconds;
            throw Error("gave up after " + secs.str() + " s waiting for " + held +
                        " (--lock-timeout)");
        }
        if (wait.timeout_seconds)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

} // namespace skforge::install
