// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a program as libskforge_runtime reads it when a package is opened, the host's
// (host/program.json, Package::parse) and the NPU's (npu/program.json, check_npu_program): a
// refusal naming the file, or a program whose every index the runner follows is in range.
#include "skforge/runtime/npu.hpp"
#include "skforge/runtime/open.hpp"
#include "skforge/runtime/package.hpp"
#include "skforge/support/error.hpp"
#include "skforge_host_kernel.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

using namespace skforge;

void trap_unless(bool ok) {
    if (!ok)
        __builtin_trap();
}

// What the host runner and describe() index with, checked here with .at() and bounds.
void walk(const runtime::Package& p) {
    for (const auto& t : p.tensors()) {
        trap_unless(t.shape.size() <= SK_MAX_RANK);
        trap_unless(t.bytes <= UINT64_MAX - 63);
    }
    for (const auto& op : p.ops()) {
        for (auto t : op.inputs)
            (void)p.tensors().at(t);
        for (auto t : op.outputs)
            (void)p.tensors().at(t);
        trap_unless(op.segment >= -1 && op.segment < static_cast<int>(p.segments().size()));
        trap_unless(op.workspace <= UINT64_MAX - 63);
    }
    for (const auto& s : p.segments()) {
        for (auto o : s.ops)
            (void)p.ops().at(o);
        trap_unless(s.param_block_size >= 8 && s.workspace_param_offset >= 0 &&
                    s.workspace_param_offset <= s.param_block_size - 8);
        for (const auto& [t, off] : s.parameters) {
            (void)p.tensors().at(t);
            trap_unless(off >= 0 && off <= s.param_block_size - 8);
        }
        for (const auto& slot : s.side_slots)
            trap_unless(slot.param_offset >= s.side_slot_offset &&
                        slot.param_offset <= s.param_block_size - 8);
    }
    for (const auto& st : p.steps())
        trap_unless(st.index < (st.segment ? p.segments().size() : p.ops().size()));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        walk(runtime::Package::parse(text, "host/program.json"));
    } catch (const support::Error&) {
    }
    try {
        runtime::check_npu_program(text, "npu/program.json");
    } catch (const support::Error&) {
    } catch (const runtime::ApiError&) {
    }
    return 0;
}
