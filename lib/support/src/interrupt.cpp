// SPDX-License-Identifier: Apache-2.0
// Signals are taken by sigwait on a thread of their own, so the cleanup may allocate, lock and
// call the filesystem: nothing runs in an asynchronous signal handler.
#include "skforge/support/interrupt.hpp"

#include "skforge/support/file.hpp"

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <pthread.h>
#include <set>
#include <thread>
#include <unistd.h>
#include <vector>

namespace skforge::support {

namespace fs = std::filesystem;

namespace {

constexpr int k_signals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr std::size_t k_suffix = 6; // mkstemp's XXXXXX

// Process-long and never destroyed: the handler thread may use it while main's statics are
// being destroyed at exit.
struct Registry {
    std::mutex mutex;
    std::multiset<std::string> paths;
    std::multiset<pid_t> children;
    bool handling = false;
};

Registry& registry() {
    static auto* r = new Registry;
    return *r;
}

bool all_digits(std::string_view s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

bool alnum(std::string_view s) {
    return s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") ==
           std::string_view::npos;
}

// Calls `fn(path, name)` for each entry of `dir`; a directory that cannot be read has none.
template <class F> void for_each_entry(const std::string& dir, F&& fn) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        fn(it->path().string(), it->path().filename().string());
}

bool remove_path(const std::string& path) {
    std::error_code ec;
    fs::remove_all(path, ec);
    return !fs::exists(fs::symlink_status(path, ec));
}

// Removes, in `dir`, the temporaries named with our own pid (registered or not: one may have
// been created just before its registration). Returns whether all are gone.
bool remove_own_temporaries(const std::string& dir) {
    bool gone = true;
    for_each_entry(dir, [&](const std::string& path, const std::string& name) {
        pid_t pid = 0;
        if (is_temporary_name(name, pid) && pid == ::getpid())
            gone = remove_path(path) && gone;
    });
    return gone;
}

[[noreturn]] void handle(int sig) {
    auto& r = registry();
    // Held until the process ends: no temporary is registered or released from now on.
    r.mutex.lock();
    r.handling = true;
    for (pid_t child : r.children)
        ::kill(child, SIGKILL);
    std::set<std::string> dirs;
    for (const auto& p : r.paths)
        dirs.insert(parent_directory(p));
    // Worker threads still run until the process ends and may create a file in a build
    // directory being removed: a few passes make sure it is gone.
    for (int pass = 0; pass < 50; ++pass) {
        bool gone = true;
        for (const auto& p : r.paths)
            gone = remove_path(p) && gone;
        for (const auto& d : dirs)
            gone = remove_own_temporaries(d) && gone;
        if (gone)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // End the process by the signal itself, so the parent sees how it ended.
    ::signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
}

} // namespace

std::string temp_tag() {
    return std::to_string(::getpid());
}

TempRegistration::TempRegistration(std::string path) : m_path(std::move(path)) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.paths.insert(m_path);
    m_registered = true;
}

TempRegistration::~TempRegistration() {
    release();
}

void TempRegistration::release() {
    if (!m_registered)
        return;
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.paths.erase(r.paths.find(m_path));
    m_registered = false;
}

ChildRegistration::ChildRegistration(pid_t pid) : m_pid(pid) {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.children.insert(m_pid);
}

ChildRegistration::~ChildRegistration() {
    auto& r = registry();
    std::lock_guard lock(r.mutex);
    r.children.erase(r.children.find(m_pid));
}

InterruptHandler::InterruptHandler() {
    sigset_t set;
    sigemptyset(&set);
    for (int sig : k_signals) {
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaddset(&set, sig);
    }
    ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::thread([set] {
        for (;;) {
            int sig = 0;
            if (::sigwait(&set, &sig) == 0)
                handle(sig);
        }
    }).detach();
}

InterruptHandler::~InterruptHandler() {
    bool handling = false;
    {
        auto& r = registry();
        if (r.mutex.try_lock()) {
            handling = r.handling;
            r.mutex.unlock();
        } else {
            handling = true; // held by the handler (or briefly by a registration: wait a little)
        }
    }
    while (handling) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto& r = registry();
        if (r.mutex.try_lock()) {
            handling = r.handling;
            r.mutex.unlock();
        }
    }
}

bool is_temporary_name(std::string_view name, pid_t& pid, std::string_view only_for) {
    if (name.size() < k_suffix + 4 || name.front() != '.')
        return false;
    std::string_view suffix = name.substr(name.size() - k_suffix);
    std::string_view rest = name.substr(0, name.size() - k_suffix);
    if (!alnum(suffix) || !rest.ends_with('.'))
        return false;
    rest.remove_suffix(1);
    auto dot = rest.rfind('.');
    if (dot == std::string_view::npos || !all_digits(rest.substr(dot + 1)) ||
        rest.size() - dot > 10)
        return false;
    std::string_view digits = rest.substr(dot + 1), head = rest.substr(0, dot);
    bool ours = only_for.empty()
                    ? head == ".skc-build" || (head.size() > 5 && head.ends_with(".tmp"))
                    : head.size() == only_for.size() + 5 && head.starts_with('.') &&
                          head.substr(1, only_for.size()) == only_for && head.ends_with(".tmp");
    if (!ours)
        return false;
    pid = static_cast<pid_t>(std::stol(std::string(digits)));
    return pid > 0;
}

std::size_t remove_stale_temporaries(const std::string& dir, std::string_view only_for) {
    std::size_t removed = 0;
    for_each_entry(dir, [&](const std::string& path, const std::string& name) {
        pid_t pid = 0;
        if (!is_temporary_name(name, pid, only_for) || pid == ::getpid())
            return;
        if (::kill(pid, 0) == 0 || errno != ESRCH)
            return; // alive (or not ours to signal: alive too)
        if (remove_path(path))
            ++removed;
    });
    return removed;
}

} // namespace skforge::support
