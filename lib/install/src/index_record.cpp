// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index_record.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/sha256.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <unordered_map>
#include <unordered_set>

namespace skforge::install {

namespace {

constexpr std::string_view k_magic = "skforge-index-record 1\n";
constexpr std::uint32_t k_gone = std::numeric_limits<std::uint32_t>::max();

// One package's entries for one OpType as the merge takes them: the last entry of each key, at
// its position (merge_and_render numbers entries in order and keeps the last number of a key).
struct Pick {
    std::string_view key;
    std::string_view text;
    std::uint32_t idx;
};

std::vector<Pick> picks(const std::vector<IndexEntry>& entries) {
    std::unordered_map<std::string_view, std::uint32_t> last;
    for (std::uint32_t i = 0; i < entries.size(); ++i)
        last[entries[i].key] = i;
    std::vector<Pick> out;
    for (std::uint32_t i = 0; i < entries.size(); ++i)
        if (last[entries[i].key] == i)
            out.push_back({entries[i].key, entries[i].text, i});
    return out;
}

bool before(const RecordLine& a, const RecordLine& b) {
    return a.pkg != b.pkg ? a.pkg < b.pkg : a.idx < b.idx;
}

// Copies every view of the record into one string the record owns.
void intern(IndexRecord& r) {
    std::size_t size = 0;
    for (auto& [soc, ops] : r.socs)
        for (auto& [op, lines] : ops)
            for (auto& l : lines)
                size += l.key.size() + l.text.size();
    std::string& all = r.store.emplace_back();
    all.reserve(size);
    for (auto& [soc, ops] : r.socs)
        for (auto& [op, lines] : ops)
            for (auto& l : lines) {
                std::size_t at = all.size();
                all.append(l.key).append(l.text);
                l.key = std::string_view(all).substr(at, l.key.size());
                l.text = std::string_view(all).substr(at + l.key.size(), l.text.size());
            }
}

std::vector<std::string> socs_of(const PackageIndex& index) {
    std::vector<std::string> out;
    for (const auto& [soc, doc] : index)
        out.push_back(soc);
    return out;
}

// The entry of `key` a package's index gives for one OpType (its last one); throws when it has
// none, which means the record does not describe that package any more.
Pick find_pick(const SocIndex& index, const std::string& op, std::string_view key) {
    auto it = index.find(op);
    if (it != index.end())
        for (std::size_t i = it->second.size(); i-- > 0;)
            if (it->second[i].key == key)
                return {it->second[i].key, it->second[i].text, static_cast<std::uint32_t>(i)};
    throw support::Error("the per-key record names a kernel its package no longer provides");
}

} // namespace

std::vector<std::string> IndexRecord::order() const {
    std::vector<std::string> out;
    for (const auto& p : packages)
        out.push_back(p.name);
    return out;
}

IndexRecord build_record(const std::vector<std::pair<std::string, PackageIndex>>& packages) {
    IndexRecord r;
    std::map<std::pair<std::string, std::string>, std::unordered_map<std::string_view, std::size_t>>
        where;
    for (std::uint32_t rank = 0; rank < packages.size(); ++rank) {
        const auto& [name, index] = packages[rank];
        r.packages.push_back({name, "", socs_of(index), false});
        for (const auto& [soc, doc] : index) {
            auto& ops = r.socs[soc];
            for (const auto& [op, entries] : doc) {
                auto& at = where[{soc, op}];
                for (const Pick& p : picks(entries)) {
                    auto& lines = ops[op];
                    auto [it, fresh] = at.emplace(p.key, lines.size());
                    if (fresh) {
                        lines.push_back({p.key, p.text, rank, p.idx, {}});
                        continue;
                    }
                    RecordLine& l = lines[it->second];
                    l.hidden.push_back(l.pkg);
                    l.key = p.key;
                    l.text = p.text;
                    l.pkg = rank;
                    l.idx = p.idx;
                }
            }
        }
    }
    for (auto& [soc, ops] : r.socs)
        for (auto& [op, lines] : ops)
            std::stable_sort(lines.begin(), lines.end(), before);
    intern(r);
    return r;
}

namespace {

// Changes one OpType's lines (already renumbered; the package's old rank is k_gone, its new one
// `self`) in place: the lines that stay move up over those that go, with no second copy of the
// list (100,000 lines at fleet scale); restored ones are merged in, the package's own appended.
void change_op(IndexRecord& r, const std::string& soc, const std::string& op,
               std::vector<RecordLine>& lines, const std::vector<Pick>* fresh, std::uint32_t self,
               const IndexLoader& load) {
    std::unordered_set<std::string_view> new_keys;
    if (fresh)
        for (const auto& p : *fresh)
            new_keys.insert(p.key);
    std::unordered_map<std::string_view, std::vector<std::uint32_t>> hidden_of_new;
    std::vector<RecordLine> restored;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        RecordLine& l = lines[i];
        std::erase(l.hidden, k_gone);
        if (!new_keys.empty() && new_keys.contains(l.key)) {
            if (l.pkg != k_gone)
                l.hidden.push_back(l.pkg);
            hidden_of_new[l.key] = std::move(l.hidden);
        } else if (l.pkg != k_gone) {
            if (kept != i)
                lines[kept] = std::move(l);
            ++kept;
        } else if (!l.hidden.empty()) {
            // The package won this key and no longer provides it: the newest other one does.
            l.pkg = l.hidden.back();
            l.hidden.pop_back();
            Pick p = find_pick(load(r.packages[l.pkg].name, soc), op, l.key);
            l.idx = p.idx;
            l.text = r.store.emplace_back(p.text);
            restored.push_back(std::move(l));
        }
    }
    lines.resize(kept);
    lines.reserve(kept + restored.size() + (fresh ? fresh->size() : 0));
    if (!restored.empty()) {
        std::sort(restored.begin(), restored.end(), before);
        std::move(restored.begin(), restored.end(), std::back_inserter(lines));
        std::inplace_merge(lines.begin(), lines.begin() + static_cast<std::ptrdiff_t>(kept),
                           lines.end(), before);
    }
    if (fresh)
        for (const auto& p : *fresh) {
            auto h = hidden_of_new.find(p.key);
            std::string_view key = r.store.emplace_back(p.key);
            std::string_view text = r.store.emplace_back(p.text);
            lines.push_back(
                {key, text, self, p.idx,
                 h == hidden_of_new.end() ? std::vector<std::uint32_t>{} : std::move(h->second)});
        }
}

// Renumbers every line of `ops` by `remap` (old rank -> new rank, k_gone for the package
// being changed); returns whether that package appears.
bool renumber(std::map<std::string, std::vector<RecordLine>>& ops,
              const std::vector<std::uint32_t>& remap) {
    bool seen = false;
    for (auto& [op, lines] : ops)
        for (auto& l : lines) {
            l.pkg = remap[l.pkg];
            seen = seen || l.pkg == k_gone;
            for (auto& h : l.hidden) {
                h = remap[h];
                seen = seen || h == k_gone;
            }
        }
    return seen;
}

} // namespace

std::vector<std::string> apply_change(IndexRecord& r, const std::string& name,
                                      const PackageIndex* index, const IndexLoader& load) {
    // The new order: the others keep theirs, the package goes last when it stays.
    std::vector<std::uint32_t> remap(r.packages.size(), k_gone);
    std::vector<RecordPackage> packages;
    std::vector<std::string> touched;
    for (std::uint32_t i = 0; i < r.packages.size(); ++i) {
        if (r.packages[i].name == name) {
            touched = r.packages[i].socs;
            continue;
        }
        remap[i] = static_cast<std::uint32_t>(packages.size());
        packages.push_back(r.packages[i]);
    }
    auto self = static_cast<std::uint32_t>(packages.size());
    if (index) {
        packages.push_back({name, "", socs_of(*index), false});
        for (const auto& soc : packages.back().socs)
            touched.push_back(soc);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    r.packages = std::move(packages);
    for (auto& [soc, ops] : r.socs)
        if (renumber(ops, remap) && !std::binary_search(touched.begin(), touched.end(), soc))
            throw support::Error("the per-key record lists kernels of " + name + " for " + soc +
                                 ", which it does not name among its SoCs");
    for (const auto& soc : touched) {
        auto& ops = r.socs[soc];
        std::map<std::string, std::vector<Pick>> fresh;
        if (index)
            if (auto it = index->find(soc); it != index->end())
                for (const auto& [op, entries] : it->second)
                    fresh[op] = picks(entries);
        for (auto& [op, p] : fresh)
            ops[op]; // an OpType the package brings
        for (auto& [op, lines] : ops) {
            auto f = fresh.find(op);
            change_op(r, soc, op, lines, f == fresh.end() ? nullptr : &f->second, self, load);
        }
        std::erase_if(ops, [](const auto& kv) { return kv.second.empty(); });
        bool kept = std::any_of(r.packages.begin(), r.packages.end(), [&](const RecordPackage& p) {
            return std::find(p.socs.begin(), p.socs.end(), soc) != p.socs.end();
        });
        if (!kept) {
            r.socs.erase(soc);
            r.soc_stamps.erase(soc);
        }
    }
    return touched;
}

std::uint64_t render_soc_pieces(const IndexRecord& r, const std::string& soc,
                                const std::function<void(std::string_view)>& piece) {
    // Lines of the old text that follow one another there are handed on as one piece.
    std::string_view run;
    bool run_old = false;
    std::uint64_t size = 0;
    auto add = [&](std::string_view s, bool from_old = false) {
        size += s.size();
        if (from_old && run_old && run.data() + run.size() == s.data()) {
            run = std::string_view(run.data(), run.size() + s.size());
            return;
        }
        if (!run.empty())
            piece(run);
        run = s;
        run_old = from_old;
    };
    add("{\n");
    auto it = r.socs.find(soc);
    if (it != r.socs.end()) {
        // A line read from the old global index is followed there by its separator when it was
        // not its OpType's last: that ",\n" is used in place, so a run of such lines is one
        // piece.
        std::string_view old;
        if (auto g = r.globals.find(soc); g != r.globals.end())
            old = g->second;
        std::less<const char*> lt;
        auto in_old = [&](std::string_view text) {
            const char* end = text.data() + text.size();
            return !old.empty() && !lt(text.data(), old.data()) &&
                   lt(end + 1, old.data() + old.size()) && end[0] == ',' && end[1] == '\n';
        };
        std::size_t left = it->second.size();
        for (const auto& [op, lines] : it->second) {
            add("\"");
            add(op);
            add("\":{\"staticList\":[\n");
            for (std::size_t i = 0; i < lines.size(); ++i) {
                std::string_view text = lines[i].text;
                if (i + 1 == lines.size()) {
                    add(text);
                    add("\n");
                } else if (in_old(text)) {
                    add(std::string_view(text.data(), text.size() + 2), true);
                } else {
                    add(text);
                    add(",\n");
                }
            }
            add(--left > 0 ? "]},\n" : "]}\n");
        }
    }
    add("}\n");
    piece(run);
    return size;
}

std::string render_soc(const IndexRecord& r, const std::string& soc) {
    // Sized once: the index is the largest file skinstall writes (15 MB at 100,000 entries), so
    // it is neither regrown nor copied on return.
    std::string out;
    out.reserve(render_soc_pieces(r, soc, [](std::string_view) {}));
    render_soc_pieces(r, soc, [&](std::string_view s) { out.append(s); });
    return out;
}

namespace {

void append_number(std::string& out, std::uint32_t v) {
    char buf[16];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, end);
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& s : items)
        out += (out.empty() ? "" : ",") + s;
    return out.empty() ? "-" : out;
}

} // namespace

std::string serialize_record(const IndexRecord& r) {
    // Sized once (3.5 MB at 100,000 entries): an entry line is its key and at most 35 bytes
    // besides, and 11 a hidden provider.
    std::size_t size = k_magic.size() + 128;
    for (const auto& p : r.packages)
        size += p.name.size() + p.stamp.size() + 32 + 16 * p.socs.size();
    for (const auto& [soc, stamp] : r.soc_stamps)
        size += soc.size() + stamp.size() + 4;
    for (const auto& [soc, ops] : r.socs) {
        size += soc.size() + 3;
        for (const auto& [op, lines] : ops) {
            size += op.size() + 16;
            for (const auto& l : lines)
                size += l.key.size() + 35 + 11 * l.hidden.size();
        }
    }
    std::string out;
    out.reserve(size);
    out.append(k_magic);
    for (const auto& p : r.packages)
        out += "p\t" + p.name + "\t" + (p.damaged ? "damaged" : "ok") + "\t" + p.stamp + "\t" +
               joined(p.socs) + "\n";
    for (const auto& [soc, stamp] : r.soc_stamps)
        out += "s\t" + soc + "\t" + stamp + "\n";
    for (const auto& [soc, ops] : r.socs) {
        out += "b\t" + soc + "\n";
        for (const auto& [op, lines] : ops) {
            out += "o\t" + std::to_string(lines.size()) + "\t" + op + "\n";
            // One entry a line, appended in place (100,000 lines at fleet scale: no temporaries).
            for (const auto& l : lines) {
                out.append("e\t");
                append_number(out, l.pkg);
                out.push_back('\t');
                append_number(out, l.idx);
                out.push_back('\t');
                if (l.hidden.empty())
                    out.push_back('-');
                for (std::size_t k = 0; k < l.hidden.size(); ++k) {
                    if (k > 0)
                        out.push_back(',');
                    append_number(out, l.hidden[k]);
                }
                out.push_back('\t');
                out.append(l.key).append("\n");
            }
        }
    }
    std::string digest = support::sha256_hex(out);
    out.append("end\t").append(digest).append("\n");
    return out;
}

namespace {

// The lines of a text, never copied.
struct Lines {
    std::string_view s;
    std::size_t i = 0;

    bool peek(std::string_view& line) const {
        auto nl = s.find('\n', i);
        if (i >= s.size() || nl == std::string_view::npos)
            return false;
        line = s.substr(i, nl - i);
        return true;
    }
    bool next(std::string_view& line) {
        if (!peek(line))
            return false;
        i += line.size() + 1;
        return true;
    }
    bool done() const { return i >= s.size(); }
};

// `line` split at its first `n - 1` tabs.
std::vector<std::string_view> fields(std::string_view line, std::size_t n) {
    std::vector<std::string_view> out;
    while (out.size() + 1 < n) {
        auto tab = line.find('\t');
        if (tab == std::string_view::npos)
            break;
        out.push_back(line.substr(0, tab));
        line.remove_prefix(tab + 1);
    }
    out.push_back(line);
    return out;
}

bool number(std::string_view s, std::uint32_t& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

std::vector<std::string> split_commas(std::string_view s) {
    std::vector<std::string> out;
    if (s == "-")
        return out;
    for (std::size_t b = 0;;) {
        auto c = s.find(',', b);
        out.emplace_back(s.substr(b, c == std::string_view::npos ? s.npos : c - b));
        if (c == std::string_view::npos)
            return out;
        b = c + 1;
    }
}

// `line`'s next tab-separated field (the rest when `last`); false when there is no tab.
bool next_field(std::string_view& line, std::string_view& field, bool last = false) {
    if (last) {
        field = line;
        return true;
    }
    auto tab = line.find('\t');
    if (tab == std::string_view::npos)
        return false;
    field = line.substr(0, tab);
    line.remove_prefix(tab + 1);
    return true;
}

// An "e" line, without allocating (the record has one a kernel).
bool parse_entry(std::string_view line, std::size_t packages, RecordLine& l) {
    std::string_view tag, pkg, idx, hidden, key;
    if (!next_field(line, tag) || !next_field(line, pkg) || !next_field(line, idx) ||
        !next_field(line, hidden) || !next_field(line, key, true) || tag != "e" ||
        !number(pkg, l.pkg) || !number(idx, l.idx) || l.pkg >= packages)
        return false;
    if (hidden != "-")
        for (;;) {
            auto c = hidden.find(',');
            std::uint32_t v = 0;
            if (!number(hidden.substr(0, c), v) || v >= packages)
                return false;
            l.hidden.push_back(v);
            if (c == std::string_view::npos)
                break;
            hidden.remove_prefix(c + 1);
        }
    l.key = key;
    return true;
}

// The entries of one OpType: `n` record lines, each paired with its line of the global index
// (when `g` reads one).
bool parse_op(Lines& in, Lines* g, std::uint32_t n, std::size_t packages,
              std::vector<RecordLine>& lines) {
    std::string_view line, gline;
    // With room for a package or two more: an install appends its entries without moving these.
    lines.reserve(lines.size() + n + n / 16 + 256);
    for (std::uint32_t k = 0; k < n; ++k) {
        RecordLine l{};
        if (!in.next(line) || !parse_entry(line, packages, l))
            return false;
        if (g) {
            bool last = k + 1 == n;
            if (!g->next(gline) || (!last && (gline.empty() || gline.back() != ',')))
                return false;
            l.text = last ? gline : gline.substr(0, gline.size() - 1);
        }
        lines.push_back(std::move(l));
    }
    return true;
}

// The body of one SoC: its OpTypes in byte order, each with its entries; with `g`, the global
// index must be exactly these lines in merge_and_render's form.
bool parse_body(Lines& in, IndexRecord& r, const std::string& soc, Lines* g) {
    auto& ops = r.socs[soc];
    std::string_view line, gline;
    if (g && (!g->next(gline) || gline != "{"))
        return false;
    std::string_view closing;
    while (in.peek(line) && line.starts_with("o\t")) {
        in.next(line);
        auto f = fields(line, 3);
        std::uint32_t n = 0;
        std::string op(f.size() == 3 ? f[2] : "");
        if (f.size() != 3 || !number(f[1], n) || n == 0 ||
            (!ops.empty() && !(ops.rbegin()->first < op)))
            return false;
        if (g && (!closing.empty() && closing != "]},"))
            return false;
        if (g && (!g->next(gline) || gline != "\"" + op + "\":{\"staticList\":["))
            return false;
        if (!parse_op(in, g, n, r.packages.size(), ops[op]))
            return false;
        if (g && !g->next(closing))
            return false;
    }
    if (!g)
        return true;
    if (!closing.empty() && closing != "]}")
        return false;
    return g->next(gline) && gline == "}" && g->done();
}

} // namespace

std::optional<IndexRecord>
parse_record(std::string text,
             const std::function<std::optional<std::string>(const std::string&)>& global,
             RecordBody body, RecordDigest digest) {
    std::string_view all = text;
    auto end = all.rfind("end\t");
    if (!all.starts_with(k_magic) || end == std::string_view::npos)
        return std::nullopt;
    std::string_view tail = all.substr(end);
    if (digest == RecordDigest::check
            ? tail != "end\t" + support::sha256_hex(all.substr(0, end)) + "\n"
            : tail.size() != 4 + 64 + 1 || !tail.ends_with('\n'))
        return std::nullopt;
    IndexRecord r;
    // Kept, not copied: the entries' keys are views into it.
    std::string_view own = std::string_view(r.store.emplace_back(std::move(text))).substr(0, end);
    Lines in{own, k_magic.size()};
    std::string_view line;
    for (; in.peek(line) && line.starts_with("p\t"); in.next(line)) {
        auto f = fields(line, 5);
        if (f.size() != 5 || (f[2] != "ok" && f[2] != "damaged"))
            return std::nullopt;
        r.packages.push_back(
            {std::string(f[1]), std::string(f[3]), split_commas(f[4]), f[2] == "damaged"});
    }
    for (; in.peek(line) && line.starts_with("s\t"); in.next(line)) {
        auto f = fields(line, 3);
        if (f.size() != 3)
            return std::nullopt;
        r.soc_stamps[std::string(f[1])] = std::string(f[2]);
    }
    while (in.next(line)) {
        auto f = fields(line, 2);
        if (f.size() != 2 || f[0] != "b" || r.socs.contains(std::string(f[1])))
            return std::nullopt;
        std::string soc(f[1]);
        if (body == RecordBody::skip &&
            !global) { // the SoC's name only: its OpType and entry lines are skipped
            r.socs[soc];
            while (in.peek(line) && (line.starts_with("o\t") || line.starts_with("e\t")))
                in.next(line);
            continue;
        }
        std::optional<Lines> g;
        if (global) {
            auto gtext = global(soc);
            if (!gtext)
                return std::nullopt;
            g = Lines{r.store.emplace_back(std::move(*gtext))};
            r.globals[soc] = g->s;
        }
        if (!parse_body(in, r, soc, g ? &*g : nullptr))
            return std::nullopt;
    }
    if (!in.done())
        return std::nullopt;
    return r;
}

} // namespace skforge::install
