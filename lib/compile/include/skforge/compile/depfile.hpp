// SPDX-License-Identifier: Apache-2.0
#pragma once

// What `skc compile --depfile` writes: the files a compile read, as a Makefile rule that make,
// Ninja and CMake's DEPFILE read.
#include "skforge/compile/compile.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace skforge::compile {

/// Every file whose change can change what compile(`options`) writes, each once, in the order the
/// compile reads them: the graph, each kernel's metadata and binary, for the host target each
/// kernel's C++ source, and the signing key. Paths as the compile opens them (relative ones are
/// relative to the working directory). Loads the graph; throws an Error when it has errors.
std::vector<std::string> compile_inputs(const CompileOptions& options);

/// `path` written as one file name of a Makefile rule: a space as `\ `, `$` as `$$`, `#` as
/// `\#`. Throws an Error naming the path when it holds a newline, carriage return, tab or
/// backslash, which make, Ninja and CMake do not read alike.
std::string depfile_escape(std::string_view path);

/// The depfile text: `target: prerequisite...`, one name per line, each escaped.
std::string depfile_rule(std::string_view target, const std::vector<std::string>& prerequisites);

/// The running executable's path (/proc/self/exe resolved): skc lists itself as a prerequisite,
/// so a new skc rebuilds what the old one built.
std::string self_executable();

} // namespace skforge::compile
