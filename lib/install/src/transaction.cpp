// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/transaction.hpp"
#include "skforge/package/makeself.hpp"
#include "skforge/support/temp_dir.hpp"

#include "skforge/install/history.hpp"
#include "skforge/install/holders.hpp"
#include "skforge/install/index.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/version.hpp"
#include "skforge/package/generated.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/package/writer.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/fault.hpp"
#include "skforge/support/hex.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

namespace skforge::install {

using nlohmann::json;
using package::EntryType;
using package::ManifestEntry;
using support::Error;
using support::fault_point;
using support::UniqueFd;

namespace {

// CANN's makeself package as a skforge one: imported into a private scratch file, which is
// opened and removed at once (the open file is what is read).
std::shared_ptr<package::RunPackage> open_makeself(const std::string& run_path) {
    support::TempDir scratch(support::temp_parent(), "skforge-vendor-");
    package::ImportOptions o;
    o.input = run_path;
    o.output = scratch.path() + "/imported.run";
    package::import_makeself(o);
    return std::make_shared<package::RunPackage>(o.output);
}

} // namespace

VerifiedPackage verify_package(const std::string& run_path, const Policy& policy,
                               support::Progress* progress) {
    bool imported = package::is_makeself(run_path);
    if (imported && policy.require_signature)
        throw Error(run_path +
                        ": CANN's makeself package carries no skforge signature "
                        "(--require-signature); re-pack it signed with 'skc import " +
                        run_path + " -o X.run --sign-key KEY.pem'",
                    support::ErrorKind::integrity);
    auto run = imported ? open_makeself(run_path) : std::make_shared<package::RunPackage>(run_path);
    // The digest of everything before the trailer is needed only for a signature that will be
    // checked (a trailer and trusted keys); otherwise the payload is hashed once here.
    bool check = run->header().trailer_size != 0 && !policy.trusted.empty();
    auto digest = run->verify_digests(progress, check ? package::RunPackage::ForSignature::yes
                                                      : package::RunPackage::ForSignature::no);
    auto state = run->check_signature(digest, policy.trusted);
    if (auto why =
            package::signature_refusal(state, !policy.trusted.empty(), policy.require_signature))
        throw Error(run_path + ": " + *why, support::ErrorKind::integrity);
    auto manifest = run->read_manifest(policy.limits);
    auto records = run->check_scripts(manifest);
    // skinstall keeps its own notes beside manifest.json; a package may not bring files there.
    for (const char* ours : {k_install_record, k_left_behind})
        if (manifest.find(ours) != nullptr)
            throw Error(run_path + ": the package contains '" + ours +
                        "', a name skinstall keeps for itself in every package directory; "
                        "rename that file and pack again");
    auto trailer =
        state == package::SignatureState::unsigned_package ? std::nullopt : run->trailer();
    return {
        run,      std::move(manifest), state, trailer ? trailer->key_id : std::string(), run_path,
        imported, std::move(records)};
}

std::string_view outcome_name(InstallOutcome outcome) {
    switch (outcome) {
    case InstallOutcome::installed:
        return "installed";
    case InstallOutcome::upgraded:
        return "upgraded";
    case InstallOutcome::downgraded:
        return "downgraded";
    case InstallOutcome::reinstalled:
        return "reinstalled";
    case InstallOutcome::already_installed:
        return "already-installed";
    }
    return "unknown";
}

namespace {

std::string stage_name(const std::string& name) {
    return k_stage_prefix + name;
}

// Writes the payload's entries into the stage directory through handles; nothing is followed and
// nothing pre-exists there (the stage was just created 0700). The file system calls (create,
// write, mode, write-back) run on a writer thread while the reading thread decompresses and
// hashes the next entries: the two costs overlap instead of adding up. The writer takes the
// steps in the order the reader gives them; the first error it meets is rethrown to the reader
// at its next step (or at finish), and the destructor stops and joins it, so the caller's
// removal of the stage never races a write.
class StageSink final : public package::EntrySink {
  public:
    StageSink(const Dir& stage, const Modes& modes, support::Progress* progress)
        : m_stage(stage), m_modes(modes), m_progress(progress), m_writer([this] { write_loop(); }) {
    }
    ~StageSink() override {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        m_writer.join();
    }
    StageSink(const StageSink&) = delete;
    StageSink& operator=(const StageSink&) = delete;

    void begin(const ManifestEntry& e) override { push({Step::begin, e.path, e.type, e.mode, {}}); }
    void data(std::span<const std::uint8_t> bytes) override {
        m_written += bytes.size();
        push({Step::data,
              {},
              EntryType::file,
              0,
              std::vector<std::uint8_t>(bytes.begin(), bytes.end())});
        if (m_progress)
            m_progress->update(m_written);
    }
    void end(const ManifestEntry& e) override { push({Step::end, e.path, e.type, e.mode, {}}); }

    /// Waits until every step is written; rethrows the writer's error.
    void finish() {
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [&] { return (m_steps.empty() && !m_busy) || m_error; });
        if (m_error)
            std::rethrow_exception(m_error);
    }
    /// Each file's stamp as staged (file_stamp), by path: what uninstall compares to know a
    /// file was not changed since. Read after finish().
    const std::map<std::string, std::string>& stamps() const { return m_stamps; }

  private:
    enum class Step { begin, data, end };
    // A copy of what the step needs: the reader's manifest may be gone (an error unwinding it)
    // while the writer still runs.
    struct Task {
        Step step;
        std::string path;
        EntryType type;
        mode_t mode;
        std::vector<std::uint8_t> bytes;
    };
    static constexpr std::size_t k_max_queued = 32u << 20; ///< bytes the reader may run ahead

    void push(Task t) {
        std::unique_lock lock(m_mutex);
        m_room.wait(lock, [&] { return m_queued < k_max_queued || m_error; });
        if (m_error)
            std::rethrow_exception(m_error);
        m_queued += t.bytes.size();
        bool idle = m_steps.empty() && !m_busy; // the writer sleeps only then
        m_steps.push_back(std::move(t));
        lock.unlock();
        if (idle)
            m_wake.notify_one();
    }

    void write_loop() {
        for (;;) {
            Task t;
            {
                std::unique_lock lock(m_mutex);
                m_wake.wait(lock, [&] { return !m_steps.empty() || m_stop; });
                if (m_stop) // the reader gave up (its error is on its way) or finished
                    return;
                t = std::move(m_steps.front());
                m_steps.pop_front();
                m_busy = true;
            }
            try {
                if (!m_failed)
                    run(t);
            } catch (...) {
                m_failed = true;
                std::lock_guard lock(m_mutex);
                m_error = std::current_exception();
            }
            bool drained = false;
            {
                std::lock_guard lock(m_mutex);
                m_queued -= t.bytes.size();
                m_busy = !m_steps.empty();
                drained = !m_busy;
            }
            m_room.notify_one();
            if (drained || m_failed)
                m_done.notify_all();
        }
    }

    void run(const Task& t) {
        switch (t.step) {
        case Step::begin:
            open_entry(t);
            return;
        case Step::data:
            support::write_all(m_file.get(), std::span<const std::uint8_t>(t.bytes), m_file_path);
            return;
        case Step::end:
            close_entry(t);
            return;
        }
    }

    void open_entry(const Task& e) {
        auto slash = e.path.rfind('/');
        std::string parent = slash == std::string::npos ? "" : e.path.substr(0, slash);
        std::string base = slash == std::string::npos ? e.path : e.path.substr(slash + 1);
        const Dir& dir = parent_dir(parent);
        if (e.type == EntryType::directory) {
            if (::mkdirat(dir.fd.get(), base.c_str(), 0700) != 0)
                throw support::io_error("cannot create directory", dir.path + "/" + base, errno);
            return;
        }
        int fd = ::openat(dir.fd.get(), base.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            throw support::io_error("cannot create", dir.path + "/" + base, errno);
        m_file.reset(fd);
        m_file_path = dir.path + "/" + base;
    }

    void close_entry(const Task& e) {
        if (e.type == EntryType::file) {
            struct stat st {};
            if (::fchmod(m_file.get(), m_modes.file(e.mode)) != 0 ||
                ::fstat(m_file.get(), &st) != 0)
                throw support::io_error("cannot set the mode of", m_file_path, errno);
            m_stamps.emplace(e.path, file_stamp(st));
            // Start write-back now; one syncfs before the commit waits for all of it.
            ::sync_file_range(m_file.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
            m_file.reset();
        }
        fault_point("staging " + e.path);
    }

    const Dir& parent_dir(const std::string& rel) {
        if (rel.empty())
            return m_stage;
        if (!m_parent || m_parent_rel != rel) {
            m_parent = open_dir_beneath(m_stage, rel);
            if (!m_parent)
                throw Error("'" + m_stage.path + "/" + rel + "' vanished while staging");
            m_parent_rel = rel;
        }
        return *m_parent;
    }

    const Dir& m_stage;
    Modes m_modes;
    support::Progress* m_progress;
    std::uint64_t m_written = 0;
    // The writer's own state.
    std::optional<Dir> m_parent;
    std::string m_parent_rel;
    UniqueFd m_file;
    std::string m_file_path;
    std::map<std::string, std::string> m_stamps;
    bool m_failed = false;
    // Shared, under m_mutex.
    std::mutex m_mutex;
    std::condition_variable m_wake, m_room, m_done;
    std::deque<Task> m_steps;
    std::size_t m_queued = 0;
    bool m_busy = false;
    bool m_stop = false;
    std::exception_ptr m_error;
    std::thread m_writer; ///< last: started once everything above is constructed
};

// Directory modes, then fsync of every file (syncfs) and directory, deepest first.
void seal_stage(const Dir& stage, const package::Manifest& m, const Modes& modes) {
    if (::syncfs(stage.fd.get()) != 0)
        throw support::io_error("cannot sync the filesystem of", stage.path, errno);
    for (auto it = m.entries.rbegin(); it != m.entries.rend(); ++it) {
        if (it->type != EntryType::directory)
            continue;
        auto dir = open_dir_beneath(stage, it->path);
        if (!dir || ::fchmod(dir->fd.get(), modes.dir) != 0)
            throw Error("cannot seal staged directory '" + stage.path + "/" + it->path + "'");
        sync_dir(*dir);
    }
    if (::fchmod(stage.fd.get(), modes.dir) != 0)
        throw support::io_error("cannot set the mode of", stage.path, errno);
    sync_dir(stage);
}

void write_journal(const InstallTree& tree, const json& j) {
    write_file_at(tree.ai_core(), k_journal, package::json_text(j) + "\n", tree.modes().file(0644));
}

void clear_journal(const InstallTree& tree) {
    unlink_at(tree.ai_core(), k_journal);
    sync_dir(tree.ai_core());
}

// The order with `name` moved last (present) or left out; Place::kept leaves a listed `name`
// where it is (verify --fix restores a package without changing whose kernel wins).
std::vector<std::string> order_with(std::vector<std::string> order, const std::string& name,
                                    bool present, Place place = Place::last) {
    if (present && place == Place::kept &&
        std::find(order.begin(), order.end(), name) != order.end())
        return order;
    std::erase(order, name);
    if (present)
        order.push_back(name);
    return order;
}

void report(const std::vector<std::string>& warnings, support::Log& log) {
    for (const auto& warning : warnings)
        log.warn(warning);
}

// Everything derived, for the order with package `name` moved last (present) or left out.
void update_and_report(const InstallTree& tree, const std::string& name, bool present,
                       support::Log& log, Place place = Place::last) {
    report(update_derived(tree, order_with(tree.install_order(), name, present, place), name), log);
}

// How a journaled install recognises its new version: the stage directory's inode (it keeps it
// through the rename), or for journals of older skforge versions the manifest digest.
struct Landing {
    std::string digest;
    std::optional<ino_t> ino;
    Place place = Place::last; ///< the journal's "keep_place": kept
};

bool landed(const std::optional<Dir>& dir, const Landing& l) {
    if (!dir)
        return false;
    if (!l.ino)
        return installed_manifest_digest(*dir) == l.digest;
    struct stat st {};
    return ::fstat(dir->fd.get(), &st) == 0 && st.st_ino == *l.ino;
}

void remove_listed_all(const Dir& pkg, const package::Manifest& m, support::Log& log);

void finish_install(const InstallTree& tree, const std::string& name, const Landing& landing,
                    support::Log& log) {
    const Dir& ai = tree.ai_core();
    std::string stage = stage_name(name);
    auto target = open_dir_beneath(ai, name);
    if (!landed(target, landing)) {
        unsigned flags = target ? RENAME_EXCHANGE : RENAME_NOREPLACE;
        if (::renameat2(ai.fd.get(), stage.c_str(), ai.fd.get(), name.c_str(), flags) != 0)
            throw support::io_error("cannot move the package into place at", ai.path + "/" + name,
                                    errno);
        // Durable before the index names its files: CANN's runtime reads the index without
        // any recover, so it must never list what a power cut could take back.
        sync_dir(ai);
        fault_point("renamed into place");
    }
    update_and_report(tree, name, true, log, landing.place);
    fault_point("index updated");
    // The previous version after an exchange; its removal is made durable by the sync that
    // removes the journal (until then recover removes it). Its listed files first, on two
    // threads (remove_listed_all), then whatever is left, through handles.
    if (auto old = open_dir_beneath(ai, stage)) {
        std::optional<package::Manifest> m;
        try {
            if (auto text = read_file_at(*old, std::string(package::k_manifest_path)))
                m = parse_manifest_cached(*text, old->path + "/manifest.json");
        } catch (const Error&) {
            m.reset(); // a damaged version: remove_tree alone
        }
        if (m) {
            support::NullLog quiet;
            remove_listed_all(*old, *m, quiet);
        }
    }
    remove_tree(ai, stage);
    fault_point("old version removed");
    clear_journal(tree);
}

// Removes one listed entry of a package being uninstalled; keeps what is not ours. Entries come
// deepest first, so the files of one directory follow one another and share `parent`.
void remove_listed(const Dir& pkg, const ManifestEntry& e, ParentDir& parent, support::Log& log) {
    auto slash = e.path.rfind('/');
    const Dir* in = &pkg;
    if (slash != std::string::npos) {
        try {
            in = parent.open(pkg, e.path.substr(0, slash));
        } catch (const Error& err) {
            log.warn(std::string("keeping '") + pkg.path + "/" + e.path + "': " + err.what());
            return;
        }
        if (!in)
            return;
    }
    const Dir& dir = *in;
    std::string base = slash == std::string::npos ? e.path : e.path.substr(slash + 1);
    if (e.type == EntryType::file) {
        // Unlinked without a stat first (4,079 stats of an uninstall): what is gone is gone, and
        // Linux refuses to unlink a directory with EISDIR.
        if (::unlinkat(dir.fd.get(), base.c_str(), 0) == 0 || errno == ENOENT)
            return;
        int err = errno;
        if (err == EISDIR || err == EPERM) {
            if (auto st = stat_at(dir, base); st && S_ISDIR(st->st_mode)) {
                log.warn("keeping '" + pkg.path + "/" + e.path + "': it is now a directory");
                return;
            }
        }
        throw support::io_error("cannot remove", pkg.path + "/" + e.path, err);
    }
    auto st = stat_at(dir, base);
    if (!st)
        return;
    bool is_dir = S_ISDIR(st->st_mode);
    if (is_dir && e.type == EntryType::file) {
        log.warn("keeping '" + pkg.path + "/" + e.path + "': it is now a directory");
        return;
    }
    if (::unlinkat(dir.fd.get(), base.c_str(), is_dir ? AT_REMOVEDIR : 0) != 0) {
        if (errno == ENOTEMPTY || errno == EEXIST)
            log.warn("keeping '" + pkg.path + "/" + e.path +
                     "': it holds files this package did not install");
        else
            throw support::io_error("cannot remove", pkg.path + "/" + e.path, errno);
    }
}

// A log that keeps its messages for the thread that owns the real one (support::Log is not
// shared between threads).
struct HeldLog final : support::Log {
    std::vector<std::pair<bool, std::string>> held; ///< (warning, text)
    void info(const std::string& m) override { held.emplace_back(false, m); }
    void warn(const std::string& m) override { held.emplace_back(true, m); }
    void replay(support::Log& to) const {
        for (const auto& [warning, m] : held)
            warning ? to.warn(m) : to.info(m);
    }
};

// Removes the listed entries of `m` from `pkg` as remove_listed does, deepest first. The files
// (most of the work: the file system frees their blocks) are removed by two threads, each
// taking whole directories so its parent handle is reused; the directories follow, deepest
// first, once every file is gone. Nothing else changes: which entries go, what is kept and
// said, and the order of each directory after its files.
void remove_listed_all(const Dir& pkg, const package::Manifest& m, support::Log& log) {
    // A small package is not worth a thread.
    constexpr std::size_t k_parallel_from = 256;
    bool two = m.entries.size() >= k_parallel_from;
    std::vector<const ManifestEntry*> files[2];
    std::string last_parent;
    int lane = 0;
    for (auto it = m.entries.rbegin(); it != m.entries.rend(); ++it) {
        if (it->type == EntryType::directory)
            continue;
        auto slash = it->path.rfind('/');
        std::string parent = slash == std::string::npos ? "" : it->path.substr(0, slash);
        if (two && parent != last_parent) // a new directory goes to the lane with less so far
            lane = files[0].size() <= files[1].size() ? 0 : 1;
        last_parent = parent;
        files[lane].push_back(&*it);
    }
    HeldLog logs[2];
    std::exception_ptr errors[2];
    auto work = [&](int k) {
        try {
            ParentDir parent;
            for (const ManifestEntry* e : files[k]) {
                remove_listed(pkg, *e, parent, logs[k]);
                fault_point("removed " + e->path);
            }
        } catch (...) {
            errors[k] = std::current_exception();
        }
    };
    if (files[1].empty()) {
        work(0);
    } else {
        std::thread other(work, 1);
        work(0);
        other.join();
    }
    logs[0].replay(log);
    logs[1].replay(log);
    for (const auto& e : errors)
        if (e)
            std::rethrow_exception(e);
    ParentDir parent;
    for (auto it = m.entries.rbegin(); it != m.entries.rend(); ++it)
        if (it->type == EntryType::directory) {
            remove_listed(pkg, *it, parent, log);
            fault_point("removed " + it->path);
        }
}

// Paths under `dir` (relative to the package directory), at most `limit` of them.
void collect_paths(const Dir& dir, const std::string& rel, std::vector<std::string>& out,
                   std::size_t limit) {
    for (const auto& name : list_dir(dir)) {
        if (out.size() >= limit)
            return;
        if (rel.empty() && (name == package::k_manifest_path || name == k_left_behind))
            continue;
        std::string path = rel.empty() ? name : rel + "/" + name;
        auto st = stat_at(dir, name);
        std::optional<Dir> sub;
        if (st && S_ISDIR(st->st_mode))
            sub = open_dir_beneath(dir, name);
        if (sub && !list_dir(*sub).empty())
            collect_paths(*sub, path, out, limit);
        else
            out.push_back(path);
    }
}

// After the package's own files are gone: when anything is left, a note saying whose directory
// this was, so nobody mistakes it for a directory skforge never installed.
void note_left_behind(const Dir& pkg, const package::Manifest& m, support::Log& log) {
    std::vector<std::string> kept;
    collect_paths(pkg, "", kept, 20);
    if (kept.empty())
        return;
    write_file_at(pkg, k_left_behind,
                  package::json_text({{"name", m.name}, {"version", m.version}, {"kept", kept}}) +
                      "\n",
                  0644);
    log.warn("keeping '" + pkg.path + "': it holds files " + m.name +
             " did not install; 'skinstall uninstall --force " + m.name +
             "' removes them when they are no longer needed");
}

// Roll-forward of uninstall: everything after the journal, idempotent. `whole` removes the
// directory with everything in it (a damaged package, or what an uninstall left behind).
void finish_uninstall(const InstallTree& tree, const std::string& name, bool whole,
                      support::Log& log) {
    const Dir& ai = tree.ai_core();
    update_and_report(tree, name, false, log);
    fault_point("index updated");
    if (whole) {
        remove_tree(ai, name);
        sync_dir(ai);
        fault_point("removed the package directory");
    } else if (auto pkg = open_dir_beneath(ai, name)) {
        if (auto text = read_file_at(*pkg, std::string(package::k_manifest_path))) {
            auto m = parse_manifest_cached(*text, pkg->path + "/manifest.json");
            remove_listed_all(*pkg, m, log);
            unlink_at(*pkg, k_install_record);
            note_left_behind(*pkg, m, log);
            unlink_at(*pkg, std::string(package::k_manifest_path));
        }
        // No sync of the package directory, nor of ai_core/ before the journal goes: the
        // journal's removal is synced with ai_core/ (clear_journal), which makes the package
        // directory's removal durable with it; until then recover finishes the uninstall.
        if (::unlinkat(ai.fd.get(), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT &&
            !stat_at(*pkg, k_left_behind))
            log.warn("keeping '" + pkg->path + "': it holds files this package did not install");
    }
    clear_journal(tree);
}

// The version a damaged package's version.info names, or "" when it cannot be read either.
std::string version_hint(const Dir& ai, const std::string& name) {
    try {
        auto dir = open_dir_beneath(ai, name);
        auto text = dir ? read_file_at(*dir, "version.info", 1 << 16) : std::nullopt;
        if (!text)
            return "";
        auto pos = text->find("Version=");
        if (pos != 0 && pos != std::string::npos && (*text)[pos - 1] != '\n')
            return "";
        if (pos == std::string::npos)
            return "";
        auto end = text->find('\n', pos);
        std::string v = text->substr(pos + 8, end == std::string::npos ? end : end - pos - 8);
        return package::check_label(v, false) ? "" : v;
    } catch (const Error&) {
        return "";
    }
}

// What replacing `old_v` by `new_v` is, under the request's rules; throws when they forbid it.
InstallOutcome version_outcome(const InstallRequest& req, const std::string& name,
                               const std::string& new_v, const std::string& old_v,
                               const std::string& where) {
    int cmp = compare_versions(new_v, old_v);
    switch (req.mode) {
    case InstallMode::install:
        throw Error(name + " " + old_v + " is already installed in '" + where +
                    "' with different content; " +
                    (cmp == 0 ? "use 'skinstall install --reinstall' to replace it with the "
                                "same version's files"
                              : "use 'skinstall upgrade' to replace it"));
    case InstallMode::reinstall:
        if (cmp != 0)
            throw Error("reinstall restores the installed version, but " + name + " " + old_v +
                        " is installed in '" + where + "' and the package is " + new_v +
                        "; use 'skinstall upgrade" + (cmp < 0 ? " --allow-downgrade'" : "'"));
        return InstallOutcome::reinstalled;
    case InstallMode::upgrade:
        if (cmp == 0)
            throw Error(name + " " + old_v + " is installed in '" + where +
                        "' with different content under the same version; replacing it needs "
                        "--reinstall");
        if (cmp < 0 && req.downgrade == Downgrade::refuse)
            throw Error(name + " " + new_v + " is older than the installed " + old_v + " in '" +
                        where + "'; use --allow-downgrade to replace it");
        return cmp > 0 ? InstallOutcome::upgraded : InstallOutcome::downgraded;
    }
    return InstallOutcome::installed;
}

// Sets what staging `staged` will do to the directory the tree has for it; throws on refusal.
void decide_outcome(const InstallTree& tree, StagedPackage& staged, const PackageDir& pd,
                    const InstallRequest& req, support::Log& log) {
    const auto& m = staged.package->manifest;
    std::string where = tree.shown() + "/" + m.name;
    switch (pd.state) {
    case DirState::absent:
        return;
    case DirState::foreign:
        throw Error("'" + where + "' exists but was not installed by skforge (" + pd.why +
                    "); move it away and retry");
    case DirState::vendor:
        throw Error("refusing to install " + m.name + " over CANN's own package of that name: " +
                    pd.why + "; give the skforge package another name ('skc pack --name')");
    case DirState::left_behind:
        throw Error(pd.why);
    case DirState::damaged: {
        auto st = stat_at(tree.ai_core(), m.name);
        if (req.mode == InstallMode::install || !st || !S_ISDIR(st->st_mode))
            throw Error(m.name + " is installed in '" + where + "' but damaged: " + pd.why +
                        "\n  " + repair_hint(m.name));
        staged.old_version = version_hint(tree.ai_core(), m.name);
        if (staged.old_version.empty()) {
            log.warn("the installed version of " + m.name + " cannot be read (" + pd.why +
                     "); replacing it with " + m.version);
            staged.outcome = req.mode == InstallMode::reinstall ? InstallOutcome::reinstalled
                                                                : InstallOutcome::upgraded;
        } else {
            staged.outcome = version_outcome(req, m.name, m.version, staged.old_version, where);
        }
        return;
    }
    case DirState::installed:
        break;
    }
    staged.old_version = pd.manifest->version;
    auto dir = open_dir_beneath(tree.ai_core(), m.name);
    if (installed_manifest_digest(*dir) == staged.manifest_digest &&
        req.mode != InstallMode::reinstall) {
        log.info(m.name + " " + m.version + " is already installed in " + where);
        staged.outcome = InstallOutcome::already_installed;
        return;
    }
    staged.outcome = version_outcome(req, m.name, m.version, staged.old_version, where);
}

// What installing `pkg` will do to the tree (nothing staged yet); throws on refusal.
StagedPackage decide_package(const InstallTree& tree, const VerifiedPackage& pkg,
                             const InstallRequest& request, support::Log& log) {
    const std::string& name = pkg.manifest.name;
    StagedPackage staged{&pkg, support::sha256_hex(package::manifest_to_json(pkg.manifest)),
                         InstallOutcome::installed, "", false};
    auto order = tree.install_order();
    bool listed = std::find(order.begin(), order.end(), name) != order.end();
    decide_outcome(tree, staged, classify_package_dir(tree, name, listed), request, log);
    return staged;
}

// The install record written beside manifest.json: who installed it, from where, signed by
// whom, and each file's stamp as staged. JSON holds UTF-8 only: a .run path that is not UTF-8 is
// also recorded byte for byte as "from_hex" (what repair reads), "from" keeping its readable form.
std::string render_install_record(const VerifiedPackage& pkg,
                                  const std::map<std::string, std::string>& stamps) {
    char buf[PATH_MAX];
    std::string from = ::realpath(pkg.origin.c_str(), buf) ? buf : pkg.origin;
    nlohmann::json record = {{"installed_by", invoking_user()},
                             {"from", from},
                             {"signature", package::signature_state_name(pkg.signature)},
                             {"signer_key_id", pkg.signer_key_id},
                             {"file_stamps", stamps}};
    if (package::check_utf8(from))
        record["from_hex"] = support::to_hex(
            std::span(reinterpret_cast<const std::uint8_t*>(from.data()), from.size()));
    return package::json_text(record) + "\n";
}

// Refuses, before anything changes, when this user could not finish replacing or removing
// ai_core/<name>: the exchange and the removal need every directory in it writable.
void require_package_writable(const InstallTree& tree, const std::string& name) {
    if (auto dir = open_dir_beneath(tree.ai_core(), name))
        require_writable_tree(*dir);
}

// A shell-fallback upgrade killed between its two renames leaves the previous version at
// .skforge-stage-<name>.old.XXXXXX and no <name>; it is the only installed copy, so it is put
// back (the before-state) instead of being swept away with the other leftovers.
std::string restore_fallback_old(const Dir& ai) {
    std::string did;
    const std::string prefix = k_stage_prefix;
    for (const auto& entry : list_dir(ai)) {
        auto old = entry.rfind(".old.");
        if (!entry.starts_with(prefix) || old == std::string::npos || old <= prefix.size())
            continue;
        std::string name = entry.substr(prefix.size(), old - prefix.size());
        if (package::check_package_name(name) || stat_at(ai, name))
            continue;
        auto dir = open_dir_beneath(ai, entry);
        auto text = dir ? read_file_at(*dir, std::string(package::k_manifest_path)) : std::nullopt;
        try {
            if (!text || parse_manifest_cached(*text, dir->path + "/manifest.json").name != name)
                continue;
        } catch (const Error&) {
            continue; // not a package: an ordinary leftover
        }
        if (::renameat2(ai.fd.get(), entry.c_str(), ai.fd.get(), name.c_str(), RENAME_NOREPLACE) !=
            0)
            throw support::io_error("cannot restore", ai.path + "/" + name, errno);
        sync_dir(ai);
        did += std::string(did.empty() ? "" : "; ") + "restored " + name +
               " from the interrupted shell upgrade's '" + entry + "'";
    }
    return did;
}

} // namespace

namespace {

// Refuses `pkg` when its install.sh's index records are not those of its index files `texts`
// (package::index_records_problem): the scripts would merge other entries than skinstall.
void refuse_other_records(const VerifiedPackage& pkg, const package::Manifest& m,
                          const package::IndexTexts& texts) {
    if (auto why = package::index_records_problem(m, texts, pkg.records))
        throw Error(pkg.origin + ": refusing: " + *why, support::ErrorKind::integrity);
}

} // namespace

void check_payload(const VerifiedPackage& pkg, const Policy& policy) {
    package::IndexCapture sink;
    auto m = pkg.run->read_payload(sink, policy.limits);
    for (const auto& [path, text] : sink.texts())
        package::parse_package_index(text, pkg.origin + ": " + path, m);
    refuse_other_records(pkg, m, sink.texts());
}

StagedPackage stage_package(const InstallTree& tree, const VerifiedPackage& pkg,
                            const InstallRequest& request, const Policy& policy,
                            support::Log& log) {
    const Dir& ai = tree.ai_core();
    const std::string& name = pkg.manifest.name;
    StagedPackage staged = decide_package(tree, pkg, request, log);
    if (staged.outcome == InstallOutcome::already_installed)
        return staged;
    require_package_writable(tree, name);
    // Every file under a private name inside ai_core/ (same filesystem), checked and fsynced.
    std::string stage = stage_name(name);
    remove_tree(ai, stage);
    if (::mkdirat(ai.fd.get(), stage.c_str(), 0700) != 0)
        throw support::io_error("cannot create", ai.path + "/" + stage, errno);
    staged.stage_created = true;
    try {
        auto stage_dir = open_dir_beneath(ai, stage);
        StageSink sink(*stage_dir, tree.modes(), request.progress);
        if (request.progress)
            request.progress->begin("installing " + name, pkg.manifest.unpacked_size());
        auto m = pkg.run->read_payload(sink, policy.limits);
        sink.finish();
        if (request.progress)
            request.progress->end();
        // Not synced one by one: seal_stage's syncfs and directory syncs make them durable.
        write_file_at(*stage_dir, std::string(package::k_manifest_path),
                      package::manifest_to_json(m), tree.modes().file(0644), Sync::no);
        write_file_at(*stage_dir, k_install_record, render_install_record(pkg, sink.stamps()),
                      tree.modes().file(0644), Sync::no);
        read_package_index(*stage_dir, m);
        refuse_other_records(pkg, m, package_index_texts(*stage_dir, m));
        seal_stage(*stage_dir, m, tree.modes());
        sync_dir(ai);
        fault_point("staged");
    } catch (...) {
        if (request.progress)
            request.progress->end(); // the error starts on its own line
        remove_tree(ai, stage);
        throw;
    }
    return staged;
}

void discard_stage(const InstallTree& tree, const StagedPackage& staged) {
    if (staged.stage_created)
        remove_tree(tree.ai_core(), stage_name(staged.package->manifest.name));
}

InstallResult commit_staged(const InstallTree& tree, const StagedPackage& staged,
                            support::Log& log) {
    const auto& m = staged.package->manifest;
    InstallResult r{m.name, m.version, staged.old_version, staged.outcome};
    if (staged.outcome == InstallOutcome::already_installed)
        return r;
    auto stage = stat_at(tree.ai_core(), stage_name(m.name));
    if (!stage || !S_ISDIR(stage->st_mode))
        throw Error("the stage of " + m.name + " vanished before its commit");
    // Journal the intent; from here on recover() completes the transaction.
    write_journal(tree, {{"op", "install"},
                         {"action", outcome_name(staged.outcome)},
                         {"name", m.name},
                         {"manifest_sha256", staged.manifest_digest},
                         {"stage_ino", stage->st_ino},
                         {"keep_place", staged.place == Place::kept}});
    fault_point("journal written");
    // Commit: rename (or exchange) into place, then config.ini and the index.
    finish_install(tree, m.name, {staged.manifest_digest, stage->st_ino, staged.place}, log);
    std::string replaced = r.old_version.empty() || r.outcome == InstallOutcome::reinstalled
                               ? ""
                               : ", replacing " + r.old_version;
    log.info(std::string(outcome_name(r.outcome)) + " " + m.name + " " + m.version + " into " +
             tree.ai_core().path + "/" + m.name + replaced);
    return r;
}

InstallResult install_package(const InstallTree& tree, const VerifiedPackage& pkg,
                              const InstallRequest& request, const Policy& policy,
                              support::Log& log) {
    auto staged = stage_package(tree, pkg, request, policy, log);
    staged.place = request.place;
    return commit_staged(tree, staged, log);
}

InstallResult repair_package(const InstallTree& tree, const std::string& name,
                             const VerifiedPackage& pkg, const Policy& policy, support::Log& log,
                             Place place) {
    require_package_name(name);
    if (pkg.manifest.name != name)
        throw Error(pkg.origin + " holds package '" + pkg.manifest.name + "', not '" + name +
                    "'; repair restores a package from its own .run");
    auto order = tree.install_order();
    bool listed = std::find(order.begin(), order.end(), name) != order.end();
    if (classify_package_dir(tree, name, listed).state == DirState::absent)
        throw Error(name + " is not installed in '" + tree.shown() +
                    "'; install it with 'skinstall install " + pkg.origin + "'");
    // Said only once every check has passed (the version and the directory's state included).
    InstallRequest request(InstallMode::reinstall);
    request.place = place;
    decide_package(tree, pkg, request, log);
    require_package_writable(tree, name);
    log.info("repairing " + name + " from " + pkg.origin);
    return install_package(tree, pkg, request, policy, log);
}

std::vector<InstallResult> plan_installs(const InstallTree& tree,
                                         const std::vector<VerifiedPackage>& pkgs,
                                         const InstallRequest& request, support::Log& log) {
    std::vector<InstallResult> out;
    for (const auto& pkg : pkgs) {
        auto staged = decide_package(tree, pkg, request, log);
        out.push_back(
            {pkg.manifest.name, pkg.manifest.version, staged.old_version, staged.outcome});
    }
    return out;
}

std::vector<InstallResult> install_packages(const InstallTree& tree,
                                            const std::vector<VerifiedPackage>& pkgs,
                                            const InstallRequest& request, const Policy& policy,
                                            support::Log& log) {
    for (std::size_t i = 0; i < pkgs.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (pkgs[i].manifest.name == pkgs[j].manifest.name)
                throw Error(pkgs[i].origin + " and " + pkgs[j].origin + " are both package '" +
                            pkgs[i].manifest.name + "'; name each package once");
    // Phase 1: stage and check every package; any refusal discards every stage, so the tree is
    // exactly as it was.
    std::vector<StagedPackage> staged;
    try {
        for (const auto& p : pkgs)
            staged.push_back(stage_package(tree, p, request, policy, log));
    } catch (...) {
        for (const auto& s : staged)
            discard_stage(tree, s);
        throw;
    }
    // Phase 2: commit one package at a time. Only an I/O failure or a kill can stop here; each
    // commit is journaled, so recover() finishes it and the packages before it stay installed.
    std::vector<InstallResult> out;
    for (std::size_t i = 0; i < staged.size(); ++i) {
        try {
            out.push_back(commit_staged(tree, staged[i], log));
        } catch (...) {
            for (std::size_t k = i + 1; k < staged.size(); ++k)
                discard_stage(tree, staged[k]);
            throw;
        }
    }
    return out;
}

namespace {

// Removes a damaged package, or what an uninstall left behind, whole.
UninstallResult remove_whole(const InstallTree& tree, const std::string& name, const PackageDir& pd,
                             Force force, support::Log& log, Act act) {
    bool damaged = pd.state == DirState::damaged;
    if (force == Force::no)
        throw Error(damaged ? "refusing to uninstall " + name + ": it is damaged (" + pd.why +
                                  ")\n  " + repair_hint(name)
                            : pd.why);
    if (act == Act::dry_run)
        return {name, "", "removed"};
    // ai_core/NAME itself a symbolic link: only the link goes (remove_tree never follows it), so
    // nothing behind it needs to be writable or is even opened.
    auto st = stat_at(tree.ai_core(), name);
    if (!st || !S_ISLNK(st->st_mode))
        require_package_writable(tree, name);
    write_journal(tree, {{"op", "uninstall"}, {"name", name}, {"whole", true}});
    fault_point("journal written");
    finish_uninstall(tree, name, true, log);
    log.info(std::string(damaged ? "removed the damaged package " + name + " from "
                                 : "removed what the uninstall of " + name + " left in ") +
             tree.shown() + "/" + name);
    return {name, "", "removed"};
}

} // namespace

UninstallResult uninstall_package(const InstallTree& tree, const std::string& name, Force force,
                                  support::Log& log, Act act) {
    require_package_name(name);
    auto order = tree.install_order();
    bool listed = std::find(order.begin(), order.end(), name) != order.end();
    auto pd = classify_package_dir(tree, name, listed);
    switch (pd.state) {
    case DirState::absent:
        throw Error(name + " is not installed in '" + tree.shown() + "'");
    case DirState::foreign:
        throw Error("'" + tree.shown() + "/" + name + "' was not installed by skforge (" + pd.why +
                    "); nothing was removed");
    case DirState::vendor:
        throw Error("refusing to uninstall " + name +
                    (force == Force::yes ? ", even with --force" : "") + ": " + pd.why +
                    "; nothing was removed");
    case DirState::damaged:
    case DirState::left_behind:
        return remove_whole(tree, name, pd, force, log, act);
    case DirState::installed:
        break;
    }
    auto checked = check_installed(tree, name, nullptr, Hash::when_changed);
    std::vector<std::string> changed;
    for (const auto& p : checked.problems) {
        if (p.kind == ProblemKind::extra)
            log.warn("'" + tree.shown() + "/" + name + "/" + p.path + "' was not installed by " +
                     name + "; it will be kept");
        else if (p.kind != ProblemKind::missing)
            changed.push_back(p.path + " (" + std::string(problem_name(p.kind)) +
                              (p.detail.empty() ? "" : ": " + p.detail) + ")");
    }
    if (!changed.empty() && force == Force::no) {
        std::string msg =
            "refusing to uninstall " + name + ": " + std::to_string(changed.size()) +
            " installed file(s) changed since installation (use --force to remove them anyway):";
        for (const auto& c : changed)
            msg += "\n  " + c;
        throw Error(msg);
    }
    if (act == Act::dry_run)
        return {name, checked.manifest.version, "uninstalled"};
    require_package_writable(tree, name);
    write_journal(tree, {{"op", "uninstall"}, {"name", name}});
    fault_point("journal written");
    finish_uninstall(tree, name, false, log);
    log.info("uninstalled " + name + " " + checked.manifest.version + " from " + tree.shown());
    return {name, checked.manifest.version, "uninstalled"};
}

bool transaction_pending(const InstallTree& tree) {
    return stat_at(tree.ai_core(), k_journal).has_value();
}

std::string recover(const InstallTree& tree, support::Log& log) {
    const Dir& ai = tree.ai_core();
    std::string did;
    if (auto text = read_file_at(ai, k_journal)) {
        json j = package::parse_json_quiet(*text);
        std::string op = j.is_object() ? j.value("op", "") : "";
        std::string name = j.is_object() ? j.value("name", "") : "";
        if (package::check_package_name(name) ||
            (op != "install" && op != "upgrade" && op != "uninstall"))
            throw Error("'" + ai.path + "/" + k_journal +
                        "' is damaged; inspect it, then remove it and run recover again");
        std::string action = j.value("action", op);
        if (op == "uninstall") {
            finish_uninstall(tree, name, j.value("whole", false), log);
            did = "completed the interrupted uninstall of " + name;
        } else {
            Landing landing{j.value("manifest_sha256", ""), std::nullopt, Place::last};
            if (j.contains("keep_place") && j["keep_place"].is_boolean())
                landing.place = j["keep_place"].get<bool>() ? Place::kept : Place::last;
            if (j.contains("stage_ino") && j["stage_ino"].is_number_unsigned())
                landing.ino = j["stage_ino"].get<ino_t>();
            auto target = open_dir_beneath(ai, name);
            auto stage = open_dir_beneath(ai, stage_name(name));
            if (landed(target, landing) || landed(stage, landing)) {
                finish_install(tree, name, landing, log);
                did = "completed the interrupted " + action + " of " + name;
            } else {
                remove_tree(ai, stage_name(name));
                clear_journal(tree);
                did = "rolled back the interrupted " + action + " of " + name;
            }
        }
    }
    if (auto restored = restore_fallback_old(ai); !restored.empty())
        did += std::string(did.empty() ? "" : "; ") + restored;
    // Leftovers of processes killed before they journaled: stages and temporary files, in every
    // directory skforge writes to.
    for (const auto& entry : list_dir(ai)) {
        if (entry.starts_with(k_stage_prefix) || is_temporary_name(entry)) {
            remove_tree(ai, entry);
            did += std::string(did.empty() ? "" : "; ") + "removed the leftover '" + entry + "'";
        }
    }
    if (auto config = open_dir_beneath(ai, k_config_dir)) {
        auto sweep = [&](const Dir& dir, const std::string& shown) {
            for (const auto& entry : list_dir(dir))
                if (is_temporary_name(entry)) {
                    remove_tree(dir, entry);
                    did += std::string(did.empty() ? "" : "; ") + "removed the leftover '" + shown +
                           entry + "'";
                }
        };
        sweep(*config, "config/");
        for (const auto& soc : list_dir(*config)) {
            auto st = stat_at(*config, soc);
            if (st && S_ISDIR(st->st_mode))
                if (auto dir = open_dir_beneath(*config, soc))
                    sweep(*dir, "config/" + soc + "/");
        }
    }
    // An install killed between writing who holds it and committing it left a line for a
    // package that is not there.
    prune_holds(tree);
    // A package's own scripts killed between their renames, or those of packages from an older
    // skforge (which did not write the index), leave config.ini ahead of the index: rebuild
    // everything derived so config.ini, the index and list agree again.
    // The per-key record says, from stamps alone, when nothing needs rebuilding.
    if (read_file_at(ai, k_config_ini) && !derived_current(tree)) {
        std::vector<std::string> present;
        for (const auto& name : tree.install_order()) {
            // A damaged package stays listed (rebuild_derived reports it); only a missing one goes.
            if (stat_at(ai, name))
                present.push_back(name);
            else
                log.warn("config.ini lists '" + name + "' but it is not installed; dropping it");
        }
        report(rebuild_derived(tree, present), log);
    }
    if (!did.empty())
        log.info("recover: " + did);
    return did.empty() ? "nothing to recover" : did;
}

} // namespace skforge::install
