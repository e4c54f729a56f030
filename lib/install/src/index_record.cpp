// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/index_record.hpp"

#include "skforge/support/error.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <libdeflate.h>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace skforge::install {

namespace {

constexpr std::string_view k_magic = "skforge-index-record 2\n";
constexpr std::uint32_t k_gone = std::numeric_limits<std::uint32_t>::max();

// The record's own check: CRC-32 (libdeflate's, ~0.3 ms for the 4 MB record of 100,000 entries
// where SHA-256 took 3 ms, and the record is hashed at every command). It is there to catch a
// record cut short or torn by a power cut, not a forgery: whoever can write config/ can write
// the global index itself.
std::string digest_text(std::uint32_t crc) {
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(crc));
    return buf;
}

std::uint32_t crc_of(std::uint32_t crc, std::string_view text) {
    return libdeflate_crc32(crc, text.data(), text.size());
}

std::string record_digest(std::string_view text) {
    return digest_text(crc_of(0, text));
}

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

std::uint32_t text_size(std::string_view text) {
    if (text.size() >= std::numeric_limits<std::uint32_t>::max())
        throw support::Error("an index entry of " + std::to_string(text.size()) +
                             " bytes is larger than the per-key record can describe");
    return static_cast<std::uint32_t>(text.size());
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
        r.packages.push_back({rank, name, "", socs_of(index), false});
        for (const auto& [soc, doc] : index) {
            auto& ops = r.socs[soc];
            for (const auto& [op, entries] : doc) {
                auto& at = where[{soc, op}];
                for (const Pick& p : picks(entries)) {
                    auto& lines = ops[op];
                    auto [it, fresh] = at.emplace(p.key, lines.size());
                    if (fresh) {
                        lines.push_back({p.key, p.text, rank, p.idx, {}, text_size(p.text)});
                        continue;
                    }
                    RecordLine& l = lines[it->second];
                    l.hidden.push_back(l.pkg);
                    l.key = p.key;
                    l.text = p.text;
                    l.len = text_size(p.text);
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
            l.len = text_size(l.text);
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
                 h == hidden_of_new.end() ? std::vector<std::uint32_t>{} : std::move(h->second),
                 text_size(text)});
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
        std::uint32_t seq = packages.empty() ? 0 : packages.back().seq + 1;
        if (!packages.empty() && packages.back().seq >= k_gone - 1)
            throw support::Error("the per-key record has run out of package numbers");
        packages.push_back({seq, name, "", socs_of(*index), false});
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

// The numbers of a hidden field, each `to_seq` of an element of `hidden`: "-" for none.
template <class ToSeq>
void append_seqs(std::string& out, const std::vector<std::uint32_t>& hidden, ToSeq to_seq) {
    if (hidden.empty())
        out.push_back('-');
    for (std::size_t k = 0; k < hidden.size(); ++k) {
        if (k > 0)
            out.push_back(',');
        append_number(out, to_seq(hidden[k]));
    }
}

// An "e" line, the one writer of what parse_text_line reads; `to_seq` gives the number of
// each hidden provider (the model keeps positions, the text patch numbers).
template <class ToSeq>
void append_entry(std::string& out, std::uint32_t seq, std::uint32_t idx,
                  const std::vector<std::uint32_t>& hidden, ToSeq to_seq, std::uint32_t len,
                  std::string_view key) {
    out.append("e\t");
    append_number(out, seq);
    out.push_back('\t');
    append_number(out, idx);
    out.push_back('\t');
    append_seqs(out, hidden, to_seq);
    out.push_back('\t');
    append_number(out, len);
    out.push_back('\t');
    out.append(key).push_back('\n');
}

void append_entry(std::string& out, std::uint32_t seq, std::uint32_t idx,
                  const std::vector<std::uint32_t>& hidden, std::uint32_t len,
                  std::string_view key) {
    append_entry(
        out, seq, idx, hidden, [](std::uint32_t s) { return s; }, len, key);
}

// The magic line, the packages' and the global indexes' lines.
void append_head(std::string& out, const std::vector<RecordPackage>& packages,
                 const std::map<std::string, std::string>& soc_stamps) {
    out.append(k_magic);
    for (const auto& p : packages)
        out += "p\t" + std::to_string(p.seq) + "\t" + p.name + "\t" +
               (p.damaged ? "damaged" : "ok") + "\t" + p.stamp + "\t" + joined(p.socs) + "\n";
    for (const auto& [soc, stamp] : soc_stamps)
        out += "s\t" + soc + "\t" + stamp + "\n";
}

void append_digest(std::string& out) {
    std::string digest = record_digest(out); // of what comes before "end"
    out.append("end\t").append(digest).append("\n");
}

} // namespace

std::string serialize_record(const IndexRecord& r) {
    // Sized once (3.5 MB at 100,000 entries): an entry line is its key and at most 35 bytes
    // besides, and 11 a hidden provider.
    std::size_t size = k_magic.size() + 128;
    for (const auto& p : r.packages)
        size += p.name.size() + p.stamp.size() + 44 + 16 * p.socs.size();
    for (const auto& [soc, stamp] : r.soc_stamps)
        size += soc.size() + stamp.size() + 4;
    for (const auto& [soc, ops] : r.socs) {
        size += soc.size() + 3;
        for (const auto& [op, lines] : ops) {
            size += op.size() + 16;
            for (const auto& l : lines)
                size += l.key.size() + 46 + 11 * l.hidden.size();
        }
    }
    std::string out;
    out.reserve(size);
    append_head(out, r.packages, r.soc_stamps);
    for (const auto& [soc, ops] : r.socs) {
        out += "b\t" + soc + "\n";
        for (const auto& [op, lines] : ops) {
            out += "o\t" + std::to_string(lines.size()) + "\t" + op + "\n";
            // One entry a line, appended in place (100,000 lines at fleet scale: no temporaries).
            for (const auto& l : lines)
                append_entry(
                    out, r.packages[l.pkg].seq, l.idx, l.hidden,
                    [&](std::uint32_t h) { return r.packages[h].seq; }, l.len, l.key);
        }
    }
    append_digest(out);
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

// The position in the record's order of the package numbered `seq` (the numbers rise along
// it); false when no package has that number.
bool rank_of(const std::vector<std::uint32_t>& seqs, std::uint32_t seq, std::uint32_t& rank) {
    auto it = std::lower_bound(seqs.begin(), seqs.end(), seq);
    if (it == seqs.end() || *it != seq)
        return false;
    rank = static_cast<std::uint32_t>(it - seqs.begin());
    return true;
}

// One "e" line of the record's text, its fields as views.
struct TextLine {
    std::string_view raw; ///< without its newline
    std::uint32_t seq = 0;
    std::uint32_t idx = 0;
    std::string_view hidden; ///< "-" or seqs joined by ','
    std::uint32_t len = 0;
    std::string_view key;
};

// A decimal number of at most 32 bits and the tab after it; `p` moves past the tab.
bool number_then_tab(const char*& p, const char* end, std::uint32_t& v) {
    const char* start = p;
    std::uint64_t x = 0;
    while (p < end && *p >= '0' && *p <= '9' && p - start < 10)
        x = x * 10 + static_cast<std::uint64_t>(*p++ - '0');
    if (p == start || p == end || *p != '\t' || x > std::numeric_limits<std::uint32_t>::max())
        return false;
    ++p;
    v = static_cast<std::uint32_t>(x);
    return true;
}

// An "e" line, by hand: patch_record reads 100,000 of them per change, and this is most of its
// time.
bool parse_text_line(std::string_view raw, TextLine& l) {
    l.raw = raw;
    const char* p = raw.data();
    const char* end = p + raw.size();
    if (raw.size() < 2 || p[0] != 'e' || p[1] != '\t')
        return false;
    p += 2;
    if (!number_then_tab(p, end, l.seq) || !number_then_tab(p, end, l.idx))
        return false;
    const char* hidden = p;
    while (p < end && *p != '\t')
        ++p;
    if (p == end || p == hidden)
        return false;
    l.hidden = std::string_view(hidden, static_cast<std::size_t>(p - hidden));
    ++p;
    if (!number_then_tab(p, end, l.len))
        return false;
    l.key = std::string_view(p, static_cast<std::size_t>(end - p));
    return true;
}

// The numbers of a hidden field ("-" or numbers joined by ','), into `out`.
bool parse_seqs(std::string_view hidden, std::vector<std::uint32_t>& out) {
    out.clear();
    if (hidden == "-")
        return true;
    for (;;) {
        auto c = hidden.find(',');
        std::uint32_t v = 0;
        if (!number(hidden.substr(0, c), v))
            return false;
        out.push_back(v);
        if (c == std::string_view::npos)
            return true;
        hidden.remove_prefix(c + 1);
    }
}

std::vector<std::uint32_t> seq_list(std::string_view hidden) {
    std::vector<std::uint32_t> out;
    if (!parse_seqs(hidden, out))
        throw support::Error("the per-key record has a malformed entry line");
    return out;
}

// An "e" line of the model (allocating only for hidden providers): its package numbers become
// positions in the order.
bool parse_entry(std::string_view line, const std::vector<std::uint32_t>& seqs, RecordLine& l) {
    TextLine t;
    if (!parse_text_line(line, t) || !rank_of(seqs, t.seq, l.pkg) ||
        !parse_seqs(t.hidden, l.hidden))
        return false;
    for (auto& h : l.hidden)
        if (!rank_of(seqs, h, h))
            return false;
    l.key = t.key;
    l.idx = t.idx;
    l.len = t.len;
    return true;
}

// The entries of one OpType: `n` record lines, each paired with its line of the global index
// (when `g` reads one).
bool parse_op(Lines& in, Lines* g, std::uint32_t n, const std::vector<std::uint32_t>& seqs,
              std::vector<RecordLine>& lines) {
    std::string_view line, gline;
    // With room for a package or two more: an install appends its entries without moving these.
    // (n is the record's word: no more than the text left can hold, 11 bytes an entry line.)
    std::size_t room = std::min<std::size_t>(n, (in.s.size() - in.i) / 11);
    lines.reserve(lines.size() + room + room / 16 + 256);
    for (std::uint32_t k = 0; k < n; ++k) {
        RecordLine l{};
        if (!in.next(line) || !parse_entry(line, seqs, l))
            return false;
        if (g) {
            bool last = k + 1 == n;
            if (!g->next(gline) || (!last && (gline.empty() || gline.back() != ',')))
                return false;
            l.text = last ? gline : gline.substr(0, gline.size() - 1);
            if (l.text.size() != l.len)
                return false;
        }
        lines.push_back(std::move(l));
    }
    return true;
}

// The body of one SoC: its OpTypes in byte order, each with its entries; with `g`, the global
// index must be exactly these lines in merge_and_render's form.
bool parse_body(Lines& in, IndexRecord& r, const std::string& soc,
                const std::vector<std::uint32_t>& seqs, Lines* g) {
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
        if (!parse_op(in, g, n, seqs, ops[op]))
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
    return parse_record(std::make_shared<const std::string>(std::move(text)), global, body, digest);
}

std::optional<IndexRecord>
parse_record(std::shared_ptr<const std::string> text,
             const std::function<std::optional<std::string>(const std::string&)>& global,
             RecordBody body, RecordDigest digest) {
    std::string_view all = *text;
    auto end = all.rfind("end\t");
    if (!all.starts_with(k_magic) || end == std::string_view::npos)
        return std::nullopt;
    std::string_view tail = all.substr(end);
    if (digest == RecordDigest::check ? tail != "end\t" + record_digest(all.substr(0, end)) + "\n"
                                      : tail.size() != 4 + 8 + 1 || !tail.ends_with('\n'))
        return std::nullopt;
    IndexRecord r;
    // Kept, not copied: the entries' keys are views into it.
    r.text = std::move(text);
    std::string_view own = std::string_view(*r.text).substr(0, end);
    Lines in{own, k_magic.size()};
    std::string_view line;
    std::vector<std::uint32_t> seqs;
    for (; in.peek(line) && line.starts_with("p\t"); in.next(line)) {
        auto f = fields(line, 6);
        std::uint32_t seq = 0;
        if (f.size() != 6 || !number(f[1], seq) || (!seqs.empty() && seq <= seqs.back()) ||
            (f[3] != "ok" && f[3] != "damaged"))
            return std::nullopt;
        seqs.push_back(seq);
        r.packages.push_back(
            {seq, std::string(f[2]), std::string(f[4]), split_commas(f[5]), f[3] == "damaged"});
    }
    for (; in.peek(line) && line.starts_with("s\t"); in.next(line)) {
        auto f = fields(line, 3);
        if (f.size() != 3)
            return std::nullopt;
        r.soc_stamps[std::string(f[1])] = std::string(f[2]);
    }
    while (true) {
        std::size_t start = in.i;
        if (!in.next(line))
            break;
        auto f = fields(line, 2);
        if (f.size() != 2 || f[0] != "b" || r.socs.contains(std::string(f[1])))
            return std::nullopt;
        std::string soc(f[1]);
        if (body == RecordBody::skip &&
            !global) { // the SoC's name only: its OpType and entry lines are left as text
            r.socs[soc];
            // The next "b" line, or the end: the entry lines are not looked at one by one.
            auto next = own.find("\nb\t", in.i - 1);
            in.i = next == std::string_view::npos ? own.size() : next + 1;
            r.bodies[soc] = own.substr(start, in.i - start);
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
        if (!parse_body(in, r, soc, seqs, g ? &*g : nullptr))
            return std::nullopt;
    }
    if (!in.done())
        return std::nullopt;
    return r;
}

namespace {

// The fixed text of merge_and_render's form around the entries.
constexpr std::string_view k_open = "{\n";
constexpr std::string_view k_close = "}\n";
constexpr std::string_view k_op_open = "\":{\"staticList\":[\n"; // after `"<op>`
constexpr std::string_view k_op_close_more = "]},\n";
constexpr std::string_view k_op_close_last = "]}\n";

// The pieces of a file being written: text, and ranges of the old file, adjacent ranges joined.
struct PieceList {
    std::vector<FilePiece> pieces;
    std::uint64_t size = 0;

    void text(std::string_view s) {
        if (s.empty())
            return;
        size += s.size();
        pieces.push_back({s, 0, 0});
    }
    void range(std::uint64_t from, std::uint64_t len) {
        if (len == 0)
            return;
        size += len;
        if (!pieces.empty() && pieces.back().len > 0 &&
            pieces.back().from + pieces.back().len == from)
            pieces.back().len += len;
        else
            pieces.push_back({{}, from, len});
    }
};

// One OpType of a SoC's body in the record's text.
struct TextOp {
    std::string_view name;
    std::uint32_t n = 0;
    /// Its "e" lines, each with its newline; from OpCursor, the rest of the body, whose first
    /// `n` lines are its own.
    std::string_view lines;
};

// The OpTypes of a SoC's body, one "o" line at a time: the caller walks each one's `n` lines
// and skips them, so a body is walked once, not once to split it and again to patch it.
class OpCursor {
  public:
    OpCursor(std::string_view body, std::string_view& soc) : m_in{body} {
        std::string_view line;
        if (!m_in.next(line) || !line.starts_with("b\t"))
            throw support::Error("the per-key record has a malformed SoC line");
        soc = line.substr(2);
    }
    // The next OpType's header, or false at the end of the body.
    bool next(TextOp& op) {
        std::string_view line;
        if (!m_in.next(line))
            return false;
        auto f = fields(line, 3);
        if (f.size() != 3 || f[0] != "o" || !number(f[1], op.n) || op.n == 0 ||
            (!m_last.empty() && !(m_last < f[2])))
            throw support::Error("the per-key record has a malformed OpType line");
        op.name = m_last = f[2];
        op.lines = m_in.s.substr(m_in.i);
        return true;
    }
    void skip(std::size_t bytes) { m_in.i += bytes; }

  private:
    Lines m_in;
    std::string_view m_last;
};

std::vector<TextOp> text_ops(std::string_view body, std::string_view& soc) {
    OpCursor cursor(body, soc);
    std::vector<TextOp> ops;
    TextOp op;
    while (cursor.next(op)) {
        Lines in{op.lines};
        std::string_view line;
        for (std::uint32_t k = 0; k < op.n; ++k)
            if (!in.next(line) || !line.starts_with("e\t"))
                throw support::Error("the per-key record has fewer entry lines than it says");
        op.lines = op.lines.substr(0, in.i);
        cursor.skip(in.i);
        ops.push_back(op);
    }
    return ops;
}

// A line the change gives back to an older provider.
struct Restored {
    std::uint32_t seq;
    std::uint32_t idx;
    std::vector<std::uint32_t> hidden;
    std::string_view key;
    std::string_view text;
};

struct PatchContext {
    const IndexRecord& head;
    std::vector<std::uint32_t> seqs; ///< of head.packages
    bool has_old = false;
    std::uint32_t old_seq = 0; ///< the package's number before the change, when has_old
    std::uint32_t new_seq = 0; ///< its number after, when it stays
    const IndexLoader& load;
    RecordPatch& out;
    const std::string& name; ///< the package changed

    const std::string& name_of(std::uint32_t seq) const {
        std::uint32_t rank = 0;
        if (!rank_of(seqs, seq, rank))
            throw support::Error("the per-key record names a package it does not list");
        return head.packages[rank].name;
    }
};

// The package's keys for one OpType, with a filter in front of the set: every old line's key
// is looked up (100,000 at fleet scale) and nearly all are not there.
class KeySet {
  public:
    explicit KeySet(const std::vector<Pick>* fresh) {
        if (fresh)
            for (const auto& p : *fresh) {
                keys_.insert(p.key);
                auto h = quick(p.key);
                bits_[h / 64 % k_words] |= std::uint64_t{1} << (h % 64);
            }
    }
    bool empty() const { return keys_.empty(); }
    bool contains(std::string_view key) const {
        auto h = quick(key);
        return (bits_[h / 64 % k_words] >> (h % 64) & 1) != 0 && keys_.contains(key);
    }

  private:
    static constexpr std::size_t k_words = 128; // 8,192 bits
    // The length and the first and last 8 bytes, mixed: cheap, and keys of one OpType differ
    // in one of them nearly always (a miss of the filter only costs a lookup).
    static std::uint64_t quick(std::string_view key) {
        std::uint64_t head = 0, tail = 0;
        std::size_t n = std::min<std::size_t>(key.size(), 8);
        if (n > 0) {
            std::memcpy(&head, key.data(), n);
            std::memcpy(&tail, key.data() + key.size() - n, n);
        }
        std::uint64_t x =
            (head * 0x9E3779B97F4A7C15ull) ^ (tail + key.size()) * 0xC2B2AE3D27D4EB4Full;
        return x ^ (x >> 29);
    }
    std::unordered_set<std::string_view> keys_;
    std::array<std::uint64_t, k_words> bits_{};
};

// Where a line goes in its OpType: by its winner's number, then by its position in the
// winner's list (the merge's order).
template <class Line> std::pair<std::uint32_t, std::uint32_t> place(const Line& l) {
    return {l.seq, l.idx};
}

// What the second walk of patch_op does with an old line.
enum class Fate : std::uint8_t { keep, rewrite, drop };

struct OldLine {
    const char* raw;
    std::uint32_t raw_len;
    std::uint32_t seq;
    std::uint32_t idx;
    std::uint32_t len;
    Fate fate;
};

// The new lines of one SoC, as pieces: runs of the old record's text as views, and new text
// gathered in `text` and kept, between runs, in the patch's store.
struct BodyBuilder {
    BodyPieces& out;
    std::deque<std::string>& store;
    std::string text;

    void run(std::string_view old) {
        if (old.empty())
            return;
        flush();
        out.push_back(old);
    }
    void flush() {
        if (text.empty())
            return;
        out.push_back(store.emplace_back(std::move(text)));
        text.clear();
    }
};

// One OpType changed: its old lines (from the record's text, OpCursor's: the first `old->n`
// lines of `old->lines`, whose bytes go to `consumed`; their OpType's text in the old global
// index starts at `offset`, which advances past it) and the package's picks become the new
// record's lines (appended to `body`) and the pieces of the new global index (`global`; `open`
// says whether an OpType before this one still needs its "]},"). An OpType left with no
// entries goes.
void patch_op(PatchContext& c, const std::string& soc, std::string_view op, const TextOp* old,
              const std::vector<Pick>* fresh, std::uint64_t& offset, BodyBuilder& body,
              PieceList& global, bool& open, std::size_t& consumed) {
    KeySet new_keys(fresh);
    std::unordered_map<std::string_view, std::vector<std::uint32_t>> hidden_of_new;
    std::vector<Restored> restored;
    std::uint32_t kept = 0;
    std::string opname(op);
    // What the change does to an old line: the package's old version won it; one of the
    // package's new keys is its key; it names the old version among the providers it hides.
    auto mine = [&](const TextLine& l) { return c.has_old && l.seq == c.old_seq; };
    auto taken = [&](const TextLine& l) { return !new_keys.empty() && new_keys.contains(l.key); };
    auto hides_old = [&](const TextLine& l) {
        if (!c.has_old || l.hidden == "-")
            return false;
        auto h = seq_list(l.hidden);
        return std::find(h.begin(), h.end(), c.old_seq) != h.end();
    };
    // The k-th line of the old OpType, from `in`, checked: an entry line, after `prev` (the
    // line before it) in the merge's order.
    auto read_line = [&](Lines& in, std::uint32_t k, const TextLine& prev, TextLine& l) {
        std::string_view raw;
        if (!in.next(raw))
            throw support::Error("the per-key record has fewer entry lines than it says");
        if (!parse_text_line(raw, l))
            throw support::Error("the per-key record has a malformed entry line");
        if (k > 0 && place(prev) >= place(l))
            throw support::Error("the per-key record's entries are out of order");
    };
    // First walk, the only one that parses every line: what goes, what comes back, what the
    // package's new lines hide. The lines must be in the merge's order (by package, then by
    // position in it): the shadow report and the merge of restored lines rely on it.
    static thread_local std::vector<OldLine> lines;
    lines.clear();
    bool old_last = false; // whether the old OpType is its SoC's last
    // An OpType the change leaves as it is (none of its lines is the package's or hides it, none
    // has one of the package's new keys: an install of new keys, at fleet scale nearly every
    // OpType of every install) is walked once, keeping nothing but its size in the old global
    // index: its lines and that text are then copied whole. Any other line sends the OpType to
    // the walk below, which notes every line.
    std::uint64_t untouched = 0; // the OpType's lines in the old global index, when `whole`
    bool whole = false;
    if (old) {
        Lines in{old->lines};
        TextLine l, prev;
        bool keeps = true;
        for (std::uint32_t k = 0; keeps && k < old->n; ++k) {
            read_line(in, k, prev, l);
            keeps = !mine(l) && !taken(l) && !hides_old(l);
            untouched += l.len + (k + 1 < old->n ? 2 : 1);
            prev = l;
        }
        if (keeps) {
            whole = true;
            kept = old->n;
            consumed = in.i;
            old_last = in.done();
        }
    }
    if (old && !whole) {
        // No more than the text can hold (an entry line has at least 11 bytes): the count is
        // the record's word, checked only by the walk below.
        lines.reserve(std::min<std::size_t>(old->n, old->lines.size() / 11));
        Lines in{old->lines};
        TextLine l, prev;
        for (std::uint32_t k = 0; k < old->n; ++k, prev = l) {
            read_line(in, k, prev, l);
            OldLine o{l.raw.data(), static_cast<std::uint32_t>(l.raw.size()), l.seq, l.idx, l.len,
                      Fate::keep};
            bool is_mine = mine(l);
            if (taken(l)) {
                auto h = seq_list(l.hidden);
                if (c.has_old)
                    std::erase(h, c.old_seq);
                if (!is_mine)
                    h.push_back(l.seq);
                hidden_of_new[l.key] = std::move(h);
                o.fate = Fate::drop;
            } else if (is_mine) {
                o.fate = Fate::drop;
                auto h = seq_list(l.hidden);
                if (!h.empty()) {
                    // It won this key and no longer provides it: the newest other one does.
                    Restored back{h.back(), 0, {}, l.key, {}};
                    h.pop_back();
                    back.hidden = std::move(h);
                    Pick p = find_pick(c.load(c.name_of(back.seq), soc), opname, l.key);
                    back.idx = p.idx;
                    back.text = c.out.store.emplace_back(p.text);
                    restored.push_back(std::move(back));
                }
            } else {
                ++kept;
                if (hides_old(l))
                    o.fate = Fate::rewrite;
            }
            lines.push_back(o);
        }
        consumed = in.i;
        old_last = in.done();
    }
    std::sort(restored.begin(), restored.end(),
              [](const Restored& a, const Restored& b) { return place(a) < place(b); });
    std::uint32_t count = kept + static_cast<std::uint32_t>(restored.size()) +
                          (fresh ? static_cast<std::uint32_t>(fresh->size()) : 0);
    if (old)
        offset += 1 + old->name.size() + k_op_open.size(); // `"<op>":{"staticList":[`
    if (count > 0) {
        if (open)
            global.text(k_op_close_more);
        open = true;
        body.text.append("o\t");
        append_number(body.text, count);
        body.text.append("\t").append(op).push_back('\n');
        global.text("\"");
        global.text(op);
        global.text(k_op_open);
    }
    // Second walk, over what the first one noted: the lines in order, the restored ones merged
    // in by (package, position).
    std::uint32_t written = whole ? kept : 0;
    std::size_t r = 0;
    auto separator = [&] { return ++written < count ? std::string_view(",\n") : "\n"; };
    // Lines kept as they are follow one another in the old text: appended as runs.
    const char* run = nullptr;
    const char* run_end = nullptr;
    auto flush = [&] {
        if (run != run_end)
            body.run(std::string_view(run, static_cast<std::size_t>(run_end - run)));
        run = run_end = nullptr;
    };
    auto emit_restored = [&](const Restored& x) {
        flush();
        append_entry(body.text, x.seq, x.idx, x.hidden, text_size(x.text), x.key);
        global.text(x.text);
        global.text(separator());
    };
    if (whole) {
        // Every old line as it was: one run of the record's text and one range of the old
        // global index (whose last "\n" becomes ",\n" when the package's lines follow).
        body.run(old->lines.substr(0, consumed));
        std::uint64_t at = offset;
        offset += untouched;
        if (written < count) {
            global.range(at, untouched - 1);
            global.text(",\n");
        } else {
            global.range(at, untouched);
        }
    }
    for (std::size_t k = 0; k < lines.size(); ++k) {
        const OldLine& o = lines[k];
        bool old_comma = k + 1 < lines.size();
        std::uint64_t at = offset;
        offset += o.len + (old_comma ? 2 : 1);
        if (o.fate == Fate::drop)
            continue;
        while (r < restored.size() && place(restored[r]) < place(o))
            emit_restored(restored[r++]);
        if (o.fate == Fate::rewrite) {
            TextLine l;
            parse_text_line(std::string_view(o.raw, o.raw_len), l); // checked in the first walk
            auto h = seq_list(l.hidden);
            std::erase(h, c.old_seq);
            flush();
            append_entry(body.text, l.seq, l.idx, h, l.len, l.key);
        } else if (run_end == o.raw) {
            run_end = o.raw + o.raw_len + 1; // with its newline
        } else {
            flush();
            run = o.raw;
            run_end = o.raw + o.raw_len + 1;
        }
        std::string_view sep = separator();
        bool new_comma = sep.size() == 2;
        if (old_comma == new_comma) {
            global.range(at, o.len + sep.size());
        } else {
            global.range(at, o.len);
            global.text(sep);
        }
    }
    flush();
    if (old)
        offset += old_last ? k_op_close_last.size() : k_op_close_more.size();
    while (r < restored.size())
        emit_restored(restored[r++]);
    if (fresh)
        for (const auto& p : *fresh) {
            auto h = hidden_of_new.find(p.key);
            if (h != hidden_of_new.end() && !h->second.empty()) {
                ShadowLine s{soc, opname, std::string(p.key), {}};
                for (auto seq : h->second)
                    s.providers.push_back(c.name_of(seq));
                s.providers.push_back(c.name);
                c.out.shadows.push_back(std::move(s));
            }
            std::string_view key = c.out.store.emplace_back(p.key);
            std::string_view text = c.out.store.emplace_back(p.text);
            append_entry(body.text, c.new_seq, p.idx,
                         h == hidden_of_new.end() ? std::vector<std::uint32_t>{} : h->second,
                         text_size(text), key);
            global.text(text);
            global.text(separator());
        }
}

} // namespace

namespace {

// One SoC changed: its body in the old record (none when it had none) and the package's picks
// for it, by OpType.
PatchedSoc patch_soc(PatchContext& c, const std::string& soc, const std::string_view* old_body,
                     const std::map<std::string, std::vector<Pick>>& fresh) {
    PatchedSoc out;
    std::optional<OpCursor> cursor;
    TextOp o;
    bool has_o = false; // whether `o` is the next old OpType not yet patched
    if (old_body) {
        std::string_view named;
        cursor.emplace(*old_body, named);
        if (named != soc)
            throw support::Error("the per-key record's SoC lines are out of place");
        out.has_old = true;
        has_o = cursor->next(o);
    }
    BodyBuilder body{out.body, c.out.store, {}};
    body.text.append("b\t").append(soc).push_back('\n');
    PieceList global;
    global.text(k_open);
    std::uint64_t offset = k_open.size();
    bool open = false;
    auto f = fresh.begin();
    while (has_o || f != fresh.end()) {
        // The OpTypes in byte order, the old ones and the package's merged.
        bool take_old = f == fresh.end() || (has_o && o.name <= f->first);
        bool take_fresh = f != fresh.end() && (!has_o || f->first <= o.name);
        std::string_view name =
            take_old ? o.name : std::string_view(c.out.store.emplace_back(f->first));
        std::size_t consumed = 0;
        patch_op(c, soc, name, take_old ? &o : nullptr, take_fresh ? &f->second : nullptr, offset,
                 body, global, open, consumed);
        if (take_old) {
            cursor->skip(consumed);
            has_o = cursor->next(o);
        }
        if (take_fresh)
            ++f;
    }
    body.flush();
    if (open)
        global.text(k_op_close_last);
    global.text(k_close);
    offset += k_close.size();
    out.old_size = out.has_old ? offset : 0;
    out.global = std::move(global.pieces);
    return out;
}

} // namespace

RecordPatch patch_record(const IndexRecord& head, const std::string& name,
                         const PackageIndex* index, const IndexLoader& load) {
    RecordPatch out;
    PatchContext c{head, {}, false, 0, 0, load, out, name};
    std::vector<std::string> touched;
    for (const auto& p : head.packages) {
        c.seqs.push_back(p.seq);
        if (p.name == name) {
            c.has_old = true;
            c.old_seq = p.seq;
            touched = p.socs;
            continue;
        }
        out.packages.push_back(p);
    }
    if (index) {
        if (!head.packages.empty() && head.packages.back().seq >= k_gone - 1)
            throw support::Error("the per-key record has run out of package numbers");
        c.new_seq = head.packages.empty() ? 0 : head.packages.back().seq + 1;
        out.packages.push_back({c.new_seq, name, "", socs_of(*index), false});
        for (const auto& soc : out.packages.back().socs)
            touched.push_back(soc);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (const auto& soc : touched) {
        bool kept = std::any_of(out.packages.begin(), out.packages.end(), [&](const auto& p) {
            return std::find(p.socs.begin(), p.socs.end(), soc) != p.socs.end();
        });
        if (!kept) {
            out.socs[soc] = std::nullopt;
            continue;
        }
        std::map<std::string, std::vector<Pick>> fresh;
        if (index)
            if (auto it = index->find(soc); it != index->end())
                for (const auto& [op, entries] : it->second)
                    fresh[op] = picks(entries);
        auto b = head.bodies.find(soc);
        if (b == head.bodies.end() && head.socs.contains(soc))
            throw support::Error("the per-key record was read without its SoCs' lines");
        out.socs[soc] = patch_soc(c, soc, b == head.bodies.end() ? nullptr : &b->second, fresh);
    }
    return out;
}

std::uint64_t RecordText::size() const {
    std::uint64_t n = head.size() + end.size();
    for (auto p : body)
        n += p.size();
    return n;
}

void RecordText::each(const std::function<void(std::string_view)>& emit) const {
    emit(head);
    for (auto p : body)
        emit(p);
    emit(end);
}

std::string RecordText::joined() const {
    std::string out;
    out.reserve(size());
    each([&](std::string_view p) { out.append(p); });
    return out;
}

std::map<std::string, BodyPieces> body_pieces(const IndexRecord& r) {
    std::map<std::string, BodyPieces> out;
    for (const auto& [soc, body] : r.bodies)
        out[soc] = {body};
    return out;
}

RecordText assemble_record(const std::vector<RecordPackage>& packages,
                           const std::map<std::string, std::string>& soc_stamps,
                           const std::map<std::string, BodyPieces>& bodies) {
    RecordText out;
    append_head(out.head, packages, soc_stamps);
    std::uint32_t crc = crc_of(0, out.head);
    for (const auto& [soc, body] : bodies)
        for (auto p : body) {
            crc = crc_of(crc, p);
            out.body.push_back(p);
        }
    out.end.append("end\t").append(digest_text(crc)).append("\n");
    return out;
}

std::optional<std::string> canonical_record(const std::string& text) {
    auto r = parse_record(text, {});
    if (!r)
        return std::nullopt;
    for (std::uint32_t rank = 0; rank < r->packages.size(); ++rank)
        r->packages[rank].seq = rank;
    return serialize_record(*r);
}

std::vector<ShadowLine> record_shadows(const IndexRecord& head,
                                       const std::vector<std::string>& winners) {
    std::vector<std::uint32_t> seqs;
    std::set<std::uint32_t> wanted;
    for (const auto& p : head.packages) {
        seqs.push_back(p.seq);
        if (std::find(winners.begin(), winners.end(), p.name) != winners.end())
            wanted.insert(p.seq);
    }
    auto name_of = [&](std::uint32_t seq) -> const std::string& {
        std::uint32_t rank = 0;
        if (!rank_of(seqs, seq, rank))
            throw support::Error("the per-key record names a package it does not list");
        return head.packages[rank].name;
    };
    std::vector<ShadowLine> out;
    if (wanted.empty())
        return out;
    // An OpType's lines are in install order of their winners (patch_record checks it), and the
    // winners asked about are nearly always the newest packages: each OpType is read from its
    // end, back to its first line won by an older package.
    std::uint32_t oldest = *wanted.begin();
    for (const auto& [soc, body] : head.bodies) {
        std::string_view named;
        for (const auto& op : text_ops(body, named)) {
            std::string_view all = op.lines;
            for (std::size_t end = all.size(); end > 0;) {
                std::size_t nl = end >= 2 ? all.rfind('\n', end - 2) : std::string_view::npos;
                std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
                std::string_view raw = all.substr(start, end - 1 - start);
                end = start;
                TextLine l;
                if (!parse_text_line(raw, l))
                    throw support::Error("the per-key record has a malformed entry line");
                if (l.seq < oldest)
                    break;
                if (l.hidden == "-" || !wanted.contains(l.seq))
                    continue;
                ShadowLine s{soc, std::string(op.name), std::string(l.key), {}};
                for (auto h : seq_list(l.hidden))
                    s.providers.push_back(name_of(h));
                s.providers.push_back(name_of(l.seq));
                out.push_back(std::move(s));
            }
        }
    }
    return out;
}

} // namespace skforge::install
