// SPDX-License-Identifier: Apache-2.0
// index_floor FILE DIR: the least a change of one package must spend on a global index of FILE's
// size, measured once: what skinstall's commit does to that file and nothing else. The old index
// (a copy of FILE in DIR, made first and synced, untimed) is opened; a new file is filled from it
// by copy_file_range, fsynced, renamed over the old one, the directory fsynced, and the old
// file's descriptor closed (which frees its pages and blocks). No record, no package, no
// config.ini. Prints the wall seconds, for test/bench/bench_installed_many.sh to report beside
// the install and uninstall it bounds (issue 22).
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace {

int fail(const std::string& what) {
    std::fprintf(stderr, "index_floor: %s: %s\n", what.c_str(), std::strerror(errno));
    return 1;
}

// Copies all of `from` into `to` in the kernel; false on an error.
bool copy_all(int from, int to, off_t size) {
    off_t off = 0;
    while (off < size) {
        ssize_t n = ::copy_file_range(from, &off, to, nullptr, static_cast<size_t>(size - off), 0);
        if (n <= 0)
            return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: index_floor FILE DIR\n");
        return 2;
    }
    std::string dir = argv[2], old_path = dir + "/index", tmp = dir + "/.index.tmp";
    int src = ::open(argv[1], O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (src < 0 || ::fstat(src, &st) != 0)
        return fail(argv[1]);
    int seed = ::open(old_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (seed < 0 || !copy_all(src, seed, st.st_size) || ::fsync(seed) != 0 || ::close(seed) != 0)
        return fail(old_path);
    ::close(src);
    int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || ::fsync(dfd) != 0)
        return fail(dir);
    ::sync();

    auto t0 = std::chrono::steady_clock::now();
    int old = ::open(old_path.c_str(), O_RDONLY | O_CLOEXEC);
    int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (old < 0 || out < 0 || !copy_all(old, out, st.st_size) || ::fsync(out) != 0 ||
        ::close(out) != 0)
        return fail(tmp);
    if (::rename(tmp.c_str(), old_path.c_str()) != 0 || ::fsync(dfd) != 0)
        return fail(old_path);
    ::close(old);
    auto t1 = std::chrono::steady_clock::now();

    ::unlink(old_path.c_str());
    ::close(dfd);
    std::printf("%.6f\n", std::chrono::duration<double>(t1 - t0).count());
    return 0;
}
