// SPDX-License-Identifier: Apache-2.0
// Fuzz target (issue 36): every reader of a package index sees what the checker saw. For text
// the installers accept (package::parse_json_limited: JSON, no repeated or escaped key), the
// entries scan_index_text copies into the global index are exactly the parsed document's
// staticList elements, OpType by OpType; and when the index rules pass, so they passed on every
// entry the merge takes.
#include "skforge/install/index_text.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/json_text.hpp"
#include "skforge/support/error.hpp"

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using nlohmann::json;

// The scanned index equals what the parsed document holds; traps when it does not.
void same_as_parsed(const skforge::install::SocIndex& scanned, const json& doc) {
    std::size_t with_list = 0;
    for (const auto& [op, value] : doc.items()) {
        auto list = value.is_object() ? value.find("staticList") : value.end();
        if (value.is_object() && list != value.end() && list->is_array() && !list->empty())
            ++with_list;
    }
    std::size_t nonempty = 0;
    for (const auto& [op, entries] : scanned) {
        if (entries.empty())
            continue;
        ++nonempty;
        auto value = doc.find(op); // keys are never escaped: the raw name is the key
        if (value == doc.end() || !value->is_object())
            __builtin_trap();
        auto list = value->find("staticList");
        if (list == value->end() || !list->is_array() || list->size() != entries.size())
            __builtin_trap();
        for (std::size_t i = 0; i < entries.size(); ++i)
            if (json::parse(entries[i].text) != (*list)[i])
                __builtin_trap();
    }
    if (nonempty != with_list)
        __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace skforge;
    static const package::Manifest manifest = [] {
        package::Manifest m;
        m.name = "fz";
        m.entries = {{"soc", package::EntryType::directory, 0755, 0, ""},
                     {"soc/a.o", package::EntryType::file, 0644, 1, std::string(64, '0')}};
        return m;
    }();
    std::string text(reinterpret_cast<const char*>(data), size);
    json doc;
    try {
        doc = package::parse_json_limited(text, "fuzz.json");
    } catch (const support::Error&) {
        return 0;
    }
    if (!doc.is_object())
        return 0;
    auto scanned = install::scan_index_text(text);
    same_as_parsed(scanned, doc);
    if (!package::check_package_index(doc, manifest.name, manifest).empty())
        return 0;
    // Accepted for package fz: every entry the merge copies names fz's one kernel file.
    for (const auto& [op, entries] : scanned)
        for (const auto& e : entries)
            if (json::parse(e.text).value("binPath", std::string()) != "fz/soc/a.o")
                __builtin_trap();
    return 0;
}
