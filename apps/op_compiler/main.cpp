// SPDX-License-Identifier: Apache-2.0
// skforge-op-compiler: CANN's op_compiler command line, answered from a content-addressed store
// (compile/op_compiler.hpp, share/doc/op-compiler.md). Named op_compiler (the link in
// lib/skforge/masquerade/), every argument is op_compiler's; named skforge-op-compiler, it also
// answers --help and --version itself.
#include "../common/cli_main.hpp"
#include "skforge/compile/op_compiler.hpp"

#include <algorithm>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using skforge::support::Error;

constexpr const char* k_help = R"(Usage: skforge-op-compiler [op_compiler options]
       op_compiler [op_compiler options]   (through the link in lib/skforge/masquerade/)

CANN's op_compiler, answered from a store of verified skforge packages: a request whose op
JSONs (-p), SoC (-v), SuperKernel options, CANN toolkit and real op_compiler were seen before
gets the stored package in -o without compiling; otherwise the real op_compiler (the next one
on PATH that is not this program, or SKFORGE_OP_COMPILER) compiles into a private directory,
and the package it writes is imported (skc import), stored and written into -o. Its messages
and exit status reach the caller unchanged. -k, -m tune, --count, --help and options this
front end does not know go to the real op_compiler as they are, uncached.

Put the front end first on PATH:  export PATH=/usr/lib/skforge/masquerade:$PATH

Environment:
  SKFORGE_OP_COMPILER   the real op_compiler (default: the next op_compiler on PATH)
  SKFORGE_OP_STORE      the local store (default: $XDG_CACHE_HOME/skforge/op-store, else
                        ~/.cache/skforge/op-store; "off": none)
  SKFORGE_CACHE_DIR     the shared store, one host or several over NFS (skc compile's cache)
  SKFORGE_REMOTE_STORE  the remote store: an http(s) URL answering GET, PUT and HEAD of plain
                        files (a WebDAV directory, bazel-remote, ccache's http storage)
  SKFORGE_REMOTE_OP_MAP "on": keep an op map in the remote store too, so that a host with an
                        empty local store gets partial hits from it (one request per op JSON)
  SKFORGE_SIGN_KEY      sign the packages it makes with this key (skc keygen)
  SKFORGE_TRUSTED_KEYS  public keys (PEM paths, ':'-separated): a stored package is used only
                        when one of them signed it; others are compiled again
Stores are managed with 'skc cache stats|clean|verify --cache-dir DIR'.
Exit status: the real op_compiler's; 1 when the front end itself fails.
)";

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v == nullptr ? "" : v;
}

std::string local_store() {
    std::string s = env("SKFORGE_OP_STORE");
    if (s == "off")
        return "";
    if (!s.empty())
        return s;
    std::string base = env("XDG_CACHE_HOME");
    if (base.empty() && !env("HOME").empty())
        base = env("HOME") + "/.cache";
    return base.empty() ? "" : base + "/skforge/op-store";
}

// Front-end messages on stderr, each marked as the front end's.
class FrontEndLog final : public skforge::support::Log {
  public:
    void info(const std::string& m) override { say("", m); }
    void warn(const std::string& m) override { say("WARNING: ", m); }

  private:
    static void say(const char* level, const std::string& m) {
        std::fprintf(stderr, "skforge-op-compiler: %s%s\n", level,
                     skforge::cli::terminal_safe(m).c_str());
    }
};

} // namespace

int main(int argc, char** argv) {
    std::setlocale(LC_ALL, "C.UTF-8");
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string called = std::filesystem::path(argc > 0 ? argv[0] : "").filename();
    if (called != "op_compiler" && args.size() == 1) {
        if (args[0] == "--help" || args[0] == "-h") {
            std::fputs(k_help, stdout);
            return 0;
        }
        if (args[0] == "--version") {
            skforge::cli::print_version("skforge-op-compiler");
            return 0;
        }
    }
    skforge::compile::FrontEndOptions o;
    std::error_code ec;
    o.self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    o.path_env = env("PATH");
    o.explicit_real = env("SKFORGE_OP_COMPILER");
    o.ascend_home = env("ASCEND_HOME_PATH");
    o.local_store = local_store();
    o.shared_store = env("SKFORGE_CACHE_DIR");
    o.remote_store = env("SKFORGE_REMOTE_STORE");
    o.remote_op_map = env("SKFORGE_REMOTE_OP_MAP") == "on";
    for (std::size_t b = 0, e; b < env("SKFORGE_TRUSTED_KEYS").size(); b = e + 1) {
        std::string keys = env("SKFORGE_TRUSTED_KEYS");
        e = std::min(keys.find(':', b), keys.size());
        if (e > b)
            o.trusted_keys.push_back(keys.substr(b, e - b));
    }
    if (!env("SKFORGE_SIGN_KEY").empty())
        o.sign_key = env("SKFORGE_SIGN_KEY");
    FrontEndLog log;
    try {
        return skforge::compile::run_op_compiler(skforge::compile::parse_op_compiler_args(args), o,
                                                 log);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "skforge-op-compiler: ERROR: %s\n",
                     skforge::cli::terminal_safe(e.what()).c_str());
        return 1;
    }
}
