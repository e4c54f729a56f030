// SPDX-License-Identifier: Apache-2.0
#include "skforge/compile/op_compiler.hpp"
#include "op_store.hpp"

#include "skforge/codegen/cann_release.hpp"
#include "skforge/compile/cache_store.hpp"
#include "skforge/compile/remote_store.hpp"
#include "skforge/kernel/toolkit.hpp"
#include "skforge/package/cann_stamp.hpp"
#include "skforge/package/generated.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/makeself.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/sha256.hpp"
#include "skforge/support/temp_dir.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace skforge::compile {
namespace fs = std::filesystem;
using support::Error;

namespace {

// Set in the real compiler's environment: a front end that finds it set was started, directly
// or through wrappers, by the compiler it started itself.
constexpr const char* k_guard = "SKFORGE_OP_COMPILER_ACTIVE";
constexpr const char* k_key_version = "skforge-op-compiler key 1";

struct OptionSpec {
    const char* short_name; // "" when none
    const char* long_name;
    std::string OpCompilerArgs::*target; // nullptr: a flag
};

// op_compiler's options (CANN's op_compiler reference) and where each goes.
const std::array<OptionSpec, 10> k_valued = {{
    {"-p", "--op_params_dir", &OpCompilerArgs::params_dir},
    {"-k", "--kernel_name", &OpCompilerArgs::kernel_name},
    {"-v", "--soc_version", &OpCompilerArgs::soc},
    {"-o", "--output", &OpCompilerArgs::output},
    {"-m", "--compile_mode", &OpCompilerArgs::compile_mode},
    {"-f", "--follow_op_params_jit", &OpCompilerArgs::follow},
    {"-j", "--job", &OpCompilerArgs::jobs},
    {"-l", "--log", &OpCompilerArgs::log_level},
    {"", "--super_kernel_options", &OpCompilerArgs::sk_options},
    {"", "--super_kernel_debug_options", &OpCompilerArgs::sk_debug_options},
}};

const OptionSpec* valued_option(std::string_view word) {
    for (const auto& o : k_valued)
        if (word == o.short_name || word == o.long_name)
            return &o;
    return nullptr;
}

// Why a parsed request cannot be served from the store, or "".
std::string uncacheable(const OpCompilerArgs& a) {
    if (a.help)
        return "--help";
    if (a.count)
        return "--count";
    if (!a.kernel_name.empty())
        return "-k (a debug build of one kernel)";
    if (a.compile_mode == "tune")
        return "-m tune (tuning depends on the device it runs on)";
    if (a.params_dir.empty())
        return "no -p directory of op JSONs";
    return "";
}

// The op JSON's canonical text: parsed, then dumped with sorted keys and no whitespace
// (nlohmann::json keeps objects sorted), so formatting and key order do not change the key.
std::string canonical_json(const std::string& path) {
    auto text = support::read_file(path, {support::k_max_json_bytes});
    try {
        return support::parse_json(text).dump();
    } catch (const std::exception& e) {
        throw Error("op JSON '" + path + "' is not JSON: " + e.what());
    }
}

// argv with the value of option `short_name`/`long_name` replaced by `value` (added when the
// caller gave none).
std::vector<std::string> with_option(const std::vector<std::string>& argv,
                                     const std::string& short_name, const std::string& long_name,
                                     const std::string& value) {
    std::vector<std::string> out;
    bool replaced = false;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const auto& w = argv[i];
        if ((w == short_name || w == long_name) && i + 1 < argv.size()) {
            out.insert(out.end(), {w, value});
            ++i;
            replaced = true;
        } else if (w.starts_with(long_name + "=")) {
            out.push_back(long_name + "=" + value);
            replaced = true;
        } else {
            out.push_back(w);
        }
    }
    if (!replaced)
        out.insert(out.end(), {short_name, value});
    return out;
}

// `words` as the NULL-terminated array exec and posix_spawn take (pointing into `words`).
std::vector<char*> c_args(std::vector<std::string>& words) {
    std::vector<char*> out;
    for (auto& w : words)
        out.push_back(w.data());
    out.push_back(nullptr);
    return out;
}

// Runs `argv` with our stdin, stdout and stderr and the guard set in its environment (and ours:
// the front end starts nothing else); its exit status (128 + signal when a signal ended it).
int run_inherited(std::vector<std::string> argv) {
    ::setenv(k_guard, "1", 1);
    auto args = c_args(argv);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ);
    if (rc != 0)
        throw Error("cannot run the real op_compiler '" + argv[0] + "': " + std::strerror(rc));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            throw Error("cannot wait for '" + argv[0] + "': " + std::strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Replaces this process with the real compiler, as it was asked: its messages and exit status
// are the caller's.
[[noreturn]] void exec_real(const std::string& real, const std::vector<std::string>& argv) {
    std::vector<std::string> words{real};
    words.insert(words.end(), argv.begin(), argv.end());
    auto args = c_args(words);
    ::setenv(k_guard, "1", 1);
    ::execv(real.c_str(), args.data());
    throw Error("cannot run the real op_compiler '" + real + "': " + std::strerror(errno));
}

// An exclusive fcntl lock on `path` (created), held while the object lives: concurrent misses of
// one key compile once, on one host or several sharing the store over NFS (fcntl, like the
// store's own lock). A lock that cannot be taken only costs a second compile.
class KeyLock {
  public:
    /// Takes the lock, saying on `log` when another process holds it (a compile can take
    /// minutes: a silent wait would look like a hang).
    KeyLock(const std::string& path, support::Log& log) {
        std::error_code ec;
        fs::create_directories(support::parent_directory(path), ec);
        bool told = false;
        // `skc cache clean` removes a lock file no process holds, after taking it: a lock taken
        // on a file no longer at `path` does not count, and is taken again on a new one.
        for (int attempt = 0; attempt < 100; ++attempt) {
            m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (m_fd < 0)
                return;
            struct flock fl {};
            fl.l_type = F_WRLCK;
            fl.l_whence = SEEK_SET;
            if (::fcntl(m_fd, F_SETLK, &fl) != 0) {
                if (!told)
                    log.info("waiting for another op_compiler that compiles the same operators (" +
                             path + ")");
                told = true;
                while (::fcntl(m_fd, F_SETLKW, &fl) != 0 && errno == EINTR) {
                }
            }
            struct stat held {
            }, named{};
            if (::fstat(m_fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 &&
                held.st_dev == named.st_dev && held.st_ino == named.st_ino)
                return;
            ::close(m_fd);
            m_fd = -1;
        }
    }
    ~KeyLock() {
        if (m_fd >= 0)
            ::close(m_fd);
    }
    KeyLock(const KeyLock&) = delete;
    KeyLock& operator=(const KeyLock&) = delete;

  private:
    int m_fd = -1;
};

// The op JSONs of a request: the digest of each one's canonical text, and the first file
// with that content (order and duplicates do not count).
using OpFiles = std::map<std::string, std::string>;

OpFiles op_files(const std::string& params_dir) {
    OpFiles ops;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(params_dir))
        if (e.path().extension() == ".json" && e.is_regular_file())
            files.push_back(e.path());
    std::ranges::sort(files);
    for (const auto& f : files)
        ops.emplace(support::sha256_hex(canonical_json(f.string())), f.string());
    if (ops.empty())
        throw Error("no op JSON in '" + params_dir + "'");
    return ops;
}

std::string request_key(const OpCompilerArgs& a, const KeyContext& c, const OpFiles& ops) {
    std::string text = std::string(k_key_version) + "\nsoc=" + a.soc +
                       "\nsuper_kernel=" + (a.super_kernel ? "1" : "0") +
                       "\nsuper_kernel_options=" + a.sk_options +
                       "\nsuper_kernel_debug_options=" + a.sk_debug_options +
                       "\nfollow=" + a.follow + "\ncompile_mode=" + a.compile_mode +
                       "\ntoolkit=" + c.toolkit_version + "\ncompiler=" + c.compiler_digest + "\n";
    for (const auto& [digest, path] : ops)
        text += "op " + digest + "\n";
    return support::sha256_hex(text);
}

// One cacheable request, keyed.
struct Request {
    const OpCompilerArgs& args;
    const FrontEndOptions& options;
    std::string real;
    KeyContext context;
    OpFiles ops;
    std::string key;
};

// The tiers in the order they are asked: local, then shared.
struct Tier {
    std::string what; // "local store", "shared store"
    CacheStore store;
};

std::vector<Tier> open_tiers(const FrontEndOptions& o, support::Log& log) {
    std::vector<Tier> tiers;
    auto open = [&](const std::string& dir, const char* what) {
        if (dir.empty())
            return;
        try {
            tiers.push_back(
                {what, CacheStore(
                           {dir, std::nullopt, CacheOpen::create, {}, [&log](const std::string& m) {
                                log.warn(m);
                            }})});
        } catch (const Error& e) {
            log.warn(std::string(what) + " not used: " + e.what());
        }
    };
    open(o.local_store, "local store");
    if (o.shared_store != o.local_store)
        open(o.shared_store, "shared store");
    return tiers;
}

// The output's directory and, when -o names a file, its name ("" : the package's name.run).
std::pair<std::string, std::string> output_target(const std::string& output) {
    std::string o = output.empty() ? "." : output;
    if (o.size() > 4 && o.ends_with(".run") && !fs::is_directory(o))
        return {support::parent_directory(o), support::base_name(o)};
    return {o, ""};
}

// Moves the verified package at `tmp` to its place in the output: `file`, or <name>.run named
// by its manifest, so that every process that asks for the same operators gets the same stem.
std::string place(const std::string& tmp, const std::string& dir, const std::string& file) {
    std::string name = file.empty() ? package::RunPackage(tmp).header().name + ".run" : file;
    std::string dest = dir + "/" + name;
    if (::rename(tmp.c_str(), dest.c_str()) != 0)
        throw Error("cannot move the package to '" + dest + "': " + std::strerror(errno));
    return dest;
}

// The stores of one request: the local tiers in the order they are asked, then the remote one.
struct Stores {
    std::vector<Tier> tiers;
    std::optional<RemoteStore> remote;
    std::vector<package::Key> trusted; ///< when set, a stored package must be signed by one
    bool remote_op_map = false;        ///< the remote tier's op map is used
};

// "" when the package at `path` may be used: no trusted keys are set, or one of them signed it;
// else why not.
std::string untrusted(const Stores& s, const std::string& path) {
    if (s.trusted.empty())
        return "";
    package::RunPackage run(path);
    auto state = run.check_signature(run.verify_digests(), s.trusted);
    if (state == package::SignatureState::verified)
        return "";
    return "its signature: " + std::string(package::signature_state_name(state)) +
           " (SKFORGE_TRUSTED_KEYS)";
}

// Copies the package at `tmp` into the first `n` local tiers (they missed it).
void fill(Stores& s, std::size_t n, const std::string& key, const std::string& tmp,
          support::Log& log) {
    for (std::size_t j = 0; j < n && j < s.tiers.size(); ++j) {
        try {
            s.tiers[j].store.insert(key, tmp);
        } catch (const Error& e) {
            log.warn("cannot store the package in the " + s.tiers[j].what + " " +
                     s.tiers[j].store.dir() + ": " + e.what());
        }
    }
}

// The first store that holds `key`, its verified copy at `tmp`; the local tiers asked before
// it get a copy.
bool fetch_any(Stores& s, const std::string& key, const std::string& tmp, support::Log& log) {
    for (std::size_t i = 0; i < s.tiers.size(); ++i) {
        try {
            auto r = s.tiers[i].store.fetch(key, tmp);
            if (r.outcome == FetchOutcome::corrupt)
                log.warn(s.tiers[i].what + ": " + r.problem + "; compiling again");
            if (r.outcome != FetchOutcome::hit)
                continue;
            if (auto why = untrusted(s, tmp); !why.empty()) {
                log.warn(s.tiers[i].what + " " + s.tiers[i].store.dir() + ": the entry for key " +
                         key + " is not used: " + why);
                continue;
            }
            fill(s, i, key, tmp, log);
            log.info("hit in the " + s.tiers[i].what + " " + s.tiers[i].store.dir() + " (key " +
                     key.substr(0, 16) + ")");
            return true;
        } catch (const Error& e) {
            log.warn(s.tiers[i].what + " " + s.tiers[i].store.dir() + " not read: " + e.what());
        }
    }
    if (s.remote && s.remote->fetch(key, tmp)) {
        if (auto why = untrusted(s, tmp); !why.empty()) {
            log.warn("remote store " + s.remote->url() + ": the entry for key " + key +
                     " is not used: " + why);
            return false;
        }
        fill(s, s.tiers.size(), key, tmp, log);
        log.info("hit in the remote store " + s.remote->url() + " (key " + key.substr(0, 16) + ")");
        return true;
    }
    return false;
}

// The one .run the real compiler wrote into `dir`, or "" (with a warning) when it wrote none or
// several.
std::string written_run(const std::string& dir, support::Log& log) {
    std::vector<std::string> runs;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".run")
            runs.push_back(e.path().string());
    if (runs.size() != 1)
        log.warn("the real op_compiler wrote " + std::to_string(runs.size()) +
                 " .run files; handed on as they are, nothing stored");
    return runs.size() == 1 ? runs.front() : "";
}

// Copies everything the real compiler wrote into the output, as it wrote it.
void hand_on(const std::string& from, const std::string& dir, const std::string& file) {
    for (const auto& e : fs::directory_iterator(from)) {
        std::string name = file.empty() ? e.path().filename().string() : file;
        fs::copy(e.path(), dir + "/" + name,
                 fs::copy_options::overwrite_existing | fs::copy_options::recursive);
    }
}

// What one run of the real compiler gave: its status, and the imported package (empty when it
// failed, wrote no single .run, or its package was refused; `raw` holds what it wrote).
struct Compiled {
    int status = 0;
    std::string package;
    std::string raw;
};

// The real compiler on the op JSONs of `params_dir`, into `work`/out; its package imported.
Compiled compile_into(const OpCompilerArgs& a, const FrontEndOptions& o, const std::string& real,
                      const std::string& params_dir, const std::string& work, support::Log& log) {
    Compiled c;
    c.raw = work + "/out";
    fs::create_directory(c.raw);
    std::vector<std::string> argv{real};
    auto forwarded = with_option(with_option(a.argv, "-o", "--output", c.raw), "-p",
                                 "--op_params_dir", params_dir);
    argv.insert(argv.end(), forwarded.begin(), forwarded.end());
    c.status = run_inherited(argv);
    if (c.status != 0)
        return c; // the real compiler said why; nothing is stored
    std::string vendor = written_run(c.raw, log);
    if (vendor.empty())
        return c;
    try {
        package::ImportOptions io;
        io.input = vendor;
        io.output = work + "/package.run";
        io.sign_key = o.sign_key;
        // The toolkit that just compiled the kernels is the release they were built with.
        if (auto v = kernel::toolkit_version(o.ascend_home); v && package::cann_line(*v))
            io.cann = package::CannStamp{*v, package::StampSource::toolkit, {}, {}};
        package::import_makeself(io);
        c.package = io.output;
    } catch (const Error& e) {
        log.warn("the real op_compiler's package is not stored: " + std::string(e.what()) +
                 "; handed on as it was written");
    }
    return c;
}

// The op map of a local tier (op_store.hpp) names the key of a stored package that holds an op
// JSON's kernels (a partial hit's source), under the key of a request of that op JSON alone:
// the SoC, options, toolkit and compiler count as they do for a whole request.
std::string op_map_entry(const Tier& t, const Request& r, const OpFiles::value_type& op) {
    return compile::op_map_path(t.store.dir(), request_key(r.args, r.context, OpFiles{op}));
}

bool generated(const std::string& path) {
    return std::ranges::find(package::k_generated_paths, path) !=
           std::end(package::k_generated_paths);
}

// The files of a stored package a partial hit packs: those skforge does not generate, in the
// manifest's order, with where each starts in the package's op files.
struct OpFileList {
    std::vector<std::pair<package::ManifestEntry, std::uint64_t>> files; // entry, offset
    std::uint64_t size = 0;
};

OpFileList op_file_list(const package::Manifest& m) {
    OpFileList l;
    for (const auto& e : m.entries)
        if (e.type == package::EntryType::file && !generated(e.path)) {
            l.files.emplace_back(e, l.size);
            l.size += e.size;
        }
    return l;
}

// Writes a package's op files (op_store.hpp) as read_payload reads and checks its entries,
// which come in the manifest's order (pack writes both sorted by path); committed, without
// fsync, only once the whole payload is verified.
class OpFilesSink final : public package::EntrySink {
  public:
    OpFilesSink(const std::string& path, const OpFileList& list) : m_list(list) {
        fs::create_directories(support::parent_directory(path));
        m_file.emplace(path, 0644);
    }
    void begin(const package::ManifestEntry& e) override {
        m_on = e.type == package::EntryType::file && !generated(e.path);
        if (m_on && (m_next >= m_list.files.size() || m_list.files[m_next].first.path != e.path))
            throw Error("'" + e.path + "' is not in its manifest's order in the payload");
    }
    void data(std::span<const std::uint8_t> bytes) override {
        if (m_on)
            m_file->write(bytes);
    }
    void end(const package::ManifestEntry&) override { m_next += m_on ? 1 : 0; }
    void commit() { m_file->commit(support::AtomicFile::Durability::none); }

  private:
    const OpFileList& m_list;
    std::optional<support::AtomicFile> m_file;
    std::size_t m_next = 0;
    bool m_on = false;
};

// Writes the op files of the package `run` (key `key`) into the store at `dir`.
std::string write_op_files(const std::string& dir, const std::string& key,
                           const package::RunPackage& run, const OpFileList& list) {
    std::string at = op_files_path(dir, key);
    OpFilesSink sink(at, list);
    run.read_payload(sink);
    sink.commit();
    return at;
}

// Records in every tier that `key`'s package (at `package`) holds the kernels of `ops`: its
// op files, then the op map. Neither is fsynced: a line lost in a crash is
// a miss, a damaged file is found before it is used.
void record_ops(Stores& s, const Request& r, const OpFiles& ops, const std::string& key,
                const std::string& package, support::Log& log) {
    for (auto& t : s.tiers) {
        try {
            package::RunPackage run(package);
            write_op_files(t.store.dir(), key, run, op_file_list(run.read_manifest()));
            for (const auto& op : ops) {
                std::string at = op_map_entry(t, r, op);
                fs::create_directories(support::parent_directory(at));
                support::AtomicFile f(at, 0644);
                f.write(key + "\n");
                f.commit(support::AtomicFile::Durability::none);
            }
        } catch (const std::exception& e) {
            log.warn("the " + t.what + " " + t.store.dir() +
                     " did not record its op JSONs: " + e.what());
        }
    }
    // The remote tier gets the op map only (a host that takes a package from it writes the op
    // files into its own first tier when a partial hit needs them).
    if (s.remote && s.remote_op_map) {
        std::vector<std::string> keys;
        for (const auto& op : ops)
            keys.push_back(request_key(r.args, r.context, OpFiles{op}));
        s.remote->record_ops(keys, key);
    }
}

// The key of a stored package holding `op`'s kernels, from the first tier that names one, the
// remote tier last.
std::optional<std::string> op_owner(Stores& s, const Request& r, const OpFiles::value_type& op) {
    for (const auto& t : s.tiers) {
        std::error_code ec;
        std::string at = op_map_entry(t, r, op);
        if (!fs::is_regular_file(at, ec))
            continue;
        auto text = support::read_file(at, {128});
        if (text.size() == 65 && text.back() == '\n')
            return text.substr(0, 64);
    }
    if (s.remote && s.remote_op_map)
        return s.remote->op_owner(request_key(r.args, r.context, OpFiles{op}));
    return std::nullopt;
}

// The package `key` is stored under, in every tier.
void store(Stores& s, const std::string& key, const std::string& package, support::Log& log) {
    fill(s, s.tiers.size(), key, package, log);
    if (s.remote)
        s.remote->insert(key, package);
}

// A miss: the real compiler on every op JSON, its package stored under `key`.
int compile_and_store(const Request& r, Stores& stores, support::Log& log) {
    auto [dir, file] = output_target(r.args.output);
    support::TempDir work(dir, ".skforge-op-compiler.");
    Compiled c = compile_into(r.args, r.options, r.real, r.args.params_dir, work.path(), log);
    if (c.package.empty()) {
        // Failed, or nothing the front end can store: the output gets what the real compiler
        // wrote, as it would have without the front end.
        hand_on(c.raw, dir, file);
        return c.status;
    }
    store(stores, r.key, c.package, log);
    record_ops(stores, r, r.ops, r.key, c.package, log);
    log.info("compiled and stored (key " + r.key.substr(0, 16) +
             "): " + place(c.package, dir, file));
    return 0;
}

// Why the op files at `at` are not those of `list`, or "" (every file's SHA-256 checked).
std::string op_files_problem(const std::string& at, const OpFileList& list) {
    support::UniqueFd fd(::open(at.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return std::string("cannot be read: ") + std::strerror(errno);
    if (static_cast<std::uint64_t>(st.st_size) != list.size)
        return std::to_string(st.st_size) + " bytes, not " + std::to_string(list.size);
    std::vector<std::uint8_t> buf;
    for (const auto& [e, offset] : list.files) {
        buf.resize(e.size);
        if (support::pread_full(fd.get(), buf, offset, at) != e.size)
            return "'" + e.path + "' is cut short";
        support::Sha256 h;
        h.update(buf);
        if (support::digest_hex(h.finish()) != e.sha256)
            return "the bytes of '" + e.path + "' do not have its SHA-256";
    }
    return "";
}

// The op files of the verified stored package `run` (key `key`): the first tier's whose every
// file checks, a damaged copy removed with a warning naming it, else written again into the
// first tier from the package itself.
std::string op_files(const Stores& s, const std::string& key, const package::RunPackage& run,
                     const OpFileList& list, support::Log& log) {
    for (const auto& t : s.tiers) {
        std::string at = op_files_path(t.store.dir(), key);
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(at, ec)))
            continue;
        auto why = op_files_problem(at, list);
        if (why.empty())
            return at;
        log.warn("the " + t.what + "'s op files of package " + key.substr(0, 16) + " (" + at +
                 ") are damaged: " + why + "; removed, taken again from the stored package");
        fs::remove(at, ec);
    }
    return write_op_files(s.tiers.front().store.dir(), key, run, list);
}

// One package from several: every kernel file of each (the same path must have the same bytes),
// streamed from the op store into the new package, and each SoC's index the union of theirs
// with binPath moved under `name`.
void assemble(const Stores& s, const std::vector<std::pair<std::string, std::string>>& parts,
              const std::string& name, const std::string& out, const FrontEndOptions& o,
              const std::string& work, support::Log& log) {
    std::string tree = work + "/tree";
    std::map<std::string, nlohmann::ordered_json> indexes; // by SoC directory
    std::set<std::string> listed;                          // SoC, op and entry, as text
    std::map<std::string, package::PackedFile> files;      // by path
    package::StubHeader first;
    std::optional<package::CannStamp> stamp;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        package::RunPackage run(parts[i].second);
        if (i == 0)
            first = run.header();
        auto manifest = run.read_manifest();
        if (i == 0)
            stamp = manifest.cann; // the key holds the toolkit's version: every part has it
        auto list = op_file_list(manifest);
        std::string from = op_files(s, parts[i].first, run, list, log);
        std::map<std::string, std::uint64_t> offsets;
        for (const auto& [e, offset] : list.files)
            offsets.emplace(e.path, offset);
        std::string old = manifest.name + "/";
        for (const auto& e : manifest.entries) {
            if (e.path.starts_with("config/") && e.path.ends_with(package::k_index_file_name)) {
                std::string soc = support::parent_directory(e.path).substr(7);
                std::string text(e.size, '\0');
                support::UniqueFd fd(support::open_read(from, false));
                support::pread_full(fd.get(),
                                    std::span(reinterpret_cast<std::uint8_t*>(text.data()), e.size),
                                    offsets.at(e.path), from);
                auto index = nlohmann::ordered_json::parse(text);
                for (auto& [op, body] : index.items())
                    for (auto entry : body.value("staticList", nlohmann::ordered_json::array())) {
                        auto bin = entry.value("binPath", std::string());
                        if (bin.starts_with(old))
                            entry["binPath"] = name + "/" + bin.substr(old.size());
                        // Once each (a linear search per entry took seconds at 2,000 ops).
                        if (listed.insert(soc + "\n" + op + "\n" + entry.dump()).second)
                            indexes[soc][op]["staticList"].push_back(entry);
                    }
            } else if (!generated(e.path)) {
                bool file = e.type == package::EntryType::file;
                auto [it, added] =
                    files.emplace(e.path, package::PackedFile{e.path, e.type, e.mode, e.size,
                                                              e.sha256, file ? from : std::string(),
                                                              file ? offsets.at(e.path) : 0});
                if (!added && it->second.sha256 != e.sha256)
                    throw Error("stored packages disagree on '" + e.path + "'");
            }
        }
    }
    for (const auto& [soc, index] : indexes) {
        fs::create_directories(tree + "/config/" + soc);
        std::ofstream(tree + "/config/" + soc + "/" + std::string(package::k_index_file_name))
            << index.dump() << "\n";
    }
    package::PackOptions p;
    p.source_dir = tree;
    p.output = out;
    p.name = name;
    p.version = "1.0.0";
    p.npu_arch = first.npu_arch;
    p.soc_version = first.soc_version;
    p.cann = stamp;
    p.sign_key = o.sign_key;
    for (auto& [path, f] : files)
        p.files.push_back(std::move(f));
    package::pack(p);
}

// A partial hit: the op JSONs whose kernels some stored packages hold come from them, only the
// others are compiled (and stored by themselves), and one package is assembled from both and
// stored under the request's key. Returns nullopt when no stored package helps.
std::optional<int> partial_hit(const Request& r, Stores& stores, support::Log& log) {
    std::map<std::string, OpFiles> covering; // stored key -> the request's ops it holds
    OpFiles fresh;
    for (const auto& op : r.ops) {
        if (auto k = op_owner(stores, r, op))
            covering[*k].insert(op);
        else
            fresh.insert(op);
    }
    if (covering.empty())
        return std::nullopt;
    auto [dir, file] = output_target(r.args.output);
    support::TempDir work(dir, ".skforge-op-compiler.");
    std::vector<std::pair<std::string, std::string>> parts; // key, verified package
    for (auto& [k, ops] : covering) {
        std::string part = work.path() + "/stored-" + k.substr(0, 16) + ".run";
        if (fetch_any(stores, k, part, log))
            parts.emplace_back(k, part);
        else
            fresh.insert(ops.begin(), ops.end());
    }
    if (parts.empty())
        return std::nullopt;
    if (!fresh.empty()) {
        std::string params = work.path() + "/ops";
        fs::create_directory(params);
        for (const auto& [digest, path] : fresh)
            fs::copy_file(path, params + "/" + support::base_name(path));
        Compiled c = compile_into(r.args, r.options, r.real, params, work.path(), log);
        if (c.status != 0) {
            hand_on(c.raw, dir, file); // as the real compiler left its output
            return c.status;
        }
        if (c.package.empty())
            return std::nullopt; // nothing to assemble from: compile everything
        std::string subkey = request_key(r.args, r.context, fresh);
        store(stores, subkey, c.package, log);
        record_ops(stores, r, fresh, subkey, c.package, log);
        parts.emplace_back(subkey, c.package);
    }
    std::string out = work.path() + "/assembled.run";
    assemble(stores, parts, "static_kernel_" + r.key.substr(0, 24), out, r.options, work.path(),
             log);
    store(stores, r.key, out, log);
    log.info("partial hit: " + std::to_string(r.ops.size() - fresh.size()) + " of " +
             std::to_string(r.ops.size()) + " op JSONs from the store, " +
             std::to_string(fresh.size()) + " compiled (key " + r.key.substr(0, 16) +
             "): " + place(out, dir, file));
    return 0;
}

} // namespace

OpCompilerArgs parse_op_compiler_args(const std::vector<std::string>& argv) {
    OpCompilerArgs a;
    a.argv = argv;
    for (std::size_t i = 0; i < argv.size() && a.passthrough.empty(); ++i) {
        const std::string& w = argv[i];
        auto eq = w.find('=');
        std::string name = w.starts_with("--") && eq != std::string::npos ? w.substr(0, eq) : w;
        if (const auto* spec = valued_option(name)) {
            if (name != w)
                a.*(spec->target) = w.substr(eq + 1);
            else if (i + 1 < argv.size())
                a.*(spec->target) = argv[++i];
            else
                a.passthrough = w + " without its value";
        } else if (w == "--enable_super_kernel") {
            a.super_kernel = true;
        } else if (w == "--count") {
            a.count = true;
        } else if (w == "-h" || w == "--help") {
            a.help = true;
        } else {
            a.passthrough = "the option '" + w + "'";
        }
    }
    if (a.passthrough.empty())
        a.passthrough = uncacheable(a);
    return a;
}

std::optional<std::string> find_real_op_compiler(const std::string& self,
                                                 const std::string& path_env,
                                                 const std::string& explicit_path) {
    std::error_code ec;
    auto me = fs::canonical(self, ec);
    auto usable = [&](const std::string& candidate) {
        std::error_code e2;
        auto real = fs::canonical(candidate, e2);
        return !e2 && fs::is_regular_file(real, e2) && real != me &&
               ::access(candidate.c_str(), X_OK) == 0;
    };
    if (!explicit_path.empty())
        return usable(explicit_path) ? std::optional(explicit_path) : std::nullopt;
    std::size_t begin = 0;
    while (begin <= path_env.size()) {
        auto end = path_env.find(':', begin);
        if (end == std::string::npos)
            end = path_env.size();
        std::string dir = path_env.substr(begin, end - begin);
        std::string candidate = (dir.empty() ? "." : dir) + "/op_compiler";
        if (usable(candidate))
            return candidate;
        begin = end + 1;
    }
    return std::nullopt;
}

std::string op_request_key(const OpCompilerArgs& a, const KeyContext& c) {
    return request_key(a, c, op_files(a.params_dir));
}

int run_op_compiler(const OpCompilerArgs& a, const FrontEndOptions& o, support::Log& log) {
    if (const char* g = std::getenv(k_guard); g != nullptr && *g != '\0')
        throw Error("started again by the op_compiler it runs (a loop through PATH); set "
                    "SKFORGE_OP_COMPILER to the real op_compiler");
    auto real = find_real_op_compiler(o.self, o.path_env, o.explicit_real);
    if (!real)
        throw Error(o.explicit_real.empty()
                        ? "no real op_compiler on PATH after this front end; source CANN's "
                          "set_env.sh or set SKFORGE_OP_COMPILER"
                        : "SKFORGE_OP_COMPILER='" + o.explicit_real +
                              "' is not an executable file other than this front end");
    if (!a.passthrough.empty())
        exec_real(*real, a.argv);
    Request r{a, o, *real, {}, {}, {}};
    try {
        r.context = {codegen::installed_cann_version(o.ascend_home).value_or(""),
                     support::sha256_file(*real, UINT64_MAX).sha256};
        r.ops = op_files(a.params_dir);
        r.key = request_key(a, r.context, r.ops);
    } catch (const Error& e) {
        log.warn(std::string(e.what()) + "; handed to the real op_compiler uncached");
        exec_real(*real, a.argv);
    }
    auto [dir, file] = output_target(a.output);
    fs::create_directories(dir);
    Stores stores{open_tiers(o, log), std::nullopt, {}};
    for (const auto& k : o.trusted_keys)
        stores.trusted.push_back(package::Key::load_public(k));
    stores.remote_op_map = o.remote_op_map;
    if (!o.remote_store.empty())
        stores.remote.emplace(o.remote_store, log);
    support::TempDir fetched(dir, ".skforge-op-compiler.");
    std::string tmp = fetched.path() + "/hit.run";
    // A verified copy of the stored package, moved into the output.
    // (Structured bindings are captured by copy: clang 14, the fuzz build's, cannot capture them.)
    auto served = [&, out_dir = dir, out_file = file] {
        if (!fetch_any(stores, r.key, tmp, log))
            return false;
        log.info("wrote " + place(tmp, out_dir, out_file));
        return true;
    };
    if (served())
        return 0;
    // One compile per key at a time: a process that waited finds the package stored.
    std::optional<KeyLock> lock;
    if (!stores.tiers.empty())
        lock.emplace(op_lock_path(stores.tiers.back().store.dir(), r.key), log);
    if (served())
        return 0;
    try {
        if (auto status = partial_hit(r, stores, log))
            return *status;
    } catch (const std::exception& e) {
        log.warn("partial hit not assembled (" + std::string(e.what()) +
                 "); compiling every op JSON");
    }
    return compile_and_store(r, stores, log);
}

} // namespace skforge::compile
