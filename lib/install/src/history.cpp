// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/history.hpp"

#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace skforge::install {

using nlohmann::json;
using support::Error;

std::string invoking_user() {
    uid_t uid = ::geteuid();
    const passwd* pw = ::getpwuid(uid);
    std::string user = pw != nullptr ? pw->pw_name : "uid " + std::to_string(uid);
    const char* sudo = std::getenv("SUDO_USER");
    if (uid == 0 && sudo != nullptr && *sudo != '\0')
        user += std::string(" (sudo: ") + sudo + ")";
    return user;
}

std::string utc_time(std::int64_t t) {
    std::time_t tt = t;
    std::tm tm{};
    ::gmtime_r(&tt, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return stamp;
}

json history_line(const std::string& command, const std::string& package,
                  const std::string& old_version, const std::string& new_version,
                  const std::string& action, const std::string& result, const std::string& detail) {
    json line = {{"time", utc_time(std::time(nullptr))},
                 {"user", invoking_user()},
                 {"command", command},
                 {"package", package},
                 {"old_version", old_version},
                 {"new_version", new_version},
                 {"action", action},
                 {"result", result}};
    if (!detail.empty())
        line["detail"] = detail;
    return line;
}

namespace {

// Appends `text` in one write to an fd opened O_APPEND, after checking it is a regular file.
void append_to(support::UniqueFd fd, const std::string& text, const std::string& path) {
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error("refusing log '" + path + "': not a regular file");
    support::write_all(
        fd.get(), std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), path);
}

void append_tree_log(const InstallTree& tree, const std::string& text) {
    Dir dir = ensure_dir(tree.ai_core(), k_log_dir, tree.modes().dir);
    if (auto st = stat_at(dir, k_history_file);
        st && S_ISREG(st->st_mode) &&
        static_cast<std::uint64_t>(st->st_size) + text.size() > k_history_max_bytes) {
        if (::renameat(dir.fd.get(), k_history_file, dir.fd.get(), k_history_old) != 0)
            throw support::io_error("cannot rotate", dir.path + "/" + k_history_file, errno);
    }
    // 0640 (the installing user writes, its group reads); in a run user's tree 0660, so every
    // member of the group that may install there may also append its line.
    mode_t mode = tree.modes().for_others ? 0640 : 0660;
    auto fd = open_beneath(dir, k_history_file, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK, mode);
    struct stat st {};
    if (fd && ::fstat(fd.get(), &st) == 0 && st.st_uid == ::geteuid() &&
        (st.st_mode & 07777) != mode)
        ::fchmod(fd.get(), mode); // creation applied the umask
    // Not fsynced: the history is written after the transaction and is no part of what a crash
    // must keep (installer.md, "History"); the next sync of the file system carries it.
    append_to(std::move(fd), text, dir.path + "/" + k_history_file);
}

} // namespace

void append_history(const InstallTree& tree, const std::vector<json>& lines,
                    const std::string& extra_file) {
    if (lines.empty())
        return;
    std::string text;
    for (const auto& l : lines)
        text += package::json_text(l) + "\n";
    append_tree_log(tree, text);
    if (extra_file.empty())
        return;
    int fd = ::open(extra_file.c_str(),
                    O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0640);
    if (fd < 0)
        throw support::io_error("cannot open the log file", extra_file, errno);
    append_to(support::UniqueFd(fd), text, extra_file);
}

json HistoryEntry::as_json() const {
    return readable() ? line : json{{"unreadable", text}};
}

namespace {

HistoryEntry history_entry(std::string text) {
    json j = package::parse_json_quiet(text);
    if (j.is_object() && j.contains("time") && j["time"].is_string() && j.contains("action") &&
        j["action"].is_string())
        return {std::move(j), {}};
    return {nullptr, std::move(text)};
}

} // namespace

std::vector<HistoryEntry> read_history(const InstallTree& tree) {
    std::vector<HistoryEntry> out;
    auto dir = open_dir_beneath(tree.ai_core(), k_log_dir);
    if (!dir)
        return out;
    for (const char* file : {k_history_old, k_history_file}) {
        auto text = read_file_at(*dir, file, 4 * k_history_max_bytes);
        if (!text)
            continue;
        std::size_t start = 0;
        while (start < text->size()) {
            std::size_t end = text->find('\n', start);
            std::string line = text->substr(start, end == std::string::npos ? end : end - start);
            start = end == std::string::npos ? text->size() : end + 1;
            if (!line.empty())
                out.push_back(history_entry(std::move(line)));
        }
    }
    return out;
}

std::optional<std::string> log_file_problem(const std::string& path) {
    if (path.empty())
        return "is empty";
    if (path.ends_with('/'))
        return "ends in '/': name a file";
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
        if (S_ISLNK(st.st_mode))
            return "is a symbolic link (a history line is never written through one)";
        if (S_ISDIR(st.st_mode))
            return "is a directory: name a file";
        if (!S_ISREG(st.st_mode))
            return "is not a regular file";
        return std::nullopt;
    }
    if (errno != ENOENT)
        return std::string("cannot be examined: ") + std::strerror(errno);
    auto slash = path.rfind('/');
    std::string parent = slash == std::string::npos ? "."
                         : slash == 0               ? "/"
                                                    : path.substr(0, slash);
    if (::stat(parent.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return "is in '" + parent + "', which is not an existing directory";
    return std::nullopt;
}

} // namespace skforge::install
