// SPDX-License-Identifier: Apache-2.0
#include "op_store.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"

#include <cerrno>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <set>
#include <unistd.h>

namespace skforge::compile {

namespace fs = std::filesystem;

namespace {

constexpr const char* k_map_dir = "ops";
constexpr const char* k_files_dir = "op-files";
constexpr const char* k_locks_dir = "op-locks";

std::string sharded(const std::string& dir, const char* sub, const std::string& name) {
    return dir + "/" + sub + "/" + name.substr(0, 2) + "/" + name;
}

bool is_dir(const fs::path& p) {
    std::error_code ec;
    return fs::is_directory(fs::symlink_status(p, ec));
}

// Calls `f` on every regular file in the shard directories of `dir`/`sub` (links are neither
// followed nor visited).
void each_file(const std::string& dir, const char* sub,
               const std::function<void(const fs::path&)>& f) {
    fs::path root = fs::path(dir) / sub;
    if (!is_dir(root))
        return;
    for (const auto& shard : fs::directory_iterator(root)) {
        if (!is_dir(shard.path()))
            continue;
        for (const auto& e : fs::directory_iterator(shard.path()))
            if (e.is_regular_file() && !e.is_symlink())
                f(e.path());
    }
}

// Removes `p`, counting it and its size into `n` and `bytes`.
void remove_counted(const fs::path& p, std::size_t& n, std::uint64_t* bytes) {
    std::error_code ec;
    auto size = fs::file_size(p, ec);
    if (fs::remove(p, ec)) {
        ++n;
        if (bytes != nullptr && size != static_cast<std::uintmax_t>(-1))
            *bytes += size;
    }
}

// Removes every key lock no process holds: each is locked first, so a front end that holds it
// keeps it, and one that opens it meanwhile finds, once it has the lock, that its file is gone
// and takes a new one (KeyLock).
void clean_locks(const std::string& dir, CleanResult& r) {
    fs::path root = fs::path(dir) / k_locks_dir;
    if (!is_dir(root))
        return;
    for (const auto& e : fs::directory_iterator(root)) {
        if (!e.is_regular_file() || e.is_symlink() || e.path().extension() != ".lock")
            continue;
        support::UniqueFd fd(
            ::open(e.path().c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
        if (!fd)
            continue;
        struct flock fl {};
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        if (::fcntl(fd.get(), F_SETLK, &fl) != 0) {
            ++r.locks_held;
            continue;
        }
        if (::unlink(e.path().c_str()) == 0)
            ++r.op_locks;
    }
}

} // namespace

std::string op_map_path(const std::string& dir, const std::string& op_key) {
    return sharded(dir, k_map_dir, op_key);
}

std::string op_files_path(const std::string& dir, const std::string& key) {
    return sharded(dir, k_files_dir, key);
}

std::string op_lock_path(const std::string& dir, const std::string& key) {
    return dir + "/" + k_locks_dir + "/" + key + ".lock";
}

void clean_op_store(const std::string& dir, const std::optional<std::vector<CacheEntry>>& kept,
                    CleanResult& r) {
    std::set<std::string> keys;
    if (kept)
        for (const auto& e : kept.value())
            keys.insert(e.key);
    each_file(dir, k_map_dir, [&](const fs::path& p) {
        std::string text;
        try {
            text = support::read_file(p.string(), {128});
        } catch (const support::Error&) {
        }
        if (!(text.size() == 65 && keys.contains(text.substr(0, 64))))
            remove_counted(p, r.op_map, nullptr);
    });
    each_file(dir, k_files_dir, [&](const fs::path& p) {
        if (!keys.contains(p.filename().string()))
            remove_counted(p, r.op_files, &r.op_bytes);
    });
    clean_locks(dir, r);
}

} // namespace skforge::compile
