// SPDX-License-Identifier: Apache-2.0
#pragma once

// The `op_compiler` front end (share/doc/op-compiler.md): answers to CANN's op_compiler command
// line the way ccache answers to a compiler's, keys a request by what determines its output,
// serves a verified package from the store or runs the real op_compiler and imports what it
// wrote (package/makeself.hpp), storing it for the next process, host or rank.
#include "skforge/support/log.hpp"

#include <optional>
#include <string>
#include <vector>

namespace skforge::compile {

/// What op_compiler's command line asks for (CANN's op_compiler reference; the options TorchAir,
/// torch_npu and vLLM-Ascend pass). Every option keeps the words it was given in `argv`, which
/// a miss hands to the real compiler with only `-o` changed.
struct OpCompilerArgs {
    std::vector<std::string> argv; ///< the caller's arguments, as given (not argv[0])
    std::string params_dir;        ///< -p/--op_params_dir
    std::string kernel_name;       ///< -k/--kernel_name
    std::string soc;               ///< -v/--soc_version
    std::string output;            ///< -o/--output: a directory, or a file ending in .run
    std::string compile_mode;      ///< -m/--compile_mode
    std::string follow;            ///< -f/--follow_op_params_jit
    std::string jobs;              ///< -j/--job (does not change the output: not in the key)
    std::string log_level;         ///< -l/--log (does not change the output: not in the key)
    std::string sk_options;        ///< --super_kernel_options
    std::string sk_debug_options;  ///< --super_kernel_debug_options
    bool super_kernel = false;     ///< --enable_super_kernel
    bool count = false;            ///< --count
    bool help = false;             ///< -h/--help
    /// Why the request is handed to the real compiler as it is, uncached (an option the front
    /// end does not know, a debug or tuning compile, no -p); empty: the request is cacheable.
    std::string passthrough;
};

/// Parses op_compiler's arguments. Never throws: what it does not understand makes the request
/// a passthrough, so the real compiler answers it (with its own messages and exit status).
OpCompilerArgs parse_op_compiler_args(const std::vector<std::string>& argv);

/// The real op_compiler: `explicit_path` when set (SKFORGE_OP_COMPILER), else the first
/// executable named `op_compiler` in `path_env`'s directories that is not `self` (the front end,
/// by its resolved path, under any name). nullopt when there is none.
std::optional<std::string> find_real_op_compiler(const std::string& self,
                                                 const std::string& path_env,
                                                 const std::string& explicit_path);

/// What the key depends on besides the op JSONs.
struct KeyContext {
    std::string toolkit_version; ///< Version= of the CANN toolkit under $ASCEND_HOME_PATH, or ""
    std::string compiler_digest; ///< SHA-256 of the real op_compiler's file
};

/// The request's content key (64 hex digits): the canonical form of every op JSON directly in
/// params_dir (parsed, keys sorted, whitespace dropped; their names, order and directory do not
/// count, duplicates count once), the options that change the output and `context`. Throws an
/// Error naming the file when an op JSON cannot be read or is not JSON.
std::string op_request_key(const OpCompilerArgs& args, const KeyContext& context);

/// Where the front end keeps and finds packages, and how it checks them.
struct FrontEndOptions {
    std::string self;                    ///< the front end's own executable (/proc/self/exe)
    std::string path_env;                ///< $PATH
    std::string explicit_real;           ///< $SKFORGE_OP_COMPILER
    std::string ascend_home;             ///< $ASCEND_HOME_PATH
    std::string local_store;             ///< the local tier's directory ("" : none)
    std::string shared_store;            ///< $SKFORGE_CACHE_DIR: the tier skc compile's cache uses
    std::string remote_store;            ///< $SKFORGE_REMOTE_STORE: http(s) URL of the remote tier
    std::optional<std::string> sign_key; ///< $SKFORGE_SIGN_KEY: the packages it makes are signed
    std::vector<std::string> trusted_keys; ///< $SKFORGE_TRUSTED_KEYS: a stored package is used
                                           ///< only when one of these public keys signed it
    /// $SKFORGE_REMOTE_OP_MAP=on: the remote tier's op map is written and read (a request per
    /// op JSON, so off by default)
    bool remote_op_map = false;
};

/// Runs one op_compiler request: a hit writes the stored package into the output; a miss runs
/// the real compiler into a private directory, imports the `.run` it wrote, stores it and writes
/// it into the output; a passthrough runs the real compiler as it was asked. Returns the exit
/// status for the caller (the real compiler's when it ran and failed). Messages of the front
/// end go to `log`, prefixed so that they are told apart from the real compiler's.
int run_op_compiler(const OpCompilerArgs& args, const FrontEndOptions& options, support::Log& log);

} // namespace skforge::compile
