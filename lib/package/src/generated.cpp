#include "skforge/package/generated.hpp"

#include "skforge/package/template.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <map>

namespace skforge::package {

namespace {

std::string entry_lines(const std::vector<ManifestEntry>& entries, bool reversed) {
    std::vector<std::string> lines;
    for (const auto& e : entries)
        lines.push_back(std::string(e.type == EntryType::file ? "f " : "d ") +
                        (e.mode == 0755 ? "0755 " : "0644 ") + e.path);
    if (reversed)
        std::reverse(lines.begin(), lines.end());
    std::string out;
    for (const auto& l : lines)
        out += l + "\n";
    if (!out.empty())
        out.pop_back();
    return out;
}

} // namespace

std::vector<GeneratedFile> render_generated_files(const Manifest& m) {
    std::map<std::string, std::string> values = {
        {"NAME", m.name},
        {"VERSION", m.version},
        {"ENTRIES", entry_lines(m.entries, false)},
        {"ENTRIES_REVERSED", entry_lines(m.entries, true)}};
    std::string version_info = "Version=" + m.version + "\npackage_name=" + m.name +
                               "\nnpu_arch=" + m.npu_arch + "\nsoc_version=" + m.soc_version +
                               "\ntoolchain=" + m.toolchain + "\n";
    return {{"install.sh", render_template(templates::k_install_sh, values), 0755},
            {"uninstall.sh", render_template(templates::k_uninstall_sh, values), 0755},
            {"version.info", std::move(version_info), 0644}};
}

std::vector<std::string> check_generated_files(const Manifest& m) {
    std::vector<std::string> problems;
    for (const auto& g : render_generated_files(m)) {
        const ManifestEntry* e = m.find(g.path);
        if (e == nullptr || e->type != EntryType::file) {
            problems.push_back(g.path + " is missing");
            continue;
        }
        if (e->mode != g.mode || e->size != g.text.size() ||
            e->sha256 != support::sha256_hex(g.text))
            problems.push_back(g.path +
                               " differs from the script skforge generates for this package "
                               "(it was edited after packing)");
    }
    return problems;
}

} // namespace skforge::package
