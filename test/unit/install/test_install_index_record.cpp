// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index.hpp"
#include "skforge/install/index_record.hpp"

#include <catch2/catch.hpp>
#include <random>

using namespace skforge::install;

namespace {

using Packages = std::vector<std::pair<std::string, PackageIndex>>;

// A random index for package `name`: up to two SoCs, three OpTypes (one spelled with an escape),
// keys from a small pool so packages shadow each other, some entries keyed by binPath only, a
// key listed twice now and then, an OpType with an empty staticList.
PackageIndex random_index(std::mt19937& rng, const std::string& name, int version) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    PackageIndex out;
    const char* socs[] = {"ascend910b", "ascend950"};
    const char* ops[] = {"Add", "Mul", "A\\u0041"};
    for (const char* soc : socs) {
        if (pick(3) == 0)
            continue;
        std::string text = "{";
        bool first_op = true;
        for (const char* op : ops) {
            if (pick(2) == 0)
                continue;
            text += std::string(first_op ? "" : ",") + "\n  \"" + op + "\": {\"staticList\": [";
            first_op = false;
            int n = pick(6);
            for (int i = 0; i < n; ++i) {
                int key = pick(8);
                std::string bin = "\"binPath\": \"" + name + "/" + soc + "/k" +
                                  std::to_string(key) + "_v" + std::to_string(version) + ".o\"";
                std::string entry = pick(4) == 0
                                        ? "{" + bin + "}"
                                        : "{\"simplifiedKey\": \"" + std::string(op) + "/" +
                                              std::to_string(key) + "\", " + bin +
                                              ", \"n\": " + std::to_string(pick(100)) + "}";
                text += std::string(i ? ", " : "") + entry;
            }
            text += "]}";
        }
        text += "}\n";
        out.emplace(soc, scan_index_text(text));
    }
    return out;
}

std::map<std::string, std::string> rendered(const IndexRecord& r) {
    std::map<std::string, std::string> out;
    for (const auto& [soc, ops] : r.socs)
        out.emplace(soc, render_soc(r, soc));
    return out;
}

} // namespace

TEST_CASE("the per-key record after random installs, upgrades and uninstalls renders what a "
          "full merge does, and round-trips",
          "[install][index_record]") {
    for (unsigned seed = 1; seed <= 25; ++seed) {
        std::mt19937 rng(seed);
        Packages installed;
        IndexRecord rec = build_record(installed);
        for (int step = 0; step < 30; ++step) {
            std::string name = "p" + std::to_string(rng() % 6);
            auto at = std::find_if(installed.begin(), installed.end(),
                                   [&](const auto& p) { return p.first == name; });
            bool remove = at != installed.end() && rng() % 3 == 0;
            std::optional<PackageIndex> index;
            if (!remove)
                index = random_index(rng, name, step);
            // The model: the package leaves its place and, unless removed, goes last.
            Packages before = installed;
            if (at != installed.end())
                installed.erase(at);
            if (index)
                installed.emplace_back(name, *index);
            IndexLoader load = [&](const std::string& pkg,
                                   const std::string& soc) -> const SocIndex& {
                for (const auto& [n, idx] : before)
                    if (n == pkg)
                        return idx.at(soc);
                FAIL("restored from a package that is not installed: " << pkg);
                throw;
            };
            apply_change(rec, name, index ? &*index : nullptr, load);
            INFO("seed " << seed << " step " << step << (remove ? " uninstall " : " install ")
                         << name);
            REQUIRE(rendered(rec) == merge_indexes(installed));
            REQUIRE(rec.order().size() == installed.size());
            // The record of the new state built from scratch is the same record.
            std::string text = serialize_record(rec);
            REQUIRE(text == serialize_record(build_record(installed)));
            auto globals = rendered(rec);
            auto back = parse_record(text, [&](const std::string& soc) {
                return std::optional<std::string>(globals.at(soc));
            });
            REQUIRE(back);
            REQUIRE(serialize_record(*back) == text);
            REQUIRE(rendered(*back) == globals);
            // What recover reads of it: the packages, the stamps and the SoCs, no entry.
            auto head = parse_record(text, {}, RecordBody::skip);
            REQUIRE(head);
            REQUIRE(head->order() == back->order());
            REQUIRE(head->soc_stamps == back->soc_stamps);
            REQUIRE(head->socs.size() == back->socs.size());
            for (const auto& [soc, ops] : head->socs)
                REQUIRE((ops.empty() && back->socs.contains(soc)));
            rec = std::move(*back);
        }
    }
}

TEST_CASE("a record that does not fit its global index, or is damaged, is not taken",
          "[install][index_record]") {
    Packages pkgs;
    PackageIndex a, b;
    a.emplace("soc",
              scan_index_text(R"({"Add":{"staticList":[{"simplifiedKey":"k1","binPath":"a/x.o"},
        {"simplifiedKey":"k2","binPath":"a/y.o"}]}})"));
    b.emplace("soc", scan_index_text(
                         R"({"Add":{"staticList":[{"simplifiedKey":"k1","binPath":"b/x.o"}]}})"));
    pkgs = {{"a", a}, {"b", b}};
    auto rec = build_record(pkgs);
    std::string text = serialize_record(rec);
    std::string global = render_soc(rec, "soc");
    auto with = [](std::string g) {
        return [g](const std::string&) { return std::optional<std::string>(g); };
    };
    CHECK(parse_record(text, with(global)));
    // parse_record pairs the lines, it does not judge their text (the stamps of the files do):
    // an entry edited in place still parses; one missing, or another layout, does not.
    std::string edited = global;
    edited.replace(edited.find("a/y.o"), 5, "a/z.o");
    CHECK(parse_record(text, with(edited)));
    std::string shorter = global.substr(0, global.find("\n{")) + "\n]}\n}\n";
    CHECK_FALSE(parse_record(text, with(shorter)));
    CHECK_FALSE(parse_record(text, with("{\n}\n")));
    // A byte changed, the end cut off, another version: refused by the record's own digest.
    std::string flipped = text;
    flipped[flipped.find("k:\"k1\"") + 3] = 'K';
    CHECK_FALSE(parse_record(flipped, with(global)));
    CHECK_FALSE(parse_record(flipped, {}, RecordBody::skip));
    CHECK_FALSE(parse_record(text.substr(0, text.size() / 2), with(global)));
    CHECK_FALSE(parse_record("", with(global)));
    // The record names b as the winner of k1, hiding a.
    auto back = parse_record(text, with(global));
    REQUIRE(back);
    const auto& lines = back->socs.at("soc").at("Add");
    REQUIRE(lines.size() == 2);
    CHECK(lines[1].key == "k:\"k1\"");
    CHECK(back->packages[lines[1].pkg].name == "b");
    CHECK(lines[1].hidden == std::vector<std::uint32_t>{0});
}
