#include "skforge/install/layout.hpp"

#include "skforge/package/path_rules.hpp"
#include "skforge/support/error.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace skforge::install {

using support::Error;
using support::UniqueFd;

std::string choose_install_path(const std::string& option) {
    if (!option.empty())
        return option;
    const char* env = std::getenv("ASCEND_HOME_PATH");
    if (env != nullptr && *env != '\0')
        return env;
    throw Error("no install path: pass --install-path PATH or set ASCEND_HOME_PATH",
                support::ErrorKind::usage);
}

std::optional<InstallTree> InstallTree::open(const std::string& install_path, Create create) {
    char buf[PATH_MAX];
    if (::realpath(install_path.c_str(), buf) == nullptr)
        throw support::io_error("cannot resolve install path", install_path, errno);
    std::string resolved = buf;
    int fd = ::open(resolved.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        throw support::io_error("cannot open install path", install_path, errno);
    Dir dir{UniqueFd(fd), install_path};
    for (const char* comp : {"opp", "static_kernel", "ai_core"}) {
        if (create == Create::yes) {
            dir = ensure_dir(dir, comp, 0755);
            continue;
        }
        auto next = open_dir_beneath(dir, comp);
        if (!next)
            return std::nullopt;
        dir = std::move(*next);
    }
    return InstallTree(std::move(dir), resolved);
}

Dir InstallTree::config_dir() const {
    return ensure_dir(m_ai_core, k_config_dir, 0755);
}

std::vector<std::string> InstallTree::install_order() const {
    auto text = read_file_at(m_ai_core, k_config_ini);
    return text ? parse_config_ini(*text) : std::vector<std::string>{};
}

void InstallTree::write_install_order(const std::vector<std::string>& order) const {
    write_file_at(m_ai_core, k_config_ini, render_config_ini(order), 0644);
}

std::string render_config_ini(const std::vector<std::string>& order) {
    std::string line;
    for (const auto& n : order)
        line += (line.empty() ? "" : ",") + n;
    return "# skforge: static-kernel packages in install order, oldest first\ninstall_order=" +
           line + "\n";
}

std::vector<std::string> parse_config_ini(const std::string& text) {
    std::vector<std::string> out;
    std::size_t pos = text.find("install_order=");
    if (pos == std::string::npos || (pos != 0 && text[pos - 1] != '\n'))
        return out;
    std::size_t end = text.find('\n', pos);
    std::string list =
        text.substr(pos + 14, end == std::string::npos ? std::string::npos : end - pos - 14);
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t comma = list.find(',', start);
        std::string name =
            list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!package::check_package_name(name))
            out.push_back(name);
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    return out;
}

TreeLock::TreeLock(const InstallTree& tree, LockMode mode) {
    std::optional<Dir> existing;
    if (mode == LockMode::shared) {
        // Readers create nothing: without a lock file no writer has ever run here.
        existing = open_dir_beneath(tree.ai_core(), k_config_dir);
        if (!existing || !stat_at(*existing, k_lock_file))
            return;
    }
    Dir config = existing ? std::move(*existing) : tree.config_dir();
    // A shared lock needs only a read-only descriptor, so queries work for users who cannot
    // write the tree and on read-only mounts; O_NONBLOCK so a FIFO planted there cannot hang us.
    m_fd = mode == LockMode::shared
               ? open_beneath(config, k_lock_file, O_RDONLY | O_NONBLOCK)
               : open_beneath(config, k_lock_file, O_RDWR | O_CREAT | O_NONBLOCK, 0644);
    if (!m_fd && mode == LockMode::shared)
        return; // removed since we looked: no writer holds it
    struct stat st {};
    if (!m_fd || ::fstat(m_fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error("refusing lock '" + config.path + "/" + k_lock_file + "': not a regular file");
    int op = mode == LockMode::exclusive ? LOCK_EX : LOCK_SH;
    while (::flock(m_fd.get(), op) != 0)
        if (errno != EINTR)
            throw support::io_error("cannot lock", config.path + "/" + k_lock_file, errno);
}

} // namespace skforge::install
