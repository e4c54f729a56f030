// SPDX-License-Identifier: Apache-2.0
// .text sizes of sub-kernel objects, as the vendor's generator measures them for its preload
// count (graph-autofusion super_kernel_sub_op_infos.py get_text_section_size: the first
// `llvm-objdump -h` line naming .text; extract_sub_op_bin_files: `ar x` of the member named by
// obj_files when the JSON has a split_mode).
#include "skforge/kernel/code_size.hpp"

#include <string>

namespace skforge::kernel {

namespace {

struct Reader {
    std::string_view b;
    bool little = true;
    bool ok = true;

    std::uint64_t num(std::uint64_t at, int width) {
        if (at + static_cast<std::uint64_t>(width) > b.size()) {
            ok = false;
            return 0;
        }
        std::uint64_t v = 0;
        for (int i = 0; i < width; ++i) {
            auto byte = static_cast<unsigned char>(
                b[at + static_cast<std::uint64_t>(little ? width - 1 - i : i)]);
            v = (v << 8) | byte;
        }
        return v;
    }
};

std::optional<std::uint64_t> elf_text_size(std::string_view b) {
    if (b.size() < 52 || b.substr(0, 4) != "\x7f"
                                           "ELF")
        return std::nullopt;
    const bool wide = b[4] == 2;
    Reader r{b, b[5] != 2};
    const std::uint64_t shoff = r.num(wide ? 0x28 : 0x20, wide ? 8 : 4);
    const std::uint64_t shentsize = r.num(wide ? 0x3A : 0x2E, 2);
    const std::uint64_t shnum = r.num(wide ? 0x3C : 0x30, 2);
    const std::uint64_t shstrndx = r.num(wide ? 0x3E : 0x32, 2);
    auto field = [&](std::uint64_t index, int off64, int off32) {
        return r.num(shoff + index * shentsize + static_cast<std::uint64_t>(wide ? off64 : off32),
                     wide ? 8 : 4);
    };
    const std::uint64_t strtab = field(shstrndx, 0x18, 0x10);
    for (std::uint64_t i = 0; r.ok && i < shnum; ++i) {
        const std::uint64_t name = strtab + r.num(shoff + i * shentsize, 4);
        if (!r.ok || name >= b.size())
            return std::nullopt;
        std::string_view rest = b.substr(name);
        std::string_view section = rest.substr(0, rest.find('\0'));
        if (section.find(".text") != std::string_view::npos) {
            std::uint64_t size = field(i, 0x20, 0x14);
            return r.ok ? std::optional<std::uint64_t>(size) : std::nullopt;
        }
    }
    return std::nullopt;
}

// An ar member's name: "name/" (GNU), "name" padded with blanks (BSD short names).
std::string_view member_name(std::string_view header) {
    std::string_view name = header.substr(0, 16);
    while (!name.empty() && (name.back() == ' ' || name.back() == '/'))
        name.remove_suffix(1);
    return name;
}

} // namespace

std::optional<std::uint64_t> text_section_size(std::string_view bytes, std::string_view member) {
    constexpr std::string_view k_magic = "!<arch>\n";
    if (bytes.substr(0, k_magic.size()) != k_magic)
        return elf_text_size(bytes);
    std::size_t at = k_magic.size();
    while (at + 60 <= bytes.size()) {
        std::string_view header = bytes.substr(at, 60);
        std::uint64_t size = 0;
        try {
            size = std::stoull(std::string(header.substr(48, 10)));
        } catch (const std::exception&) {
            return std::nullopt;
        }
        std::string_view body = bytes.substr(at + 60, size);
        std::string_view name = member_name(header);
        if (name != "" && (member.empty() || name == member))
            if (auto text = elf_text_size(body); text || !member.empty())
                return text;
        at += 60 + size + (size % 2);
    }
    return std::nullopt;
}

} // namespace skforge::kernel
