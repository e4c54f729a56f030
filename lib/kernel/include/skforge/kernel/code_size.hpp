// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace skforge::kernel {

/// The size of the first section whose name contains ".text" in an ELF object (32 or 64 bit,
/// either byte order), or in the member `member` of an `ar` archive (the first member with
/// such a section when `member` is empty): what CANN's SuperKernel generator reads with
/// `llvm-objdump -h` to count the 2 KiB lines a sub-kernel preloads. nullopt when `bytes` is
/// neither, is cut short, or has no such section.
std::optional<std::uint64_t> text_section_size(std::string_view bytes,
                                               std::string_view member = {});

} // namespace skforge::kernel
