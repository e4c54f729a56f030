// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index.hpp"
#include "skforge/install/index_record.hpp"

#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <tuple>

using namespace skforge::install;

namespace {

using Packages = std::vector<std::pair<std::string, PackageIndex>>;

// A random index for package `name`: up to two SoCs, three OpTypes (one spelled with an escape),
// keys from a pool of `pool` (a small one so that packages shadow each other, a large one so
// that most OpTypes an install touches keep every old line, the patch's shortcut), some entries
// keyed by binPath only, a key listed twice now and then, an OpType with an empty staticList.
PackageIndex random_index(std::mt19937& rng, const std::string& name, int version, int pool) {
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
                int key = pick(pool);
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
    for (unsigned seed = 1; seed <= 35; ++seed) {
        std::mt19937 rng(seed);
        int pool = seed <= 25 ? 8 : 1000;
        Packages installed;
        IndexRecord rec = build_record(installed);
        std::string text_state = serialize_record(rec);
        std::map<std::string, std::string> text_globals;
        for (int step = 0; step < 30; ++step) {
            std::string name = "p" + std::to_string(rng() % 6);
            auto at = std::find_if(installed.begin(), installed.end(),
                                   [&](const auto& p) { return p.first == name; });
            bool remove = at != installed.end() && rng() % 3 == 0;
            std::optional<PackageIndex> index;
            if (!remove)
                index = random_index(rng, name, step, pool);
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
            // The record of the new state built from scratch is the same record, but for the
            // packages' numbers (a full build numbers them 0, 1, ...).
            std::string text = serialize_record(rec);
            REQUIRE(canonical_record(text) == serialize_record(build_record(installed)));

            // The same change made on the text (what skinstall does): the same record and the
            // same global indexes, each written from ranges of the old one.
            auto old_head = parse_record(text_state, {}, RecordBody::skip);
            REQUIRE(old_head);
            RecordPatch patch = patch_record(*old_head, name, index ? &*index : nullptr, load);
            auto bodies = body_pieces(*old_head);
            for (const auto& [soc, ps] : patch.socs) {
                if (!ps) {
                    text_globals.erase(soc);
                    bodies.erase(soc);
                    continue;
                }
                std::string old = text_globals.contains(soc) ? text_globals.at(soc) : "";
                REQUIRE(ps->has_old == text_globals.contains(soc));
                REQUIRE(ps->old_size == (ps->has_old ? old.size() : 0));
                std::string now;
                for (const auto& piece : ps->global) {
                    if (piece.len > 0) {
                        REQUIRE(piece.from + piece.len <= old.size());
                        now += old.substr(piece.from, piece.len);
                    } else {
                        now += piece.text;
                    }
                }
                text_globals[soc] = now;
                bodies[soc] = ps->body;
            }
            text_state = assemble_record(patch.packages, old_head->soc_stamps, bodies).joined();
            REQUIRE(text_globals == merge_indexes(installed));
            REQUIRE(canonical_record(text_state) == canonical_record(text));
            // The shadow report read off the text: every line that hides another provider.
            auto new_head = parse_record(text_state, {}, RecordBody::skip);
            REQUIRE(new_head);
            std::set<std::tuple<std::string, std::string, std::string, std::vector<std::string>>>
                shadows, expected;
            for (auto& l : record_shadows(*new_head, rec.order()))
                shadows.emplace(l.soc, l.op, l.key, l.providers);
            for (const auto& [soc, ops] : rec.socs)
                for (const auto& [op, lines] : ops)
                    for (const auto& l : lines) {
                        if (l.hidden.empty())
                            continue;
                        std::vector<std::string> providers;
                        for (auto h : l.hidden)
                            providers.push_back(rec.packages[h].name);
                        providers.push_back(rec.packages[l.pkg].name);
                        expected.emplace(soc, op, std::string(l.key), providers);
                    }
            REQUIRE(shadows == expected);
            // The installed package's own shadow lines, as the patch gives them (skinstall's
            // report after an install): what the new record's text says of it alone.
            std::set<std::tuple<std::string, std::string, std::string, std::vector<std::string>>>
                mine, of_patch;
            for (auto& l : record_shadows(*new_head, {name}))
                mine.emplace(l.soc, l.op, l.key, l.providers);
            for (auto& l : patch.shadows)
                REQUIRE(of_patch.emplace(l.soc, l.op, l.key, l.providers).second);
            REQUIRE(of_patch == (index ? mine : decltype(mine){}));
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
