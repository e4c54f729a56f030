// SPDX-License-Identifier: Apache-2.0
// The .text size the vendor's generator counts its preload lines from (llvm-objdump -h of the
// sub-kernel's object, or of the archive member its obj_files names).
#include "skforge/kernel/code_size.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

using skforge::kernel::text_section_size;

namespace {

void put(std::string& b, std::size_t at, std::uint64_t v, int width) {
    for (int i = 0; i < width; ++i)
        b[at + static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A little-endian ELF64 object with the named sections (sizes given; no contents needed), a
// section-name table last.
std::string elf64(const std::vector<std::pair<std::string, std::uint64_t>>& sections) {
    std::string names(1, '\0');
    std::vector<std::uint64_t> name_at;
    for (const auto& s : sections) {
        name_at.push_back(names.size());
        names += s.first + '\0';
    }
    const std::uint64_t shstr_name = names.size();
    names += std::string(".shstrtab") + '\0';
    const std::uint64_t count = sections.size() + 2; // null, sections, .shstrtab
    std::string b(64, '\0');
    b.replace(0, 4,
              "\x7f"
              "ELF");
    b[4] = 2; // 64-bit
    b[5] = 1; // little endian
    const std::uint64_t names_at = b.size();
    b += names;
    const std::uint64_t shoff = b.size();
    b += std::string(count * 64, '\0');
    put(b, 0x28, shoff, 8);
    put(b, 0x3A, 64, 2);
    put(b, 0x3C, count, 2);
    put(b, 0x3E, count - 1, 2);
    for (std::size_t i = 0; i < sections.size(); ++i) {
        put(b, shoff + (i + 1) * 64, name_at[i], 4);
        put(b, shoff + (i + 1) * 64 + 0x20, sections[i].second, 8);
    }
    put(b, shoff + (count - 1) * 64, shstr_name, 4);
    put(b, shoff + (count - 1) * 64 + 0x18, names_at, 8);
    put(b, shoff + (count - 1) * 64 + 0x20, names.size(), 8);
    return b;
}

std::string ar_member(const std::string& name, const std::string& body) {
    std::string header = name + "/";
    header.resize(16, ' ');
    header += std::string(32, ' ');
    std::string size = std::to_string(body.size());
    size.resize(10, ' ');
    header += size + "`\n";
    return header + body + (body.size() % 2 ? "\n" : "");
}

} // namespace

TEST_CASE("code size: the first section named .text of an ELF object") {
    CHECK(text_section_size(elf64({{".data", 64}, {".text", 4000}})) == 4000u);
    // kernels built with function sections: the first .text.* line, as llvm-objdump lists it
    CHECK(text_section_size(elf64({{".text._Z3foov", 9000}, {".text", 12}})) == 9000u);
    CHECK_FALSE(text_section_size(elf64({{".data", 64}})).has_value());
}

TEST_CASE("code size: an archive of split copies is measured at the member obj_files names") {
    std::string archive = "!<arch>\n" + ar_member("k.o", elf64({{".text", 4000}})) +
                          ar_member("k_split1.o", elf64({{".text", 10000}}));
    CHECK(text_section_size(archive, "k_split1.o") == 10000u);
    CHECK(text_section_size(archive, "k.o") == 4000u);
    CHECK(text_section_size(archive) == 4000u); // no member named: the first with a .text
    CHECK_FALSE(text_section_size(archive, "other.o").has_value());
}

TEST_CASE("code size: what is neither an object nor an archive, or is cut short, has none") {
    CHECK_FALSE(text_section_size("not an object").has_value());
    std::string cut = elf64({{".text", 4000}});
    CHECK_FALSE(text_section_size(cut.substr(0, 100)).has_value());
    CHECK_FALSE(text_section_size("!<arch>\nk.o/            garbage").has_value());
}
