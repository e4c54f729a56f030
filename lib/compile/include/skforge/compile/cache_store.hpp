// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/file.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::compile {

/// Bytes in `text`: digits with an optional K, M, G or T suffix (powers of 1024, an optional
/// trailing "B" or "iB"), e.g. "10G", "512MiB", "4096"; nullopt when it is not one.
std::optional<std::uint64_t> parse_size(std::string_view text);

/// `bytes` for people: "10.0 GiB", "512 B".
std::string format_size(std::uint64_t bytes);

/// One entry of a store: DIR/<key[0:2]>/<key>.run and its metadata DIR/<key[0:2]>/<key>.json.
struct CacheEntry {
    std::string key;            ///< 64 lower-case hex digits (compile's cache key)
    std::string sha256;         ///< of the .run
    std::uint64_t size = 0;     ///< of the .run, in bytes
    std::int64_t created = 0;   ///< Unix time in milliseconds
    std::int64_t last_used = 0; ///< Unix time in milliseconds: inserted or last hit
};

/// Throws an Error saying what is wrong unless the file open at `fd` has `expected`'s size and
/// SHA-256 and `path` reads as a whole .run (layout, payload digest, manifest).
void check_run(int fd, const std::string& path, const CacheEntry& expected);

/// Whether a store that does not exist yet is made.
enum class CacheOpen {
    create,   ///< make the directory (skc compile)
    existing, ///< refuse a missing directory (skc cache)
};

/// How to open a store.
struct CacheStoreOptions {
    std::string dir;
    std::optional<std::uint64_t> max_size; ///< overrides DIR/config.json's max_size
    CacheOpen open = CacheOpen::create;
    std::function<std::int64_t()> now; ///< Unix time in ms; empty: the system clock
    /// Told what the store found damaged and worked around (a stats.json that is not JSON, a
    /// counter that is not a count); empty: nothing is said.
    std::function<void(const std::string&)> warn;
};

/// What a lookup found.
enum class FetchOutcome {
    hit,     ///< the entry was verified and copied into place
    miss,    ///< no entry for the key
    corrupt, ///< the entry failed verification and was removed
};

/// A lookup's outcome; `problem` names the entry and what was wrong with it when corrupt.
struct FetchResult {
    FetchOutcome outcome = FetchOutcome::miss;
    std::string problem;
};

/// Counters and sizes of a store.
struct CacheStats {
    std::size_t entries = 0;
    std::uint64_t total_size = 0; ///< of the entries' .run files
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
    std::uint64_t corrupt = 0;             ///< entries found bad by lookups and removed
    std::optional<std::uint64_t> max_size; ///< nullopt: unlimited
};

/// What clean removes. Neither field set: every entry.
struct CleanRequest {
    std::optional<std::int64_t> older_than_ms; ///< entries not used for longer than this
    bool to_max_size = false; ///< least recently used entries until the store fits max_size
};

/// What clean or an eviction removed.
struct CleanResult {
    std::size_t removed = 0;
    std::uint64_t bytes = 0;
    std::size_t leftovers = 0;  ///< temporaries of crashed writers and .run files without metadata
    std::size_t op_map = 0;     ///< op_compiler's op map lines (clean only)
    std::size_t op_files = 0;   ///< op_compiler's op files (clean only)
    std::uint64_t op_bytes = 0; ///< their size
    std::size_t op_locks = 0;   ///< op_compiler's key locks no process held
    std::size_t locks_held = 0; ///< key locks kept: a running op_compiler holds them
};

/// Something verify found wrong.
struct CacheProblem {
    std::string path;
    std::string reason;
    bool removed = false;
};

/// What verify checked and found.
struct VerifyResult {
    std::size_t checked = 0; ///< entries whose .run was checked
    std::vector<CacheProblem> problems;
};

/// Whether verify removes what it finds wrong.
enum class VerifyFix {
    report, ///< only report
    remove, ///< remove bad entries and leftovers
};

/// A content-addressed store of .run files that several skc processes, on one host or on
/// several sharing the directory over NFS, use at once. Every change happens under an fcntl
/// open-file-description lock on DIR/lock (shared while an entry is read, exclusive while
/// entries are added or removed); every file appears by rename of a temporary written and
/// fsynced in the same directory, and an entry exists only once its metadata does (written
/// after its .run), so a reader never sees a partial entry.
class CacheStore {
  public:
    /// Opens the store at options.dir (see CacheOpen); reads DIR/config.json's max_size.
    explicit CacheStore(CacheStoreOptions options);

    /// The store's directory.
    const std::string& dir() const { return m_options.dir; }
    /// The size limit in force (the option, else config.json), or nullopt: unlimited.
    std::optional<std::uint64_t> max_size() const { return m_max_size; }

    /// Copies (or reflinks) the entry for `key` to `dest`, replacing it whole, after checking
    /// the copy's SHA-256 against the entry's and its structure as a .run. A bad entry is
    /// removed and reported as corrupt; `dest` is then untouched. Counts the hit or miss.
    FetchResult fetch(const std::string& key, const std::string& dest);

    /// Adds the .run at `run_path` under `key` (kept as it is when an entry exists), then
    /// evicts least recently used entries until the store fits max_size; returns what it evicted.
    CleanResult insert(const std::string& key, const std::string& run_path);

    /// Every entry (sorted by key).
    std::vector<CacheEntry> entries() const;

    /// Counters and sizes.
    CacheStats stats() const;

    /// Removes what `request` selects, and leftovers of crashed writers older than an hour.
    CleanResult clean(const CleanRequest& request);

    /// Checks every entry (metadata, size, SHA-256, the .run's structure) and reports what is
    /// wrong; with VerifyFix::remove removes it.
    VerifyResult verify(VerifyFix fix);

  private:
    CacheStoreOptions m_options;
    support::UniqueFd m_root; // the store's directory: everything inside is reached through it
    std::optional<std::uint64_t> m_max_size;

    std::int64_t now() const;
};

} // namespace skforge::compile
