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

#include "op_store.hpp"

#include "skforge/package/reader.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/fault.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
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

// The store's own small JSON files (an entry's metadata, config.json, stats.json) are read
// within this limit; a .run is copied and hashed, never read whole, so it has none.
constexpr std::uint64_t k_max_small_json = std::uint64_t(1) << 20;
constexpr support::ReadLimits k_small_json{k_max_small_json, support::Follow::no};
constexpr support::ReadLimits k_run_file{UINT64_MAX, support::Follow::no};

using Warn = std::function<void(const std::string&)>;

bool is_key(std::string_view s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

void require_key(const std::string& key) {
    if (!is_key(key))
        throw Error("cache key '" + key + "' is not 64 lower-case hex digits");
}

// The store's directory, open once. Every file inside is reached relative to this descriptor or
// to a shard's, never following a symbolic link (O_NOFOLLOW, AT_SYMLINK_NOFOLLOW): a link put
// inside the store cannot make skc read or write anywhere else.
struct Root {
    int fd;
    const std::string& dir;
};

// One shard directory DIR/<key[0:2]>, open; `fd` empty when it does not exist.
struct Shard {
    UniqueFd fd;
    std::string path;
    std::string file(const std::string& name) const { return path + "/" + name; }
};

std::string shard_of(const std::string& key) {
    return key.substr(0, 2);
}

// True when `name` exists in the directory open at `dir_fd` (a link counts, unfollowed).
bool exists_at(int dir_fd, const std::string& name) {
    struct stat st {};
    return ::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

enum class Create { no, yes };

// Opens the shard `name`; throws when it is anything but a directory (a symbolic link is not
// followed, whatever it points to).
Shard open_shard(const Root& root, const std::string& name, Create create) {
    Shard s{UniqueFd(), root.dir + "/" + name};
    if (create == Create::yes && ::mkdirat(root.fd, name.c_str(), 0777) != 0 && errno != EEXIST)
        throw support::io_error("cannot create the cache directory", s.path, errno);
    s.fd.reset(::openat(root.fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (s.fd)
        return s;
    int err = errno;
    struct stat st {};
    if (::fstatat(root.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
        throw Error(
            "cache shard '" + s.path + "' is " +
            (S_ISLNK(st.st_mode) ? "a symbolic link" : "not a directory") +
            ": skc does not follow or write through it (skc cache verify --fix removes it)");
    if (err != ENOENT || create == Create::yes)
        throw support::io_error("cannot open the cache directory", s.path, err);
    return s;
}

// An fcntl open-file-description lock on the whole of DIR/lock, held for the object's life.
class StoreLock {
  public:
    enum class Kind { shared, exclusive };
    StoreLock(const Root& root, Kind kind) {
        const std::string path = root.dir + "/lock";
        // A shared lock needs only read access: a cache one may read but not write still hits.
        // O_NONBLOCK: a FIFO put there opens at once and is refused below.
        int access = kind == Kind::shared ? O_RDONLY : O_RDWR;
        m_fd.reset(::openat(root.fd, "lock", access | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                            0666));
        if (!m_fd)
            throw support::io_error("cannot open the cache lock", path, errno);
        struct stat st {};
        if (::fstat(m_fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
            throw Error("cache lock '" + path + "' is not a regular file");
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

struct stat stat_fd(int fd, const std::string& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw support::io_error("cannot stat", path, errno);
    return st;
}

json entry_json(const CacheEntry& e) {
    return {{"key", e.key},
            {"sha256", e.sha256},
            {"size", e.size},
            {"created", e.created},
            {"last_used", e.last_used}};
}

// The JSON document `name` in the directory open at `dir_fd` (at `path`): a regular file of at
// most k_max_small_json bytes, not a link. Throws an Error saying what is wrong.
json read_small_json(int dir_fd, const std::string& name, const std::string& path) {
    json j = support::parse_json(support::read_file_at(dir_fd, name, path, k_small_json));
    if (j.is_discarded())
        throw Error("'" + path + "' is not JSON");
    if (!j.is_object())
        throw Error("'" + path + "' is not a JSON object");
    return j;
}

// The metadata of `key` in shard `s`; throws an Error saying what is wrong with it.
CacheEntry read_meta(const Shard& s, const std::string& key) {
    const std::string name = key + ".json";
    json j = read_small_json(s.fd.get(), name, s.file(name));
    using support::json_get;
    auto k = json_get<std::string>(j, "key");
    auto sha = json_get<std::string>(j, "sha256");
    auto size = json_get<std::uint64_t>(j, "size");
    auto created = json_get<std::int64_t>(j, "created");
    auto used = json_get<std::int64_t>(j, "last_used");
    const std::pair<const char*, bool> fields[] = {{"key", bool(k)},
                                                   {"sha256", bool(sha)},
                                                   {"size", bool(size)},
                                                   {"created", bool(created)},
                                                   {"last_used", bool(used)}};
    for (const auto& [field, ok] : fields)
        if (!ok)
            throw Error(std::string("malformed metadata: \"") + field + "\" is missing or not " +
                        (std::string_view(field) == "key" || std::string_view(field) == "sha256"
                             ? "a string"
                             : "an integer in range"));
    if (*k != key || sha->size() != 64)
        throw Error("it describes another entry");
    return {*k, *sha, *size, *created, *used};
}

// Writes `j` as `name` in the directory open at `dir_fd` (at `dir`), whole or not at all.
void write_json_at(int dir_fd, const std::string& dir, const std::string& name, const json& j) {
    support::AtomicFile f(dir_fd, dir, name, 0644);
    f.write(support::dump_json(j, 2) + "\n");
    f.commit();
}

// Removes `name` from the directory open at `dir_fd` (at `dir`) if it is there (a link itself,
// never what it points to); true when it was.
bool remove_at(int dir_fd, const std::string& dir, const std::string& name) {
    if (::unlinkat(dir_fd, name.c_str(), 0) == 0)
        return true;
    if (errno != ENOENT)
        throw support::io_error("cannot remove", dir + "/" + name, errno);
    return false;
}

// A file of the store: `name` in the root (`shard` empty) or in one shard.
struct Item {
    std::string shard, name;
};

std::string item_path(const Root& root, const Item& i) {
    return root.dir + "/" + (i.shard.empty() ? "" : i.shard + "/") + i.name;
}

// Removes the file `i` (unfollowed); true when it was there.
bool remove_item(const Root& root, const Item& i) {
    if (i.shard.empty())
        return remove_at(root.fd, root.dir, i.name);
    Shard s = open_shard(root, i.shard, Create::no);
    return s.fd && remove_at(s.fd.get(), s.path, i.name);
}

// What one scan of the store found.
struct Scan {
    std::vector<CacheEntry> entries;
    std::vector<CacheProblem> bad; // metadata without a usable .run, or unreadable
    std::vector<Item> damaged;     // the files of `bad`, in the same order
    std::vector<Item> orphans;     // <key>.run without metadata
    std::vector<Item> stale_temps; // temporaries older than k_stale_temp_ms
    std::vector<Item> strays;      // a link or file where a shard directory belongs
};

// Adds `name` in the directory open at `fd` to the stale temporaries when it is one: a dot file
// older than k_stale_temp_ms.
void note_temp(int fd, const std::string& shard, const std::string& name, std::int64_t now,
               Scan& scan) {
    struct stat st {};
    if (name.starts_with(".") && ::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && now - std::int64_t(st.st_mtime) * 1000 > k_stale_temp_ms)
        scan.stale_temps.push_back({shard, name});
}

// Sorts the files of one shard into the scan.
void scan_shard(const Root& root, const std::string& shard, std::int64_t now, Scan& scan) {
    Shard s = open_shard(root, shard, Create::no);
    if (!s.fd)
        return; // removed since the directory was listed
    auto names = support::list_directory(s.fd.get(), s.path);
    auto has = [&](const std::string& n) {
        return std::binary_search(names.begin(), names.end(), n);
    };
    for (const auto& name : names) {
        std::string stem = name.substr(0, name.rfind('.'));
        if (name.starts_with(".")) {
            note_temp(s.fd.get(), shard, name, now, scan);
        } else if (is_key(stem) && stem.starts_with(shard) && name.ends_with(".run")) {
            if (!has(stem + ".json"))
                scan.orphans.push_back({shard, name});
        } else if (is_key(stem) && stem.starts_with(shard) && name.ends_with(".json")) {
            try {
                CacheEntry e = read_meta(s, stem);
                if (!has(stem + ".run"))
                    throw Error("its .run is missing");
                scan.entries.push_back(e);
            } catch (const Error& e) {
                scan.bad.push_back({s.file(name), e.what(), false});
                scan.damaged.push_back({shard, name});
            }
        }
    }
}

Scan scan_store(const Root& root, std::int64_t now) {
    Scan scan;
    for (const auto& name : support::list_directory(root.fd, root.dir)) {
        struct stat st {};
        bool shard = name.size() == 2 && is_key(name + std::string(62, '0'));
        if (!shard || ::fstatat(root.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            note_temp(root.fd, "", name, now, scan); // stats.json's, config.json's
        else if (S_ISDIR(st.st_mode))
            scan_shard(root, name, now, scan);
        else
            scan.strays.push_back({"", name});
    }
    return scan;
}

// Removes the entry of `key`: metadata first, so that the entry is gone before its .run is.
void remove_entry(const Root& root, const std::string& key) {
    remove_item(root, {shard_of(key), key + ".json"});
    remove_item(root, {shard_of(key), key + ".run"});
}

// The bytes of the op_compiler front end's op files of entry `key` in the store at `dir`, 0
// when it made none: they count with the entry against max_size (op-compiler.md).
std::uint64_t op_files_size(const std::string& dir, const std::string& key) {
    struct stat st {};
    return ::lstat(op_files_path(dir, key).c_str(), &st) == 0 && S_ISREG(st.st_mode)
               ? static_cast<std::uint64_t>(st.st_size)
               : 0;
}

// Removes least recently used entries of `entries` until their sizes, with their op files, add
// up to at most `limit`.
CleanResult evict_to(const Root& root, std::vector<CacheEntry> entries, std::uint64_t limit) {
    std::uint64_t total = 0;
    for (auto& e : entries) {
        e.size += op_files_size(root.dir, e.key);
        total += e.size;
    }
    std::sort(entries.begin(), entries.end(), [](const CacheEntry& a, const CacheEntry& b) {
        return a.last_used != b.last_used ? a.last_used < b.last_used : a.key < b.key;
    });
    CleanResult r;
    for (const auto& e : entries) {
        if (total <= limit)
            break;
        remove_entry(root, e.key);
        ::unlink(op_files_path(root.dir, e.key).c_str()); // its op files go with it
        total -= e.size;
        r.bytes += e.size;
        ++r.removed;
    }
    return r;
}

// The counters of DIR/stats.json; missing they start at zero, damaged with a warning.
json read_counters(const Root& root, const Warn& warn) {
    if (!exists_at(root.fd, "stats.json"))
        return json::object();
    try {
        return read_small_json(root.fd, "stats.json", root.dir + "/stats.json");
    } catch (const Error& e) {
        warn(std::string(e.what()) + ": the cache's counters start afresh");
    }
    return json::object();
}

// The counter `name` of `j`; one that is not a count is taken as 0, with a warning.
std::uint64_t counter(const json& j, const char* name, const Root& root, const Warn& warn) {
    if (!j.contains(name))
        return 0;
    if (auto v = support::json_get<std::uint64_t>(j, name))
        return *v;
    std::string shown = support::dump_json(j[name]).substr(0, 40);
    warn(root.dir + "/stats.json: \"" + name + "\" is " + shown + ", not a count: taken as 0");
    return 0;
}

// Adds one to each counter in `names` (under the exclusive lock).
void count(const Root& root, std::initializer_list<const char*> names, const Warn& warn) {
    json j = read_counters(root, warn);
    for (const char* name : names)
        j[name] = counter(j, name, root, warn) + 1;
    write_json_at(root.fd, root.dir, "stats.json", j);
}

std::optional<std::uint64_t> configured_max_size(const Root& root) {
    if (!exists_at(root.fd, "config.json"))
        return std::nullopt; // no configuration: no limit
    const std::string path = root.dir + "/config.json";
    json j = read_small_json(root.fd, "config.json", path);
    if (!j.contains("max_size"))
        return std::nullopt;
    const json& v = j["max_size"];
    if (auto bytes = support::json_as<std::uint64_t>(v))
        return bytes;
    if (auto text = support::json_as<std::string>(v))
        if (auto size = parse_size(*text))
            return size;
    throw Error(path + ": max_size " + support::dump_json(v).substr(0, 40) +
                " is not a size (bytes, or digits with K, M, G or T; expected {\"max_size\": "
                "\"10G\"})");
}

// Puts a verified copy of the entry for `key` (in shard `s`) at `dest`; returns what is wrong
// with the entry instead ("" when none), `dest` then untouched. `found` gets the metadata when
// it was read. Only what is wrong with the entry is returned: failing to write `dest` throws.
std::string copy_out(const Shard& s, const std::string& key, const std::string& dest,
                     std::optional<CacheEntry>& found) {
    support::AtomicFile out(dest, k_run_mode);
    UniqueFd in;
    const std::string run = key + ".run";
    try {
        found = read_meta(s, key);
        in = support::open_regular_at(s.fd.get(), run, s.file(run), k_run_file);
    } catch (const Error& e) {
        return e.what();
    }
    clone_or_copy(in.get(), out.fd(), s.file(run));
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
bool still(const Shard& s, const CacheEntry& e) {
    try {
        return s.fd && read_meta(s, e.key).sha256 == e.sha256;
    } catch (const Error&) {
        return false;
    }
}

UniqueFd open_root(const std::string& dir) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        throw support::io_error("cannot open the cache directory", dir, errno);
    return fd;
}

} // namespace

void check_run(int fd, const std::string& path, const CacheEntry& e) {
    auto size = static_cast<std::uint64_t>(stat_fd(fd, path).st_size);
    if (size != e.size)
        throw Error(std::to_string(size) + " bytes, the metadata says " + std::to_string(e.size));
    std::string sha = support::sha256_fd(fd, path).sha256;
    if (sha != e.sha256)
        throw Error("SHA-256 " + sha + ", the metadata says " + e.sha256);
    package::RunPackage run(path);
    run.check_layout();
    run.verify_digests();
    run.read_manifest();
}

CacheStore::CacheStore(CacheStoreOptions options) : m_options(std::move(options)) {
    if (m_options.dir.empty())
        throw Error("the cache directory is empty", support::ErrorKind::usage);
    if (!m_options.warn)
        m_options.warn = [](const std::string&) {};
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
    m_root = open_root(m_options.dir);
    m_max_size = m_options.max_size ? m_options.max_size
                                    : configured_max_size(Root{m_root.get(), m_options.dir});
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
    const Root root{m_root.get(), m_options.dir};
    std::optional<CacheEntry> found;
    std::string problem;
    bool absent = false;
    {
        // Shared: entries are not removed while this one is copied out.
        StoreLock lock(root, StoreLock::Kind::shared);
        Shard s = open_shard(root, shard_of(key), Create::no);
        absent = !s.fd || !exists_at(s.fd.get(), key + ".json");
        if (!absent)
            problem = copy_out(s, key, dest, found);
    }
    const std::string run_path = root.dir + "/" + shard_of(key) + "/" + key + ".run";
    if (absent) {
        StoreLock lock(root, StoreLock::Kind::exclusive);
        count(root, {"misses"}, m_options.warn);
        return {FetchOutcome::miss, {}};
    }
    if (!problem.empty()) {
        StoreLock lock(root, StoreLock::Kind::exclusive);
        // Unreadable metadata, or the entry found bad and still the same one.
        if (!found || still(open_shard(root, shard_of(key), Create::no), *found))
            remove_entry(root, key);
        count(root, {"corrupt", "misses"}, m_options.warn);
        return {FetchOutcome::corrupt,
                "cache entry " + run_path + " is damaged (" + problem + "): removed"};
    }
    try {
        StoreLock lock(root, StoreLock::Kind::exclusive);
        Shard s = open_shard(root, shard_of(key), Create::no);
        if (still(s, *found)) {
            found->last_used = std::max(found->last_used, now());
            write_json_at(s.fd.get(), s.path, key + ".json", entry_json(*found));
        }
        count(root, {"hits"}, m_options.warn);
    } catch (const Error&) {
        // A cache this process may read but not write: the verified copy is in place all the same.
    }
    return {FetchOutcome::hit, {}};
}

CleanResult CacheStore::insert(const std::string& key, const std::string& run_path) {
    require_key(key);
    const Root root{m_root.get(), m_options.dir};
    Shard s = open_shard(root, shard_of(key), Create::yes);
    const std::string meta = key + ".json";
    if (exists_at(s.fd.get(), meta))
        return {}; // another writer was first: same key, same bytes
    // Copy and fsync before taking the lock: the lock is held only to rename and record.
    UniqueFd in = support::open_regular(run_path, {UINT64_MAX, support::Follow::yes});
    support::AtomicFile tmp(s.fd.get(), s.path, key + ".run", k_run_mode);
    clone_or_copy(in.get(), tmp.fd(), run_path);
    auto digest = support::sha256_fd(tmp.fd(), tmp.temp_path());
    CacheEntry e{key, digest.sha256, digest.size, 0, 0};
    if (::fsync(tmp.fd()) != 0)
        throw support::io_error("cannot fsync", tmp.temp_path(), errno);
    support::fault_point("cache insert: .run copied, not renamed");
    StoreLock lock(root, StoreLock::Kind::exclusive);
    if (exists_at(s.fd.get(), meta))
        return {};
    tmp.commit();
    support::fault_point("cache insert: .run renamed, no metadata");
    e.created = e.last_used = now();
    write_json_at(s.fd.get(), s.path, meta, entry_json(e));
    support::fault_point("cache insert: entry complete, not evicted");
    if (!m_max_size)
        return {};
    return evict_to(root, scan_store(root, now()).entries, *m_max_size);
}

std::vector<CacheEntry> CacheStore::entries() const {
    const Root root{m_root.get(), m_options.dir};
    StoreLock lock(root, StoreLock::Kind::shared);
    return scan_store(root, now()).entries;
}

CacheStats CacheStore::stats() const {
    const Root root{m_root.get(), m_options.dir};
    StoreLock lock(root, StoreLock::Kind::shared);
    CacheStats s;
    for (const auto& e : scan_store(root, now()).entries) {
        ++s.entries;
        s.total_size += e.size + op_files_size(root.dir, e.key); // what max_size limits
    }
    json j = read_counters(root, m_options.warn);
    s.hits = counter(j, "hits", root, m_options.warn);
    s.misses = counter(j, "misses", root, m_options.warn);
    s.corrupt = counter(j, "corrupt", root, m_options.warn);
    s.max_size = m_max_size;
    return s;
}

CleanResult CacheStore::clean(const CleanRequest& request) {
    if (request.to_max_size && !m_max_size)
        throw Error("the cache " + m_options.dir + " has no max_size to clean down to: set it in " +
                        m_options.dir + "/config.json ({\"max_size\": \"10G\"}) or give one",
                    support::ErrorKind::usage);
    const Root root{m_root.get(), m_options.dir};
    StoreLock lock(root, StoreLock::Kind::exclusive);
    Scan scan = scan_store(root, now());
    CleanResult r;
    std::vector<CacheEntry> kept;
    const bool everything = !request.older_than_ms && !request.to_max_size;
    for (const auto& e : scan.entries) {
        if (everything || (request.older_than_ms && now() - e.last_used > *request.older_than_ms)) {
            remove_entry(root, e.key);
            r.bytes += e.size;
            ++r.removed;
        } else {
            kept.push_back(e);
        }
    }
    if (request.to_max_size && m_max_size) {
        CleanResult lru = evict_to(root, kept, *m_max_size);
        r.removed += lru.removed;
        r.bytes += lru.bytes;
    }
    for (const auto& list : {scan.orphans, scan.stale_temps})
        for (const auto& item : list)
            r.leftovers += remove_item(root, item) ? 1u : 0u;
    // The op_compiler front end's files: what the packages left need, and no lock in use.
    clean_op_store(m_options.dir,
                   everything ? std::nullopt : std::optional(scan_store(root, now()).entries), r);
    return r;
}

VerifyResult CacheStore::verify(VerifyFix fix) {
    const Root root{m_root.get(), m_options.dir};
    StoreLock lock(root,
                   fix == VerifyFix::remove ? StoreLock::Kind::exclusive : StoreLock::Kind::shared);
    Scan scan = scan_store(root, now());
    VerifyResult r{scan.entries.size(), {}};
    // Records a problem; with --fix removes what it names through `remove`.
    auto report = [&](std::string path, std::string reason, const std::function<void()>& remove) {
        r.problems.push_back({std::move(path), std::move(reason), false});
        if (fix == VerifyFix::remove) {
            remove();
            r.problems.back().removed = true;
        }
    };
    for (std::size_t i = 0; i < scan.bad.size(); ++i)
        report(scan.bad[i].path, scan.bad[i].reason,
               [&] { remove_entry(root, scan.damaged[i].name.substr(0, 64)); });
    for (const auto& e : scan.entries) {
        const std::string path = root.dir + "/" + shard_of(e.key) + "/" + e.key + ".run";
        try {
            Shard s = open_shard(root, shard_of(e.key), Create::no);
            UniqueFd fd = support::open_regular_at(s.fd.get(), e.key + ".run", path, k_run_file);
            check_run(fd.get(), path, e);
        } catch (const Error& ex) {
            report(path, ex.what(), [&] { remove_entry(root, e.key); });
        }
    }
    for (const auto& item : scan.orphans)
        report(item_path(root, item), "a .run without metadata (its writer was interrupted)",
               [&] { remove_item(root, item); });
    for (const auto& item : scan.stale_temps)
        report(item_path(root, item), "a temporary file left by an interrupted writer",
               [&] { remove_item(root, item); });
    for (const auto& item : scan.strays)
        report(item_path(root, item),
               "not a directory (a symbolic link or a file where a shard belongs): never followed",
               [&] { remove_item(root, item); });
    return r;
}

} // namespace skforge::compile
