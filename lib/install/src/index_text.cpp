// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index_text.hpp"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace skforge::install {

std::string merge_and_render(const std::vector<const SocIndex*>& in_order) {
    struct Slot {
        std::uint64_t seq;
        const std::string* text;
    };
    std::map<std::string, std::unordered_map<std::string, Slot>> ops;
    std::uint64_t seq = 0;
    for (const SocIndex* index : in_order)
        for (const auto& [op, entries] : *index)
            for (const auto& e : entries)
                ops[op][e.key] = {++seq, &e.text};
    std::string out = "{\n";
    std::size_t left = ops.size();
    for (const auto& [op, by_key] : ops) {
        std::vector<Slot> slots;
        slots.reserve(by_key.size());
        for (const auto& [key, slot] : by_key)
            slots.push_back(slot);
        std::sort(slots.begin(), slots.end(),
                  [](const Slot& a, const Slot& b) { return a.seq < b.seq; });
        out.append("\"").append(op).append("\":{\"staticList\":[\n");
        for (std::size_t i = 0; i < slots.size(); ++i)
            out.append(*slots[i].text).append(i + 1 < slots.size() ? ",\n" : "\n");
        out.append(--left > 0 ? "]},\n" : "]}\n");
    }
    out.append("}\n");
    return out; // appended in place and returned without a copy of the whole text
}

std::string shown_json_text(const std::string& text) {
    if (text.empty() || text.front() != '"')
        return text;
    try {
        return nlohmann::json::parse(text).get<std::string>();
    } catch (const nlohmann::json::exception&) {
        return text;
    }
}

} // namespace skforge::install
