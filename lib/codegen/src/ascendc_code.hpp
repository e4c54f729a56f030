// SPDX-License-Identifier: Apache-2.0
#pragma once

// Pieces shared by the NPU backend's entry writer and its build commands: kinds of core, the
// vendor's reserved cross-core flags, and an indenting code writer.
#include "skforge/codegen/cann_release.hpp"
#include "skforge/fusion/plan.hpp"
#include "skforge/kernel/kernel_meta.hpp"

#include <string>
#include <string_view>

namespace skforge::codegen {

/// True when the vendor's compiler would run segment `s` as two concurrent programs, one per kind
/// of core: stream fusion is on and two consecutive sub-kernels of different streams are not
/// connected by an event.
bool two_stream_mode(const graph::Graph& g, const fusion::Segment& s);

/// True when the entry starts sub-kernels early (SetNextTaskStart/WaitPreTaskEnd): unless the
/// scope says early-start=0 or the segment runs in two-stream mode.
bool early_start_mode(const graph::Graph& g, const fusion::Segment& s);

/// A kind of core: cube (AIC) or vector (AIV).
enum class Side { aic, aiv };

/// True for kernel types that use both kinds of core (MIX 1:1 and 1:2).
inline bool is_mix(kernel::KernelType t) {
    return t == kernel::KernelType::mix_aic_1_1 || t == kernel::KernelType::mix_aic_1_2;
}

/// True when a kernel of type `t` runs code on cores of kind `side`.
inline bool runs_on(kernel::KernelType t, Side side) {
    if (kernel::is_vector_only(t))
        return side == Side::aiv;
    if (kernel::is_cube_only(t))
        return side == Side::aic;
    return true;
}

/// `ASCEND_IS_AIC` or `ASCEND_IS_AIV`.
inline std::string guard(Side side) {
    return side == Side::aic ? "ASCEND_IS_AIC" : "ASCEND_IS_AIV";
}

/// The block index a kernel of type `t` compares with its blockDim: vector-only kernels count
/// vector cores, cube and MIX kernels count AI cores.
inline std::string block_index(kernel::KernelType t) {
    return kernel::is_vector_only(t) ? "AscendC::GetBlockIdx()" : "get_block_idx()";
}

/// Source text written with block structure and four-space indentation.
class Code {
  public:
    /// One line at the current depth (an empty line stays empty).
    void line(std::string_view text) {
        if (!text.empty())
            m_text.append(static_cast<std::size_t>(m_depth) * 4, ' ').append(text);
        m_text += '\n';
    }
    /// `head {`, then one level deeper.
    void open(std::string_view head) {
        line(std::string(head) + " {");
        ++m_depth;
    }
    /// `} head {` at the same depth: else branches.
    void reopen(std::string_view head) {
        --m_depth;
        line("} " + std::string(head) + " {");
        ++m_depth;
    }
    /// One level up, and `}`.
    void close() {
        --m_depth;
        line("}");
    }
    /// The text so far.
    const std::string& str() const { return m_text; }

  private:
    std::string m_text;
    int m_depth = 0;
};

/// One of the cross-core flag ids AscendC reserves for synchronisation (kernel_operator_sync_impl.h
/// of dav_c220 and dav_3510), with the mode and pipe it is set with.
struct CoreFlag {
    const char* id;
    int mode; ///< 0: all cores of the kind; 2: between the cube and vector cores of one AI core
    const char* pipe;
};

inline constexpr CoreFlag k_aiv_all{"AscendC::SYNC_AIV_ONLY_ALL", 0, "PIPE_MTE3"};
inline constexpr CoreFlag k_aic_all{"AscendC::SYNC_AIC_FLAG", 0, "PIPE_FIX"};
inline constexpr CoreFlag k_aiv_to_aic{"AscendC::SYNC_AIV_FLAG", 2, "PIPE_MTE3"};
inline constexpr CoreFlag k_aic_to_aiv{"AscendC::SYNC_AIC_AIV_FLAG", 2, "PIPE_MTE3"};

/// How the entry sets and waits for a cross-core flag: on dav-2201 with the FFTS intrinsics; on
/// dav-3510 as the release's generator writes it (CannRelease::c310_flags).
enum class FlagStyle {
    ffts,        ///< ffts_cross_core_sync(pipe, GetffstMsg(mode, id)); wait_flag_dev(id)
    ffts_pipe_s, ///< the same, waited with wait_flag_dev(PIPE_S, id)
    cross_core,  ///< AscendC::CrossCoreSetFlag<mode, pipe>(id); AscendC::CrossCoreWaitFlag(id)
};

/// The flag style of an entry for `arch` under `release`.
inline FlagStyle flag_style(std::string_view arch, const CannRelease& release) {
    if (arch != "dav-3510")
        return FlagStyle::ffts;
    return release.c310_flags == C310Flags::ffts_pipe_s ? FlagStyle::ffts_pipe_s
                                                        : FlagStyle::cross_core;
}

/// Sets `flag` in `style`.
inline void set_flag(Code& c, const CoreFlag& flag, FlagStyle style) {
    std::string mode = flag.mode == 0 ? "0x0" : "0x02";
    if (style == FlagStyle::cross_core)
        c.line("AscendC::CrossCoreSetFlag<" + mode + ", " + flag.pipe + ">(" + flag.id + ");");
    else
        c.line(std::string("ffts_cross_core_sync(") + flag.pipe + ", AscendC::GetffstMsg(" + mode +
               ", " + flag.id + "));");
}

/// Waits for `flag` (see set_flag).
inline void wait_flag(Code& c, const CoreFlag& flag, FlagStyle style) {
    const std::string id(flag.id);
    if (style == FlagStyle::cross_core)
        c.line("AscendC::CrossCoreWaitFlag(" + id + ");");
    else if (style == FlagStyle::ffts_pipe_s)
        c.line("wait_flag_dev(PIPE_S, " + id + ");");
    else
        c.line("wait_flag_dev(" + id + ");");
}

/// All cores of one kind wait for each other.
inline void same_kind_sync(Code& c, Side side, FlagStyle style) {
    const CoreFlag& f = side == Side::aic ? k_aic_all : k_aiv_all;
    set_flag(c, f, style);
    wait_flag(c, f, style);
}

} // namespace skforge::codegen
