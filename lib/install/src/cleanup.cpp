// SPDX-License-Identifier: Apache-2.0
// cleanup-from-log: the disk side of what cleanup_log.cpp finds in a job's log text.
#include "skforge/install/cleanup_log.hpp"
#include "skforge/install/query.hpp"
#include "skforge/install/safe_fs.hpp"
#include "skforge/package/reader.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"

#include <climits>
#include <cstdlib>
#include <sys/stat.h>

namespace skforge::install {

using support::Error;

namespace {

// The package names the .run files in `dir` hold (their headers; the stem when unreadable).
std::vector<std::string> run_names(const std::string& dir, support::Log& log) {
    std::vector<std::string> names;
    Dir d{support::open_read(dir), dir};
    for (const auto& name : list_dir(d)) {
        auto st = stat_at(d, name);
        if (!st || !S_ISREG(st->st_mode) || name.size() <= 4 || !name.ends_with(".run"))
            continue;
        try {
            names.push_back(package::RunPackage(dir + "/" + name).header().name);
        } catch (const Error& e) {
            log.warn(std::string("cannot read the package name of ") + e.what() +
                     "; using the file's stem");
            names.push_back(name.substr(0, name.size() - 4));
        }
    }
    return names;
}

void refuse_candidate(support::Log& log, const std::string& c, const std::string& why) {
    log.warn("refusing unrelated or redirected uninstall script: " + c + " (" + why + ")");
}

void already_removed(support::Log& log, const std::string& c, const std::string& stem) {
    log.info(stem + " is already removed (" + c + " is gone); nothing to do");
}

// One candidate whose text passed: the disk checks through handles (no symlink below the root,
// a regular uninstall.sh at its expected resolved path), then the uninstall. A package already
// gone is said so, not warned about: a retried cleanup is quiet.
void cleanup_candidate(const CleanupRequest& rq, const InstallTree& tree, const std::string& c,
                       const std::string& stem, support::Log& log) {
    auto pkg_dir = open_dir_beneath(tree.ai_core(), stem);
    if (!pkg_dir)
        return already_removed(log, c, stem);
    auto st = stat_at(*pkg_dir, "uninstall.sh");
    if (!st && classify_package_dir(tree, stem, false).state == DirState::left_behind) {
        already_removed(log, c, stem);
        return log.warn("'" + pkg_dir->path + "' holds what its uninstall kept; 'skinstall " +
                        "uninstall --force " + stem + "' removes it");
    }
    char buf[PATH_MAX];
    std::string expect =
        tree.resolved_root() + "/opp/static_kernel/ai_core/" + stem + "/uninstall.sh";
    if (!st || !S_ISREG(st->st_mode) || ::realpath(c.c_str(), buf) == nullptr || expect != buf)
        return refuse_candidate(log, c, "not a regular file at its expected resolved path");
    tree.require_writable();
    TreeLock lock(tree, LockMode::exclusive, rq.wait);
    recover(tree, log);
    auto r = uninstall_package(tree, stem, rq.force, log);
    if (rq.uninstalled)
        rq.uninstalled(tree, r);
}

} // namespace

void cleanup_from_log(const CleanupRequest& rq, support::Log& log) {
    auto stems = run_names(rq.outputs_dir, log);
    auto tree = InstallTree::open(rq.install_path, Create::no);
    char buf[PATH_MAX];
    std::string resolved = tree                                       ? tree->resolved_root()
                           : ::realpath(rq.install_path.c_str(), buf) ? std::string(buf)
                                                                      : rq.install_path;
    // The paths skinstall and install.sh print are absolute (a relative --install-path joined
    // to the job's working directory, or resolved); both forms are accepted.
    std::string absolute = absolute_install_path(rq.install_path, resolved);
    for (const auto& c : uninstall_candidates(rq.log_text)) {
        std::string stem;
        std::string why = check_candidate_text(c, absolute, resolved, stems, stem);
        if (!why.empty()) {
            refuse_candidate(log, c, why);
            continue;
        }
        if (!tree) {
            already_removed(log, c, stem); // the whole tree is gone
            continue;
        }
        try {
            cleanup_candidate(rq, *tree, c, stem, log);
        } catch (const Error& e) {
            if (std::string(e.what()).starts_with("refusing '"))
                refuse_candidate(log, c, e.what());
            else
                log.warn("uninstall of " + stem + " failed: " + e.what());
        }
    }
}

} // namespace skforge::install
