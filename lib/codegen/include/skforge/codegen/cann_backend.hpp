// SPDX-License-Identifier: Apache-2.0
#pragma once

// The vendor's own SuperKernel compiler as a backend: what skc hands CANN's
// `superkernel.super_kernel.compile(kernel_info, kernel_name)` for one segment, how it runs it,
// and where the vendor writes its outputs. See share/doc/npu-target.md and the section "The
// vendor's SuperKernel compiler as a backend" of share/doc/cann-conformance.md.
#include "skforge/codegen/cann_release.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/graph/graph.hpp"
#include "skforge/graph/options.hpp"

#include <string>
#include <vector>

namespace skforge::codegen {

/// The vendor's `super_kernel_options` for scope options `o`: every option its parser knows, with
/// the value skforge planned, as `key=value` joined by ':' (empty values left out: the vendor
/// refuses them). Throws an Error when compile-options holds a word the string cannot carry
/// (',' or ':').
std::string cann_options_string(const graph::ScopeOptions& o);

/// The `kernel_info` of segment `s` as JSON text: `op_list` (one entry per sub-kernel in plan
/// order: bin_path, json_path, stream_id, task_type, send_event_list, recv_event_list, events
/// as integers) and `super_kernel_options`. Relative kernel paths are made absolute against
/// `base_dir`, since the vendor's compiler runs in another directory. Throws an Error for a
/// segment of `plan` with notify/wait the vendor refuses (fusion::edge_notify_waits), and for a
/// scope with `dcci-disable-on-kernel` on a line whose option parser refuses the key (8.5).
/// A sub-kernel the scope's `dcci-disable-on-kernel` names whose JSON does not say
/// `sub_operator_call_dcci_disable_on_kernel` is handed as the copy cann_json_copies makes,
/// named by its file name alone: it lies beside the kernel_info, and the driver makes paths
/// relative to the kernel_info absolute (the sources directory may move).
std::string cann_kernel_info(const graph::Graph& g, const fusion::Plan& plan,
                             const fusion::Segment& s, const std::string& base_dir,
                             const CannRelease& release = cann_release(k_default_cann_version));

/// A sub-kernel JSON skforge hands the vendor in place of the op compiler's: its text with the
/// flag the op compiler writes for a sub-kernel the scope's options name.
struct CannJsonCopy {
    std::size_t position; ///< the sub-kernel's position in the segment
    std::string file;     ///< file name, `sub_kernel_<position>.json`
    std::string text;     ///< the JSON
};

/// The copies segment `s` needs on `release`'s line: on a line whose generator honours the
/// sub-kernel JSON's `sub_operator_call_dcci_disable_on_kernel` (and reads it alone, 9.0), one
/// per sub-kernel the scope's `dcci-disable-on-kernel` names whose JSON does not set it, as
/// asc-devkit's op compiler sets it from the same option (super_kernel_sub_op_compile.py).
std::vector<CannJsonCopy> cann_json_copies(const graph::Graph& g, const fusion::Segment& s,
                                           const CannRelease& release);

/// The name segment `s`'s SuperKernel is compiled under (the vendor's `kernel_name`): the same
/// entry symbol skforge's own generator exports, `<graph>_<segment>` as an identifier.
std::string cann_kernel_name(const graph::Graph& g, const fusion::Segment& s);

/// The Python program skc runs to call the vendor: `python3 PROGRAM KERNEL_INFO KERNEL_NAME SOC
/// WORKDIR` loads KERNEL_INFO (a relative bin_path or json_path made absolute against its
/// directory), points the vendor's kernel_meta at WORKDIR (and sets SOC) when
/// the vendor's build configuration is importable, changes into WORKDIR and calls
/// super_kernel.compile.
std::string cann_driver_program();

/// The command line that runs the driver at `program` for one segment.
std::vector<std::string> cann_command(const std::string& program, const std::string& kernel_info,
                                      const std::string& kernel_name, const std::string& soc,
                                      const std::string& workdir);

/// The command line that tells whether the vendor's compiler is importable (exit 0) and, when
/// it is, prints the path of its super_kernel module.
std::vector<std::string> cann_probe_command();

/// Where the vendor writes its outputs under the directory it ran in: `kernel_meta/`.
inline constexpr const char* k_cann_kernel_meta = "kernel_meta";

} // namespace skforge::codegen
