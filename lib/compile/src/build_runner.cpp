// SPDX-License-Identifier: Apache-2.0
#include "build_runner.hpp"

#include "skforge/support/atomic_file.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/process.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

namespace skforge::compile {

namespace fs = std::filesystem;

std::string compiler() {
    const char* cxx = std::getenv("CXX");
    return cxx != nullptr && *cxx != '\0' ? cxx : "c++";
}

void write_text(const fs::path& path, std::string_view text, mode_t mode) {
    fs::create_directories(path.parent_path());
    support::AtomicFile f(path.string(), mode);
    f.write(text);
    f.commit();
}

std::vector<std::string> split_words(const std::string& text) {
    std::vector<std::string> out;
    std::string word;
    for (char c : text + " ") {
        if (c == ' ' || c == '\t') {
            if (!word.empty())
                out.push_back(word);
            word.clear();
        } else {
            word += c;
        }
    }
    return out;
}

void Builder::run_all(const std::vector<std::vector<std::string>>& commands,
                      const std::vector<std::string>& what, unsigned jobs) {
    std::atomic<std::size_t> next{0};
    std::vector<support::ProcessResult> results(commands.size());
    std::mutex progress_mutex;
    std::size_t done = 0;
    support::NullProgress none;
    support::Progress& progress = m_progress != nullptr ? *m_progress : none;
    progress.begin("building " + std::to_string(commands.size()) + " target(s)", commands.size());
    auto worker = [&] {
        for (std::size_t i = next++; i < commands.size(); i = next++) {
            results[i] = support::run_process(commands[i], m_dir);
            std::lock_guard lock(progress_mutex);
            progress.update(++done);
        }
    };
    std::vector<std::thread> threads;
    unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(commands.size())));
    std::exception_ptr failure;
    std::mutex m;
    for (unsigned t = 0; t < n; ++t)
        threads.emplace_back([&] {
            try {
                worker();
            } catch (...) {
                std::lock_guard lock(m);
                failure = std::current_exception();
            }
        });
    for (auto& t : threads)
        t.join();
    progress.end();
    if (failure)
        std::rethrow_exception(failure);
    for (std::size_t i = 0; i < commands.size(); ++i) {
        m_log += "$ " + support::command_line(commands[i]) + "\n" + results[i].output;
        if (results[i].exit_code != 0)
            throw support::Error("building " + what[i] + " failed (exit " +
                                 std::to_string(results[i].exit_code) + "):\n$ " +
                                 support::command_line(commands[i]) + "\n" + results[i].output);
    }
}

} // namespace skforge::compile
