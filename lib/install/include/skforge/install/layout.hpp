// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/install/safe_fs.hpp"
#include "skforge/support/log.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace skforge::install {

/// Whether opening the tree may create `opp/static_kernel/ai_core`.
enum class Create { no, yes };

/// How the lock is held.
enum class LockMode { shared, exclusive };

/// Names under ai_core/ that belong to skforge, not to a package.
inline constexpr const char* k_config_dir = "config";
inline constexpr const char* k_lock_file = "static_kernel.lock";
inline constexpr const char* k_config_ini = "config.ini";
inline constexpr const char* k_journal = ".skforge-journal";
inline constexpr const char* k_stage_prefix = ".skforge-stage-";
inline constexpr const char* k_index_file = "binary_info_config.json";
/// The per-key record beside the global indexes, in config/ (index_record.hpp): a cache.
inline constexpr const char* k_record_file = "static_kernel.keys";
inline constexpr const char* k_log_dir = "log";

/// The modes skforge gives what it creates in a tree (share/doc/installer.md, "Modes"). Root
/// installs are for every user (directories 0755, files as packed: 0644 or 0755), as CANN's
/// installers make a root install "for all". Any other user is CANN's run user: directories
/// 0770, files without permissions for others (0640, 0750); with `--install-for-all` others get
/// the group's bits without write (0775, 0644, 0755), as CANN's `--install-for-all` does.
struct Modes {
    mode_t dir = 0755;      ///< every directory created
    bool for_others = true; ///< files keep their bits for others

    /// The mode of a file packed (or derived) with `packed` (0644 or 0755).
    mode_t file(mode_t packed) const { return for_others ? packed : packed & 0770; }
    /// The mode of a manifest entry: directories get `dir`, files `file(mode)`.
    mode_t entry(bool directory, mode_t packed) const { return directory ? dir : file(packed); }
    /// The modes for this process: root (effective uid 0) installs for all; others as the run user.
    static Modes for_process(bool install_for_all);
    /// The modes a package directory of mode `dir_mode` was installed with; nullopt when it is
    /// none of 0755, 0770, 0775.
    static std::optional<Modes> of_package_dir(mode_t dir_mode);
};

/// The install path as the user gave it: `--install-path`, else $ASCEND_HOME_PATH; throws a
/// usage Error when neither is set, or when it starts with '~' (a shell leaves `~` after `=`
/// unexpanded: `--install-path=~/x` would name a directory called '~').
std::string choose_install_path(const std::string& option);

/// The install path as given, made absolute without resolving symlinks (`latest` stays
/// `latest`): a relative path is joined to the working directory, `.` components and repeated
/// slashes dropped; one with a `..` component is `resolved` instead. What skinstall prints, so a
/// log names the tree the same way whatever the job's working directory was.
std::string absolute_install_path(const std::string& given, const std::string& resolved);

/// `<install-path>/opp/static_kernel/ai_core`, opened through handles. The install path itself
/// may be a symlink (toolkits install `latest -> 8.x`) and is resolved once; below it nothing is
/// ever followed.
class InstallTree {
  public:
    /// Opens (and with Create::yes creates, mode 0755) the tree; nullopt when it does not exist
    /// and `create` is no. Throws naming the path when a component is a symlink or not a
    /// directory, or the install path does not exist.
    static std::optional<InstallTree> open(const std::string& install_path, Create create,
                                           Modes modes = Modes::for_process(false));

    /// Throws, naming the owner and what to do (write_refusal), unless this process may write
    /// ai_core/ and the directories skforge keeps in it (config/, config/<soc dir>/, log/).
    void require_writable() const;
    /// The modes this process gives what it creates.
    const Modes& modes() const { return m_modes; }
    /// The ai_core directory.
    const Dir& ai_core() const { return m_ai_core; }
    /// ai_core/config, created (0755) when missing.
    Dir config_dir() const;
    /// `<install-path as given>/opp/static_kernel/ai_core`.
    const std::string& shown() const { return m_ai_core.path; }
    /// The install path resolved once (realpath).
    const std::string& resolved_root() const { return m_resolved; }

    /// Installed packages in install order (config.ini), oldest first.
    std::vector<std::string> install_order() const;
    /// Rewrites config.ini whole (Sync as write_file_at).
    void write_install_order(const std::vector<std::string>& order, Sync sync = Sync::yes) const;

  private:
    InstallTree(Dir ai_core, std::string resolved, Modes modes)
        : m_ai_core(std::move(ai_core)), m_resolved(std::move(resolved)), m_modes(modes) {}
    Dir m_ai_core;
    std::string m_resolved;
    Modes m_modes;
};

/// How long to wait for the lock, and where to say that we are waiting.
struct LockWait {
    std::optional<double> timeout_seconds; ///< nullopt: wait as long as it takes
    support::Log* log = nullptr;           ///< gets "waiting for the lock held by pid N (...)"
};

/// flock on ai_core/config/static_kernel.lock, held for the object's life. Mutating commands hold
/// it exclusively, queries shared, so readers never see a partial state.
class TreeLock {
  public:
    /// Takes the lock; when another process holds it, says who (pid and command line, from
    /// /proc/locks) through `wait.log` and waits, or throws after `wait.timeout_seconds`.
    TreeLock(const InstallTree& tree, LockMode mode, const LockWait& wait = {});
    TreeLock(TreeLock&&) = default;
    ~TreeLock();

    /// Changes whenever a lock of this process is taken or released: what was checked in the
    /// tree under one lock hold (the per-key record's description of the packages) may be taken
    /// as still true while this value stays the same, and never after.
    static std::uint64_t generation();

  private:
    support::UniqueFd m_fd;
};

/// Why CANN's runtime would not find the kernels' JSON under this install path, or nullopt: it
/// cuts a static kernel's absolute path at its first ".o" to name the JSON beside the binary
/// (opbase indv_collector.cpp, UpdateStaticJsonExtraInfo), so a ".o" anywhere in the install
/// path as given (`given`, what $ASCEND_HOME_PATH says) or resolved breaks every lookup.
std::optional<std::string> runtime_path_problem(const std::string& given,
                                                const std::string& resolved);

/// The text of config.ini for `order`.
std::string render_config_ini(const std::vector<std::string>& order);

/// The names config.ini lists; entries that are not valid package names are dropped.
std::vector<std::string> parse_config_ini(const std::string& text);

} // namespace skforge::install
