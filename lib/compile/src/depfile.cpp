// SPDX-License-Identifier: Apache-2.0
// The inputs of a compile and the Makefile rule that lists them (skc compile --depfile).
#include "skforge/compile/depfile.hpp"

#include "inputs.hpp"
#include "targets.hpp"

#include "skforge/graph/graph.hpp"
#include "skforge/support/error.hpp"

#include <algorithm>
#include <filesystem>

namespace skforge::compile {

namespace fs = std::filesystem;
using support::Error;

std::vector<std::string> compile_inputs(const graph::Graph& g, const std::string& arch,
                                        const CompileOptions& o) {
    std::vector<std::string> files{g.file};
    auto add = [&files](const std::string& path) {
        if (std::find(files.begin(), files.end(), path) == files.end())
            files.push_back(path);
    };
    for (const auto& op : g.ops) {
        add(graph::resolve_path(g, op.kernel.json_path));
        if (!op.kernel.bin_path.empty())
            add(graph::resolve_path(g, op.kernel.bin_path));
    }
    // Only the host target builds sources; the NPU targets package the binaries.
    if (arch == "host")
        for (const auto& file : host_kernel_files(g))
            add(file);
    if (o.sign_key)
        add(*o.sign_key);
    return files;
}

std::vector<std::string> compile_inputs(const CompileOptions& options) {
    graph::Diagnostics diags;
    graph::Graph g = graph::load_graph(options.graph_path, diags);
    if (diags.has_errors())
        throw Error(options.graph_path + ": " + std::to_string(diags.error_count()) +
                    " error(s) in the graph:\n" + diags.format());
    return compile_inputs(g, target_arch(options, g), options);
}

std::string depfile_escape(std::string_view path) {
    std::string out;
    out.reserve(path.size());
    for (char c : path) {
        if (c == '\n' || c == '\r' || c == '\t' || c == '\\')
            throw Error("cannot list '" + std::string(path) +
                        "' in a depfile: make, ninja and CMake do not read a newline, carriage "
                        "return, tab or backslash in a file name alike (rename it)");
        if (c == ' ' || c == '#')
            out += '\\';
        else if (c == '$')
            out += '$';
        out += c;
    }
    return out;
}

std::string depfile_rule(std::string_view target, const std::vector<std::string>& prerequisites) {
    std::string text = depfile_escape(target) + ":";
    for (const auto& p : prerequisites)
        text += " \\\n  " + depfile_escape(p);
    return text + "\n";
}

std::string self_executable() {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
        throw Error("cannot find the running executable (/proc/self/exe): " + ec.message());
    return self.string();
}

} // namespace skforge::compile
