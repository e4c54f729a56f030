// SPDX-License-Identifier: Apache-2.0
#pragma once

// The SuperKernel metadata writer, shared by kernel_meta_json and the plan's JSON.
#include "json_text.hpp"
#include "skforge/fusion/plan.hpp"

namespace skforge::fusion {

/// Appends kernel_meta_json(g, s) to `out`.
void write_kernel_meta(json_text::Out& out, const graph::Graph& g, const Segment& s);
/// Appends kernel_meta_json(g, s, arch) to `out`.
void write_kernel_meta(json_text::Out& out, const graph::Graph& g, const Segment& s,
                       std::string_view arch);

} // namespace skforge::fusion
