// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "temp_dir.hpp"

#include <string>

namespace skforge::test {

/// A graph on disk with a set of kernel metadata files: kernels/{vec,cube,mix,aicpu,nosk,big}.json.
struct GraphFixture {
    ScopedTempDir dir;
    graph::Diagnostics diags;
    graph::Graph graph;

    GraphFixture() {
        auto meta = [&](const std::string& name, const std::string& type, const std::string& magic,
                        int block, int support) {
            write_text(dir / ("kernels/" + name + ".json"),
                       R"({"kernelName":")" + name + R"(","blockDim":)" + std::to_string(block) +
                           R"(,"magic":")" + magic + R"(","sub_operator_kernel_type":")" + type +
                           R"(","supportSuperKernel":)" + std::to_string(support) + "}");
        };
        meta("vec", "KERNEL_TYPE_AIV_ONLY", "RT_DEV_BINARY_MAGIC_ELF_AIVEC", 48, 1);
        meta("cube", "KERNEL_TYPE_AIC_ONLY", "RT_DEV_BINARY_MAGIC_ELF_AICUBE", 24, 1);
        meta("mix", "KERNEL_TYPE_MIX_AIC_1_2", "RT_DEV_BINARY_MAGIC_ELF", 24, 1);
        meta("aicpu", "KERNEL_TYPE_AIV_ONLY", "RT_DEV_BINARY_MAGIC_ELF_AICPU", 1, 1);
        meta("nosk", "KERNEL_TYPE_AIV_ONLY", "RT_DEV_BINARY_MAGIC_ELF_AIVEC", 48, 0);
        meta("big", "KERNEL_TYPE_AIC_ONLY", "RT_DEV_BINARY_MAGIC_ELF_AICUBE", 64, 1);
        meta("odd", "KERNEL_TYPE_WEIRD", "RT_DEV_BINARY_MAGIC_ELF", 4, 1);
    }

    /// Loads `yaml` (written as g.yaml) and validates it; returns true when there is no error.
    bool load(const std::string& yaml) {
        write_text(dir / "g.yaml", yaml);
        graph = graph::load_graph(dir / "g.yaml", diags);
        if (!diags.has_errors())
            graph::validate_graph(graph, diags);
        return !diags.has_errors();
    }

    /// The first diagnostic, formatted, with the directory removed.
    std::string first() const {
        if (diags.items().empty())
            return "";
        std::string s = graph::format_diagnostic(diags.items().front());
        auto pos = s.find(dir.path() + "/");
        if (pos != std::string::npos)
            s.erase(pos, dir.path().size() + 1);
        return s;
    }
};

/// `- {name: N, type: T, kernel: {json_path: kernels/K.json}, inputs: [...], outputs: [...],
/// EXTRA}`
inline std::string op(const std::string& name, const std::string& kernel, const std::string& inputs,
                      const std::string& extra = "") {
    return "  - {name: " + name + ", type: T" + kernel + ", kernel: {json_path: kernels/" + kernel +
           ".json}, inputs: [" + inputs + "], outputs: [{name: " + name +
           "_out, shape: [4], dtype: float16}]" + (extra.empty() ? "" : ", " + extra) + "}\n";
}

/// A graph header with one input tensor `x`.
inline std::string header(const std::string& extra = "") {
    return "name: t\nnpu_arch: dav-2201\nsoc_version: Ascend910B1\n" + extra +
           "inputs: [{name: x, shape: [4], dtype: float16}]\nops:\n";
}

} // namespace skforge::test
