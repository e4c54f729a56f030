// SPDX-License-Identifier: Apache-2.0
// The shared compile cache: a content-addressed store of .run files in one directory that many
// skc processes, on one host or on CI runners sharing it over NFS, read and write at once.
//
// What it relies on (share/doc/compile.md, "Shared cache"):
// - rename(2) within one directory replaces the target atomically, also on NFS (the server
//   renames), so a file written under a temporary name and fsynced appears whole or not at all;
// - fcntl byte-range locks, in their open-file-description form (F_OFD_SETLKW, Linux 3.15): the
//   Linux NFS client forwards them to the server (NFSv4 LOCK, NFSv3 through lockd) unless the
//   share is mounted with local_lock or nolock. flock(2) is not used: on NFS it is either
//   emulated by the same fcntl locks or, on old kernels and some servers, local to one host.
//   OFD locks belong to the open file, so threads of one process exclude each other too.
#include "skforge/compile/cache_store.hpp"

#include "skforge/package/reader.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/fault.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <linux/fs.h>
#include <nlohmann/json.hpp>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace skforge::compile {

namespace fs = std::filesystem;
using nlohmann::json;
using support::Error;
using support::UniqueFd;

std::optional<std::uint64_t> parse_size(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
        ++digits;
    if (digits == 0 || digits > 15)
        return std::nullopt;
    std::uint64_t value = std::stoull(std::string(text.substr(0, digits)));
    std::string unit(text.substr(digits));
    for (std::string_view suffix : {"iB", "B"})
        if (unit.size() > 1 && unit.ends_with(suffix)) {
            unit.resize(unit.size() - suffix.size());
            break;
        }
    static const std::string k_units = "KMGT";
    if (unit.empty() || unit == "B")
        return value;
    auto at = unit.size() == 1 ? k_units.find(static_cast<char>(std::toupper(unit[0])))
                               : std::string::npos;
    const auto shift = 10 * (at + 1);
    if (at == std::string::npos || value > (UINT64_MAX >> shift))
        return std::nullopt;
    return value << shift;
}

std::string format_size(std::uint64_t bytes) {
    static const char* const k_units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    std::size_t u = 0;
    while (v >= 1024.0 && u + 1 < std::size(k_units)) {
        v /= 1024.0;
        ++u;
    }
    char buf[32];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
    else
        std::snprintf(buf, sizeof buf, "%.1f %s", v, k_units[u]);
    return buf;
}

namespace {

// Leftover temporaries younger than this may belong to a writer still copying (writers copy
// before they take the lock), so only older ones are removed.
constexpr std::int64_t k_stale_temp_ms = 3600 * 1000;

// A .run is a shell script: executable, as skc pack writes it.
constexpr mode_t k_run_mode = 0755;

bool is_key(std::string_view s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

void require_key(const std::string& key) {
    if (!is_key(key))
        throw Error("cache key '" + key + "' is not 64 lower-case hex digits");
}

// An fcntl open-file-description lock on the whole of DIR/lock, held for the object's life.
class StoreLock {
  public:
    enum class Kind { shared, exclusive };
    StoreLock(const std::string& dir, Kind kind) {
        const std::string path = dir + "/lock";
        // A shared lock needs only read access: a cache one may read but not write still hits.
        int access = kind == Kind::shared ? O_RDONLY : O_RDWR;
        m_fd.reset(::open(path.c_str(), access | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666));
        if (!m_fd)
            throw support::io_error("cannot open the cache lock", path, errno);
        struct flock fl {};
        fl.l_type = kind == Kind::shared ? F_RDLCK : F_WRLCK;
        fl.l_whence = SEEK_SET; // l_start = l_len = 0: the whole file; l_pid must be 0
        while (::fcntl(m_fd.get(), F_OFD_SETLKW, &fl) != 0)
            if (errno != EINTR)
                throw support::io_error("cannot lock", path, errno);
    }

  private:
    UniqueFd m_fd; // closing the last descriptor of the open file releases the lock
};

// Copies the whole file open at `in` to `out` (both at offset 0): a reflink where the
// filesystem shares blocks (FICLONE), else an in-kernel copy (copy_file_range, server-side on
// NFS 4.2), else read and write.
void clone_or_copy(int in, int out, const std::string& what) {
    if (::ioctl(out, FICLONE, in) == 0)
        return;
    for (;;) {
        ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, std::size_t(1) << 30, 0);
        if (n == 0)
            return;
        if (n > 0)
            continue;
        if (errno == EINTR)
            continue;
        if (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP)
            break; // not between these files: copy what is left by hand
        throw support::io_error("cannot copy", what, errno);
    }
    std::vector<std::uint8_t> buf(std::size_t(1) << 20);
    for (;;) {
        ssize_t n = ::read(in, buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw support::io_error("cannot read", what, errno);
        if (n == 0)
            return;
        support::write_all(out, std::span(buf.data(), static_cast<std::size_t>(n)), what);
    }
}

// SHA-256 of the whole file open at `fd`, read through positioned reads.
std::string sha256_of(int fd, std::string_view path) {
    support::Sha256 h;
    std::vector<std::uint8_t> buf(std::size_t(1) << 20);
    for (std::uint64_t offset = 0;;) {
        std::size_t n = support::pread_full(fd, buf, offset, path);
        if (n == 0)
            break;
        h.update(std::span<const std::uint8_t>(buf.data(), n));
        offset += n;
    }
    return support::digest_hex(h.finish());
}

struct stat stat_fd(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw support::io_error("cannot stat", path, errno);
    return st;
}

// Throws an Error saying what is wrong unless the file open at `fd` has the entry's size and
// SHA-256 and `path` reads as a whole .run (layout, payload digest, manifest).
void check_run(int fd, const std::string& path, const CacheEntry& e) {
    auto size = static_cast<std::uint64_t>(stat_fd(fd, path).st_size);
    if (size != e.size)
        throw Error(std::to_string(size) + " bytes, the metadata says " + std::to_string(e.size));
    std::string sha = sha256_of(fd, path);
    if (sha != e.sha256)
        throw Error("SHA-256 " + sha + ", the metadata says " + e.sha256);
    package::RunPackage run(path);
    run.check_layout();
    run.verify_digests();
    run.read_manifest();
}

json entry_json(const CacheEntry& e) {
    return {{"key", e.key},
            {"sha256", e.sha256},
            {"size", e.size},
            {"created", e.created},
            {"last_used", e.last_used}};
}

// The metadata at `path` for `key`; throws an Error saying what is wrong with it.
CacheEntry read_meta(const std::string& path, const std::string& key) {
    json j;
    try {
        j = json::parse(support::read_file(path));
        CacheEntry e{j.at("key").get<std::string>(), j.at("sha256").get<std::string>(),
                     j.at("size").get<std::uint64_t>(), j.at("created").get<std::int64_t>(),
                     j.at("last_used").get<std::int64_t>()};
        if (e.key != key || e.sha256.size() != 64)
            throw Error("it describes another entry");
        return e;
    } catch (const json::exception& ex) {
        throw Error("malformed metadata: " + std::string(ex.what()));
    }
}

void write_json(const std::string& path, const json& j) {
    support::AtomicFile f(path, 0644);
    f.write(j.dump(2) + "\n");
    f.commit();
}

// Removes `path` if it exists; true when it did.
bool remove_file(const std::string& path) {
    if (::unlink(path.c_str()) == 0)
        return true;
    if (errno != ENOENT)
        throw support::io_error("cannot remove", path, errno);
    return false;
}

// What one scan of the store found.
struct Scan {
    std::vector<CacheEntry> entries;
    std::vector<CacheProblem> bad;        // metadata without a usable .run, or unreadable
    std::vector<std::string> orphans;     // <key>.run without metadata
    std::vector<std::string> stale_temps; // temporaries older than k_stale_temp_ms
};

class Paths {
  public:
    explicit Paths(std::string dir) : m_dir(std::move(dir)) {}
    std::string shard(const std::string& key) const { return m_dir + "/" + key.substr(0, 2); }
    std::string run(const std::string& key) const { return shard(key) + "/" + key + ".run"; }
    std::string meta(const std::string& key) const { return shard(key) + "/" + key + ".json"; }
    std::string stats() const { return m_dir + "/stats.json"; }
    std::string config() const { return m_dir + "/config.json"; }

  private:
    std::string m_dir;
};

// Adds `name` in the directory open at `fd` (at `path`) to the stale temporaries when it is
// one: a dot file older than k_stale_temp_ms.
void note_temp(int fd, const std::string& path, const std::string& name, std::int64_t now,
               Scan& scan) {
    struct stat st {};
    if (name.starts_with(".") && ::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && now - std::int64_t(st.st_mtime) * 1000 > k_stale_temp_ms)
        scan.stale_temps.push_back(path + "/" + name);
}

// Sorts the files of one shard into the scan.
void scan_shard(const std::string& dir, const std::string& shard, std::int64_t now, Scan& scan) {
    const std::string path = dir + "/" + shard;
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd)
        throw support::io_error("cannot open the cache directory", path, errno);
    auto names = support::list_directory(fd.get(), path);
    auto has = [&](const std::string& n) {
        return std::binary_search(names.begin(), names.end(), n);
    };
    for (const auto& name : names) {
        std::string stem = name.substr(0, name.rfind('.'));
        if (name.starts_with(".")) {
            note_temp(fd.get(), path, name, now, scan);
        } else if (is_key(stem) && stem.starts_with(shard) && name.ends_with(".run")) {
            if (!has(stem + ".json"))
                scan.orphans.push_back(path + "/" + name);
        } else if (is_key(stem) && stem.starts_with(shard) && name.ends_with(".json")) {
            try {
                CacheEntry e = read_meta(path + "/" + name, stem);
                if (!has(stem + ".run"))
                    throw Error("its .run is missing");
                scan.entries.push_back(e);
            } catch (const Error& e) {
                scan.bad.push_back({path + "/" + name, e.what(), false});
            }
        }
    }
}

Scan scan_store(const std::string& dir, std::int64_t now) {
    Scan scan;
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        throw support::io_error("cannot open the cache directory", dir, errno);
    for (const auto& name : support::list_directory(fd.get(), dir)) {
        struct stat st {};
        bool shard = name.size() == 2 && is_key(name + std::string(62, '0'));
        if (shard && ::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISDIR(st.st_mode))
            scan_shard(dir, name, now, scan);
        else
            note_temp(fd.get(), dir, name, now, scan); // stats.json's, config.json's
    }
    return scan;
}

// Removes an entry: metadata first, so that the entry is gone before its .run is.
std::uint64_t remove_entry(const Paths& paths, const CacheEntry& e) {
    remove_file(paths.meta(e.key));
    remove_file(paths.run(e.key));
    return e.size;
}

// Removes least recently used entries of `entries` until their sizes add up to at most `limit`.
CleanResult evict_to(const Paths& paths, std::vector<CacheEntry> entries, std::uint64_t limit) {
    std::uint64_t total = 0;
    for (const auto& e : entries)
        total += e.size;
    std::sort(entries.begin(), entries.end(), [](const CacheEntry& a, const CacheEntry& b) {
        return a.last_used != b.last_used ? a.last_used < b.last_used : a.key < b.key;
    });
    CleanResult r;
    for (const auto& e : entries) {
        if (total <= limit)
            break;
        total -= remove_entry(paths, e);
        r.bytes += e.size;
        ++r.removed;
    }
    return r;
}

// The counters of DIR/stats.json; missing or damaged, they start afresh.
json read_counters(const Paths& paths) {
    try {
        json j = json::parse(support::read_file(paths.stats()));
        if (j.is_object())
            return j;
    } catch (const std::exception&) {
    }
    return json::object();
}

// Adds one to each counter in `names` (under the exclusive lock).
void count(const Paths& paths, std::initializer_list<const char*> names) {
    json j = read_counters(paths);
    for (const char* name : names)
        j[name] = j.value(name, std::uint64_t(0)) + 1;
    write_json(paths.stats(), j);
}

std::optional<std::uint64_t> configured_max_size(const std::string& path) {
    std::string text;
    try {
        text = support::read_file(path);
    } catch (const Error&) {
        if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT)
            return std::nullopt; // no configuration: no limit
        throw;
    }
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw Error(path + ": not a JSON object (expected {\"max_size\": \"10G\"})");
    if (!j.contains("max_size"))
        return std::nullopt;
    const json& v = j["max_size"];
    if (v.is_number_unsigned())
        return v.get<std::uint64_t>();
    if (v.is_string())
        if (auto size = parse_size(v.get<std::string>()))
            return size;
    throw Error(path + ": max_size " + v.dump() +
                " is not a size (bytes, or digits with K, M, G or T)");
}

// Puts a verified copy of the entry for `key` at `dest`; returns what is wrong with the entry
// instead ("" when none), `dest` then untouched. `found` gets the metadata when it was read.
// Only what is wrong with the entry is returned: failing to write `dest` throws.
std::string copy_out(const Paths& paths, const std::string& key, const std::string& dest,
                     std::optional<CacheEntry>& found) {
    support::AtomicFile out(dest, k_run_mode);
    UniqueFd in;
    try {
        found = read_meta(paths.meta(key), key);
        in = support::open_read(paths.run(key), false);
    } catch (const Error& e) {
        return e.what();
    }
    clone_or_copy(in.get(), out.fd(), paths.run(key));
    try {
        check_run(out.fd(), out.temp_path(), *found);
    } catch (const Error& e) {
        return e.what();
    }
    out.commit();
    return {};
}

// True when the metadata of `e`'s key still says what `e` says: between a lookup's shared and
// exclusive lock another process may have removed or replaced the entry, and then it is neither
// touched nor removed.
bool still(const Paths& paths, const CacheEntry& e) {
    try {
        return read_meta(paths.meta(e.key), e.key).sha256 == e.sha256;
    } catch (const Error&) {
        return false;
    }
}

} // namespace

CacheStore::CacheStore(CacheStoreOptions options) : m_options(std::move(options)) {
    if (m_options.dir.empty())
        throw Error("the cache directory is empty", support::ErrorKind::usage);
    struct stat st {};
    if (::stat(m_options.dir.c_str(), &st) != 0) {
        if (errno != ENOENT || m_options.open == CacheOpen::existing)
            throw support::io_error("cannot use the cache directory", m_options.dir, errno);
        std::error_code ec;
        fs::create_directories(m_options.dir, ec);
        if (ec)
            throw Error("cannot create the cache directory '" + m_options.dir +
                        "': " + ec.message());
    } else if (!S_ISDIR(st.st_mode)) {
        throw Error("cache directory '" + m_options.dir + "' is not a directory");
    }
    m_max_size = m_options.max_size ? m_options.max_size
                                    : configured_max_size(Paths(m_options.dir).config());
}

std::int64_t CacheStore::now() const {
    if (m_options.now)
        return m_options.now();
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

FetchResult CacheStore::fetch(const std::string& key, const std::string& dest) {
    require_key(key);
    const Paths paths(m_options.dir);
    std::optional<CacheEntry> found;
    std::string problem;
    bool absent = false;
    {
        // Shared: entries are not removed while this one is copied out.
        StoreLock lock(m_options.dir, StoreLock::Kind::shared);
        absent = ::access(paths.meta(key).c_str(), F_OK) != 0;
        if (!absent)
            problem = copy_out(paths, key, dest, found);
    }
    if (absent) {
        StoreLock lock(m_options.dir, StoreLock::Kind::exclusive);
        count(paths, {"misses"});
        return {FetchOutcome::miss, {}};
    }
    if (!problem.empty()) {
        StoreLock lock(m_options.dir, StoreLock::Kind::exclusive);
        if (!found || still(paths, *found)) // unreadable metadata, or the entry found bad
            remove_entry(paths, CacheEntry{key, {}, 0, 0, 0});
        count(paths, {"corrupt", "misses"});
        return {FetchOutcome::corrupt,
                "cache entry " + paths.run(key) + " is damaged (" + problem + "): removed"};
    }
    try {
        StoreLock lock(m_options.dir, StoreLock::Kind::exclusive);
        if (still(paths, *found)) {
            found->last_used = std::max(found->last_used, now());
            write_json(paths.meta(key), entry_json(*found));
        }
        count(paths, {"hits"});
    } catch (const Error&) {
        // A cache this process may read but not write: the verified copy is in place all the same.
    }
    return {FetchOutcome::hit, {}};
}

CleanResult CacheStore::insert(const std::string& key, const std::string& run_path) {
    require_key(key);
    const Paths paths(m_options.dir);
    if (::access(paths.meta(key).c_str(), F_OK) == 0)
        return {}; // another writer was first: same key, same bytes
    if (::mkdir(paths.shard(key).c_str(), 0777) != 0 && errno != EEXIST)
        throw support::io_error("cannot create the cache directory", paths.shard(key), errno);
    // Copy and fsync before taking the lock: the lock is held only to rename and record.
    UniqueFd in = support::open_read(run_path);
    support::AtomicFile tmp(paths.run(key), k_run_mode);
    clone_or_copy(in.get(), tmp.fd(), run_path);
    CacheEntry e{key, sha256_of(tmp.fd(), tmp.temp_path()),
                 static_cast<std::uint64_t>(stat_fd(tmp.fd(), tmp.temp_path()).st_size), 0, 0};
    if (::fsync(tmp.fd()) != 0)
        throw support::io_error("cannot fsync", tmp.temp_path(), errno);
    support::fault_point("cache insert: .run copied, not renamed");
    StoreLock lock(m_options.dir, StoreLock::Kind::exclusive);
    if (::access(paths.meta(key).c_str(), F_OK) == 0)
        return {};
    tmp.commit();
    support::fault_point("cache insert: .run renamed, no metadata");
    e.created = e.last_used = now();
    write_json(paths.meta(key), entry_json(e));
    support::fault_point("cache insert: entry complete, not evicted");
    if (!m_max_size)
        return {};
    return evict_to(paths, scan_store(m_options.dir, now()).entries, *m_max_size);
}

std::vector<CacheEntry> CacheStore::entries() const {
    StoreLock lock(m_options.dir, StoreLock::Kind::shared);
    return scan_store(m_options.dir, now()).entries;
}

CacheStats CacheStore::stats() const {
    StoreLock lock(m_options.dir, StoreLock::Kind::shared);
    CacheStats s;
    for (const auto& e : scan_store(m_options.dir, now()).entries) {
        ++s.entries;
        s.total_size += e.size;
    }
    json j = read_counters(Paths(m_options.dir));
    s.hits = j.value("hits", std::uint64_t(0));
    s.misses = j.value("misses", std::uint64_t(0));
    s.corrupt = j.value("corrupt", std::uint64_t(0));
    s.max_size = m_max_size;
    return s;
}

CleanResult CacheStore::clean(const CleanRequest& request) {
    if (request.to_max_size && !m_max_size)
        throw Error("the cache " + m_options.dir + " has no max_size to clean down to: set it in " +
                        Paths(m_options.dir).config() + " ({\"max_size\": \"10G\"}) or give one",
                    support::ErrorKind::usage);
    const Paths paths(m_options.dir);
    StoreLock lock(m_options.dir, StoreLock::Kind::exclusive);
    Scan scan = scan_store(m_options.dir, now());
    CleanResult r;
    std::vector<CacheEntry> kept;
    const bool everything = !request.older_than_ms && !request.to_max_size;
    for (const auto& e : scan.entries) {
        if (everything || (request.older_than_ms && now() - e.last_used > *request.older_than_ms)) {
            r.bytes += remove_entry(paths, e);
            ++r.removed;
        } else {
            kept.push_back(e);
        }
    }
    if (request.to_max_size && m_max_size) {
        CleanResult lru = evict_to(paths, kept, *m_max_size);
        r.removed += lru.removed;
        r.bytes += lru.bytes;
    }
    for (const auto& list : {scan.orphans, scan.stale_temps})
        for (const auto& path : list)
            r.leftovers += remove_file(path) ? 1u : 0u;
    return r;
}

VerifyResult CacheStore::verify(VerifyFix fix) {
    const Paths paths(m_options.dir);
    StoreLock lock(m_options.dir,
                   fix == VerifyFix::remove ? StoreLock::Kind::exclusive : StoreLock::Kind::shared);
    Scan scan = scan_store(m_options.dir, now());
    VerifyResult r{scan.entries.size(), scan.bad};
    auto& problems = r.problems;
    for (const auto& e : scan.entries) {
        try {
            UniqueFd fd = support::open_read(paths.run(e.key), false);
            check_run(fd.get(), paths.run(e.key), e);
        } catch (const Error& ex) {
            problems.push_back({paths.run(e.key), ex.what(), false});
        }
    }
    for (const auto& path : scan.orphans)
        problems.push_back({path, "a .run without metadata (its writer was interrupted)", false});
    for (const auto& path : scan.stale_temps)
        problems.push_back({path, "a temporary file left by an interrupted writer", false});
    if (fix == VerifyFix::remove)
        for (auto& p : problems) {
            std::string base = support::base_name(p.path);
            if (base.starts_with(".")) // a temporary
                remove_file(p.path);
            else // an entry's file: the metadata goes first, then the .run
                remove_entry(paths, CacheEntry{base.substr(0, 64), {}, 0, 0, 0});
            p.removed = true;
        }
    return r;
}

} // namespace skforge::compile
