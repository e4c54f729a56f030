// SPDX-License-Identifier: Apache-2.0
#pragma once

// skc's commands: each takes the values its command line gave (main.cpp declares the options),
// checks them, calls the library and returns the exit status; what a command prints is rendered
// by the library that owns the data (package/, compile/ and graph/report.hpp, fusion/report.hpp).
#include "skforge/compile/cache_store.hpp"
#include "skforge/compile/compile.hpp"
#include "skforge/package/makeself.hpp"
#include "skforge/package/writer.hpp"

#include <string>
#include <vector>

namespace skforge::skc {

/// How a command that makes something prints its result.
struct Output {
    bool json = false;  ///< the result as one JSON object on stdout
    bool quiet = false; ///< nothing but the result, warnings and errors
};

/// --compress and --sign-key, as pack and import take them.
struct Packing {
    std::string compress = "gzip";
    std::string key;
    std::string cann_version; ///< --cann-version: the CANN release the kernels were built with
};

struct PackArgs {
    package::PackOptions pack;
    Packing packing;
    Output out;
};

struct ImportArgs {
    package::ImportOptions import;
    Packing packing;
    Output out;
};

struct InspectArgs {
    std::string path;
    std::vector<std::string> trusted_keys;
    bool list = false, json = false, verify = false;
};

struct PlanArgs {
    std::string graph, output;
    std::string format = "text", layout = "auto";
};

struct CompileArgs {
    compile::CompileOptions compile;
    std::string cache_dir, max_size, key, depfile;
    std::string sk_backend = "auto";
    bool no_cache = false, sources_only = false;
    Output out;
};

/// The options every `skc cache` command takes.
struct CacheArgs {
    std::string dir, max_size;
    bool json = false;
};

/// Each runs one command and returns its exit status; errors throw (run_main maps them to 1 or 2).
int cmd_pack(PackArgs a);
int cmd_import(ImportArgs a);
int cmd_inspect(const InspectArgs& a); ///< 1 when a check failed
int cmd_keygen(const std::string& name);
int cmd_check(const std::string& graph); ///< 1 when the graph is not valid
int cmd_plan(const PlanArgs& a);         ///< 1 when the graph is not valid
int cmd_compile(CompileArgs a);
int cmd_cache_stats(const CacheArgs& a);
int cmd_cache_clean(const CacheArgs& a, const compile::CleanRequest& request);
int cmd_cache_verify(const CacheArgs& a, bool fix); ///< 1 when a bad entry is left

} // namespace skforge::skc
