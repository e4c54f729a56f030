// SPDX-License-Identifier: Apache-2.0
#include "skforge/graph/yaml_doc.hpp"

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace skforge::graph {

using Kind = YamlDoc::Node::Kind;

// ---- Node -------------------------------------------------------------------------------------

std::optional<YamlDoc::Node> YamlDoc::Node::find(std::string_view k) const {
    if (!is_map())
        return std::nullopt;
    for (std::size_t i = 0; i < size(); ++i)
        if (key(i).scalar() == k)
            return value(i);
    return std::nullopt;
}

// ---- the fast parser ----------------------------------------------------------------------------

namespace {

// "- " (or "-" ending the line or the text) at `i` < s.size(): a block sequence entry. The
// parser and YamlDoc::split's scan must agree on it.
bool dash_at(std::string_view s, std::size_t i) {
    return s[i] == '-' &&
           (i + 1 == s.size() || s[i + 1] == ' ' || s[i + 1] == '\n' || s[i + 1] == '\r');
}

// Thrown when the document uses something the fast parser does not read; yaml-cpp takes over.
struct Unsupported {};

// Adds a node to `doc`'s tree (both parsers build it this way); returns its index. Written in
// place: a node built on the stack and then copied is read back before its field-by-field
// stores have landed, and stalls (a fifth of the fast parser's time, measured).
std::uint32_t add_node(YamlDoc& doc, Kind kind, std::uint32_t line, std::uint32_t col,
                       std::string_view text) {
    YamlDoc::Raw& r = doc.m_nodes.emplace_back();
    r.line = line;
    r.column = col;
    r.text = text.data();
    r.size = static_cast<std::uint32_t>(text.size());
    r.kind = kind;
    return static_cast<std::uint32_t>(doc.m_nodes.size() - 1);
}

// Deeper nesting is refused outright: no graph needs it, and recursive parsers (yaml-cpp's
// included) would exhaust the stack on it.
constexpr int k_max_depth = 200;

class FastParser {
  public:
    // `bytes`: how much of the text this parse reads.
    FastParser(YamlDoc& doc, std::size_t bytes) : m_doc(doc), m_s(*doc.m_text) {
        // About one node per 8 bytes in flow-style graphs; growing would copy the whole tree.
        m_doc.m_nodes.reserve(bytes / 6 + 16);
        m_doc.m_children.reserve(bytes / 6 + 16);
    }

    std::uint32_t document() {
        skip_blank_lines();
        if (starts_with("---")) {
            m_pos += 3;
            skip_rest_of_line();
            skip_blank_lines();
        }
        std::uint32_t root = at_end() ? add_scalar_null() : block_node(-1);
        skip_blank_lines();
        if (!at_end())
            throw Unsupported{}; // trailing content, "...", or another document
        return root;
    }

    // Piece `i` of a split document: its items, parsed in the state the whole-document parse is
    // in when it reaches them (position, line, nesting depth), as one sequence.
    std::uint32_t piece(const YamlDoc::Split& split, std::size_t i) {
        const auto& p = split.pieces[i];
        m_pos = p.begin;
        m_line = p.line;
        m_line_start = p.line_start;
        // document() -> block_node -> block_map, then block_node for a more indented sequence.
        m_depth = split.indent == 0 ? 1 : 2;
        skip_blank_lines();
        std::uint32_t node = add(Kind::sequence, m_line, column());
        std::size_t mark = m_stack.size();
        while (m_pos < p.end && indent_here() == split.indent && at_sequence_dash())
            sequence_item(split.indent);
        if (m_pos != p.end)
            throw Unsupported{};
        set_children(node, mark);
        return node;
    }

  private:
    YamlDoc& m_doc;
    std::string_view m_s;
    std::vector<std::uint32_t> m_stack; // children of the collections being parsed
    int m_depth = 0;

    struct Nest {
        FastParser& p;
        explicit Nest(FastParser& parser) : p(parser) {
            if (++p.m_depth > k_max_depth)
                throw YamlError("nesting deeper than " + std::to_string(k_max_depth) + " levels",
                                static_cast<int>(p.m_line), static_cast<int>(p.column()));
        }
        ~Nest() { --p.m_depth; }
        Nest(const Nest&) = delete;
        Nest& operator=(const Nest&) = delete;
    };
    std::size_t m_pos = 0;
    std::uint32_t m_line = 1;
    std::size_t m_line_start = 0;

    bool at_end() const { return m_pos >= m_s.size(); }
    char peek(std::size_t ahead = 0) const {
        return m_pos + ahead < m_s.size() ? m_s[m_pos + ahead] : '\0';
    }
    bool starts_with(std::string_view p) const { return m_s.substr(m_pos, p.size()) == p; }
    std::uint32_t column() const { return static_cast<std::uint32_t>(m_pos - m_line_start + 1); }
    int indent_here() const { return static_cast<int>(m_pos - m_line_start); }

    void newline() {
        ++m_pos;
        ++m_line;
        m_line_start = m_pos;
    }
    void skip_spaces() {
        while (peek() == ' ')
            ++m_pos;
        if (peek() == '\t')
            throw Unsupported{};
    }
    // After a value: only spaces and a comment may follow on the line.
    void skip_rest_of_line() {
        skip_spaces();
        if (peek() == '#')
            while (!at_end() && peek() != '\n')
                ++m_pos;
        if (peek() == '\r')
            ++m_pos;
        if (!at_end() && peek() != '\n')
            throw Unsupported{};
        if (!at_end())
            newline();
    }
    // Moves to the first content character of the next non-blank, non-comment line.
    void skip_blank_lines() {
        for (;;) {
            std::size_t save = m_pos;
            skip_spaces();
            if (peek() == '#' || peek() == '\n' || peek() == '\r') {
                while (!at_end() && peek() != '\n')
                    ++m_pos;
                if (at_end())
                    return;
                newline();
                continue;
            }
            if (at_end())
                return;
            (void)save;
            return;
        }
    }

    std::uint32_t add(Kind kind, std::uint32_t line, std::uint32_t col,
                      std::string_view text = {}) {
        return add_node(m_doc, kind, line, col, text);
    }
    std::uint32_t add_scalar_null() { return add(Kind::null, m_line, column()); }
    // Moves the children pushed since `mark` from the stack to the node's contiguous range.
    void set_children(std::uint32_t node, std::size_t mark) {
        m_doc.m_nodes[node].first = static_cast<std::uint32_t>(m_doc.m_children.size());
        m_doc.m_nodes[node].size = static_cast<std::uint32_t>(m_stack.size() - mark);
        m_doc.m_children.insert(m_doc.m_children.end(),
                                m_stack.begin() + static_cast<std::ptrdiff_t>(mark), m_stack.end());
        m_stack.resize(mark);
    }

    // "- " (or "-" at the end of a line): a block sequence entry.
    bool at_sequence_dash() const { return !at_end() && dash_at(m_s, m_pos); }

    // The end of a block collection: nothing more indented may follow it.
    std::uint32_t close_block(std::uint32_t node, std::size_t mark, int indent) {
        if (!at_end() && indent_here() > indent)
            throw Unsupported{};
        set_children(node, mark);
        return node;
    }

    static bool is_unsupported_start(char c) {
        return c == '&' || c == '*' || c == '!' || c == '|' || c == '>' || c == '?' || c == '%' ||
               c == '@' || c == '`';
    }

    // A node in block context at the current position (first content of a line).
    std::uint32_t block_node(int parent_indent) {
        Nest nest(*this);
        int indent = indent_here();
        if (indent <= parent_indent)
            return add_scalar_null();
        if (at_sequence_dash())
            return block_sequence(indent);
        if (looks_like_key())
            return block_map(indent);
        std::uint32_t n = inline_value(false);
        skip_rest_of_line();
        return n;
    }

    // Is there "key:" (followed by space or end of line) at the current position?
    bool looks_like_key() {
        std::size_t save = m_pos;
        std::uint32_t line = m_line;
        std::size_t ls = m_line_start;
        bool ok = false;
        try {
            if (peek() == '"' || peek() == '\'') {
                quoted();
                skip_spaces();
                ok = peek() == ':';
            } else if (peek() != '{' && peek() != '[') {
                while (!at_end() && peek() != '\n' &&
                       !(peek() == ':' && (peek(1) == ' ' || peek(1) == '\n' || peek(1) == '\r' ||
                                           m_pos + 1 == m_s.size())))
                    if (peek() == '#' && m_pos > 0 && m_s[m_pos - 1] == ' ')
                        break;
                    else
                        ++m_pos;
                ok = peek() == ':';
            }
        } catch (const Unsupported&) {
            ok = false;
        }
        m_pos = save;
        m_line = line;
        m_line_start = ls;
        return ok;
    }

    std::uint32_t block_sequence(int indent) {
        std::uint32_t node = add(Kind::sequence, m_line, column());
        std::size_t mark = m_stack.size();
        while (!at_end() && indent_here() == indent && at_sequence_dash())
            sequence_item(indent);
        return close_block(node, mark, indent);
    }

    // One "- item" of a block sequence, from its dash to the next content.
    void sequence_item(int indent) {
        ++m_pos;
        skip_spaces();
        if (peek() == '#' || peek() == '\n' || peek() == '\r' || at_end()) {
            skip_rest_of_line();
            skip_blank_lines();
            m_stack.push_back(at_end() ? add_scalar_null() : block_node(indent));
        } else {
            // "- key: value" starts a mapping whose indent is this column.
            m_stack.push_back(block_node(indent));
        }
        skip_blank_lines();
    }

    std::uint32_t block_map(int indent) {
        std::uint32_t node = add(Kind::map, m_line, column());
        std::size_t mark = m_stack.size();
        while (!at_end() && indent_here() == indent) {
            if (at_sequence_dash())
                throw Unsupported{};
            std::uint32_t key = peek() == '"' || peek() == '\'' ? quoted() : plain(false, true);
            skip_spaces();
            if (peek() != ':')
                throw Unsupported{};
            ++m_pos;
            if (!(peek() == ' ' || peek() == '\n' || peek() == '\r' || at_end()))
                throw Unsupported{};
            skip_spaces();
            std::uint32_t value;
            if (peek() == '#' || peek() == '\n' || peek() == '\r' || at_end()) {
                std::uint32_t vline = m_line, vcol = column();
                skip_rest_of_line();
                skip_blank_lines();
                bool same_indent_seq = !at_end() && indent_here() == indent && at_sequence_dash();
                if (!at_end() && (indent_here() > indent || same_indent_seq))
                    value = same_indent_seq ? block_sequence(indent) : block_node(indent);
                else
                    value = add(Kind::null, vline, vcol);
            } else {
                value = inline_value(false);
                skip_rest_of_line();
                skip_blank_lines();
                if (!at_end() && indent_here() > indent)
                    throw Unsupported{}; // a multi-line plain scalar
            }
            m_stack.push_back(key);
            m_stack.push_back(value);
            skip_blank_lines();
        }
        return close_block(node, mark, indent);
    }

    std::uint32_t inline_value(bool in_flow) {
        char c = peek();
        if (is_unsupported_start(c))
            throw Unsupported{};
        if (c == '{')
            return flow_map();
        if (c == '[')
            return flow_sequence();
        if (c == '"' || c == '\'')
            return quoted();
        return plain(in_flow, false);
    }

    // Characters that can end a plain scalar; everything else is skipped in a tight loop.
    static bool is_stop(char c) {
        static constexpr auto k_stop = [] {
            std::array<bool, 256> t{};
            for (char x : std::string_view("\n\r#:,}]{["))
                t[static_cast<unsigned char>(x)] = true;
            return t;
        }();
        return k_stop[static_cast<unsigned char>(c)];
    }

    // A plain scalar; `as_key` stops at ": ".
    std::uint32_t plain(bool in_flow, bool as_key) {
        std::uint32_t line = m_line, col = column();
        std::size_t start = m_pos;
        const std::size_t size = m_s.size();
        while (!at_end()) {
            // In a local: the text is chars, which may alias m_pos, so the member would be
            // stored on every byte.
            std::size_t pos = m_pos;
            while (pos < size && !is_stop(m_s[pos]))
                ++pos;
            m_pos = pos;
            if (at_end())
                break;
            char c = peek();
            if (c == '\n' || c == '\r')
                break;
            if (c == '#' && m_pos > start && m_s[m_pos - 1] == ' ')
                break;
            if (c == ':' &&
                (peek(1) == ' ' || peek(1) == '\n' || peek(1) == '\r' || m_pos + 1 == m_s.size() ||
                 (in_flow && (peek(1) == ',' || peek(1) == '}' || peek(1) == ']')))) {
                if (as_key || in_flow)
                    break;
                throw Unsupported{}; // "a: b: c"
            }
            if (in_flow && (c == ',' || c == '}' || c == ']' || c == '{' || c == '['))
                break;
            ++m_pos;
        }
        std::size_t end = m_pos;
        while (end > start && m_s[end - 1] == ' ')
            --end;
        std::string_view text = m_s.substr(start, end - start);
        if (text == "~" || text == "null" || text == "Null" || text == "NULL" || text.empty())
            return add(Kind::null, line, col);
        return add(Kind::scalar, line, col, text);
    }

    std::uint32_t quoted() {
        std::uint32_t line = m_line, col = column();
        char q = peek();
        ++m_pos;
        std::string out;
        for (;;) {
            if (at_end() || peek() == '\n')
                throw Unsupported{}; // unterminated, or a multi-line quoted scalar
            char c = peek();
            if (c == q) {
                if (q == '\'' && peek(1) == '\'') {
                    out += '\'';
                    m_pos += 2;
                    continue;
                }
                ++m_pos;
                break;
            }
            if (q == '"' && c == '\\') {
                char e = peek(1);
                m_pos += 2;
                switch (e) {
                case '"':
                    out += '"';
                    break;
                case '\\':
                    out += '\\';
                    break;
                case '/':
                    out += '/';
                    break;
                case 'n':
                    out += '\n';
                    break;
                case 't':
                    out += '\t';
                    break;
                case 'r':
                    out += '\r';
                    break;
                case '0':
                    out += '\0';
                    break;
                default:
                    throw Unsupported{};
                }
                continue;
            }
            out += c;
            ++m_pos;
        }
        m_doc.m_owned->push_back(std::move(out));
        return add(Kind::scalar, line, col, m_doc.m_owned->back());
    }

    // Whitespace, newlines and comments inside flow collections.
    void skip_flow_space() {
        for (;;) {
            char c = peek();
            if (c == ' ' || c == '\r')
                ++m_pos;
            else if (c == '\n')
                newline();
            else if (c == '#')
                while (!at_end() && peek() != '\n')
                    ++m_pos;
            else if (c == '\t')
                throw Unsupported{};
            else
                return;
        }
    }

    // After an item of a flow collection: a ',' and the next item, or the closing bracket.
    void after_flow_item(char close) {
        skip_flow_space();
        if (peek() == ',') {
            ++m_pos;
            skip_flow_space();
        } else if (peek() != close) {
            throw Unsupported{};
        }
    }

    std::uint32_t flow_map() {
        Nest nest(*this);
        std::uint32_t node = add(Kind::map, m_line, column());
        ++m_pos;
        std::size_t mark = m_stack.size();
        skip_flow_space();
        while (peek() != '}') {
            if (at_end())
                throw Unsupported{};
            std::uint32_t key = peek() == '"' || peek() == '\'' ? quoted() : plain(true, true);
            skip_flow_space();
            if (peek() != ':')
                throw Unsupported{};
            ++m_pos;
            skip_flow_space();
            std::uint32_t value =
                peek() == ',' || peek() == '}' ? add_scalar_null() : inline_value(true);
            m_stack.push_back(key);
            m_stack.push_back(value);
            after_flow_item('}');
        }
        ++m_pos;
        set_children(node, mark);
        return node;
    }

    std::uint32_t flow_sequence() {
        Nest nest(*this);
        std::uint32_t node = add(Kind::sequence, m_line, column());
        ++m_pos;
        std::size_t mark = m_stack.size();
        skip_flow_space();
        while (peek() != ']') {
            if (at_end())
                throw Unsupported{};
            m_stack.push_back(inline_value(true));
            after_flow_item(']');
        }
        ++m_pos;
        set_children(node, mark);
        return node;
    }
};

// ---- yaml-cpp -----------------------------------------------------------------------------------

// Block collections nest by indentation alone, which the bracket count before yaml-cpp does
// not see: the depth is bounded here too, before the recursion can exhaust the stack.
std::uint32_t convert(YamlDoc& doc, const YAML::Node& n, int depth = 1) {
    auto mark = n.Mark();
    auto line = static_cast<std::uint32_t>(mark.line + 1);
    auto col = static_cast<std::uint32_t>(mark.column + 1);
    if (depth > k_max_depth)
        throw YamlError("nesting deeper than " + std::to_string(k_max_depth) + " levels",
                        static_cast<int>(line), static_cast<int>(col));
    auto add = [&](Kind kind, std::string_view text) {
        return add_node(doc, kind, line, col, text);
    };
    if (n.IsScalar()) {
        doc.m_owned->push_back(n.Scalar());
        return add(Kind::scalar, doc.m_owned->back());
    }
    if (!n.IsMap() && !n.IsSequence())
        return add(Kind::null, {});
    std::uint32_t node = add(n.IsMap() ? Kind::map : Kind::sequence, {});
    std::vector<std::uint32_t> kids;
    for (const auto& item : n) {
        if (n.IsMap()) {
            kids.push_back(convert(doc, item.first, depth + 1));
            kids.push_back(convert(doc, item.second, depth + 1));
        } else {
            kids.push_back(convert(doc, item, depth + 1));
        }
    }
    doc.m_nodes[node].first = static_cast<std::uint32_t>(doc.m_children.size());
    doc.m_nodes[node].size = static_cast<std::uint32_t>(kids.size());
    doc.m_children.insert(doc.m_children.end(), kids.begin(), kids.end());
    return node;
}

YamlDoc fresh(support::SharedText text) {
    YamlDoc doc;
    doc.m_text = std::move(text);
    doc.m_owned = std::make_shared<std::deque<std::string>>();
    return doc;
}

} // namespace

YamlDoc YamlDoc::parse_with_yaml_cpp(std::string text) {
    // yaml-cpp recurses once per nesting level: bound the depth before it sees the text.
    int depth = 0;
    int line = 1;
    for (char c : text) {
        if (c == '\n')
            ++line;
        else if (c == '[' || c == '{')
            ++depth;
        else if ((c == ']' || c == '}') && depth > 0)
            --depth;
        if (depth > k_max_depth)
            throw YamlError("nesting deeper than " + std::to_string(k_max_depth) + " levels", line,
                            1);
    }
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::DeepRecursion& e) { // its own message says only "bad file"
        throw YamlError("nesting deeper than yaml-cpp reads (" + std::to_string(e.depth()) +
                            " levels)",
                        e.mark.line + 1, e.mark.column + 1);
    } catch (const YAML::Exception& e) {
        throw YamlError(e.msg, e.mark.line + 1, e.mark.column + 1);
    }
    YamlDoc doc = fresh(support::share_text(std::move(text)));
    doc.m_fast = false;
    doc.m_root = convert(doc, root);
    return doc;
}

YamlDoc YamlDoc::parse(std::string text) {
    return parse(support::share_text(std::move(text)));
}

YamlDoc YamlDoc::parse(support::SharedText text) {
    YamlDoc doc = fresh(std::move(text));
    try {
        FastParser p(doc, doc.m_text->size());
        doc.m_root = p.document();
        return doc;
    } catch (const Unsupported&) {
        return parse_with_yaml_cpp(std::string(*doc.m_text));
    }
}

namespace {

// `key:` at `ls`, then only spaces and perhaps a comment to the end of the line `le`.
bool key_line_at(std::string_view s, std::size_t ls, std::size_t le, std::string_view key) {
    if (le - ls <= key.size() || s.substr(ls, key.size()) != key || s[ls + key.size()] != ':')
        return false;
    std::size_t i = ls + key.size() + 1;
    while (i < le && s[i] == ' ')
        ++i;
    return i == le || s[i] == '#' || (s[i] == '\r' && i + 1 == le);
}

} // namespace

std::optional<YamlDoc::Split> YamlDoc::split(support::SharedText text, std::string_view key,
                                             std::size_t piece_bytes) {
    const std::string_view s = *text;
    auto line_end = [&](std::size_t from) {
        const void* nl = std::memchr(s.data() + from, '\n', s.size() - from);
        return nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - s.data()) : s.size();
    };
    Split split;
    // The key's line: the first line that is `key:` alone at column 0.
    std::size_t ls = 0;
    std::uint32_t line = 1;
    for (;; ++line) {
        if (ls >= s.size())
            return std::nullopt;
        std::size_t le = line_end(ls);
        bool found = key_line_at(s, ls, le, key);
        ls = le + 1;
        if (found)
            break;
    }
    split.key_line = line++;
    const std::size_t region = std::min(ls, s.size());
    const std::uint32_t region_line = line;
    // The sequence: from the first content line (an item's dash) to the first content line at
    // column 0 that is not an item; pieces start at items of about piece_bytes apart.
    std::size_t end = s.size();
    std::uint32_t end_line = 0;
    bool first = true;
    for (ls = region; ls < s.size(); ls = line_end(ls) + 1, ++line) {
        std::size_t i = ls;
        while (i < s.size() && s[i] == ' ')
            ++i;
        if (i == s.size() || s[i] == '\n' || s[i] == '\r' || s[i] == '#')
            continue; // blank or comment: skipped by the parser
        int column = static_cast<int>(i - ls);
        if (first) {
            if (!dash_at(s, i))
                return std::nullopt;
            split.indent = column;
            split.pieces.push_back({region, 0, region_line, region, 1});
            first = false;
        } else if (column == 0 && !(split.indent == 0 && dash_at(s, i))) {
            end = ls;
            end_line = line;
            break;
        } else if (column == split.indent && dash_at(s, i)) {
            if (i - split.pieces.back().begin >= piece_bytes) {
                split.pieces.back().end = i;
                split.pieces.push_back({i, 0, line, ls, 0});
            }
            ++split.pieces.back().items;
        }
    }
    if (first)
        return std::nullopt;
    if (end == s.size())
        end_line = line;
    split.pieces.back().end = end;

    // The rest: the sequence's lines become empty lines, so every position after it stays.
    std::string rest;
    rest.reserve(region + (end_line - region_line) + (s.size() - end));
    rest.append(s, 0, region);
    rest.append(end_line - region_line, '\n');
    rest.append(s, end, std::string::npos);
    try {
        split.rest = parse(std::move(rest));
    } catch (const YamlError&) {
        return std::nullopt; // parsing the whole document reports it
    }
    Node root = split.rest.root();
    if (!split.rest.fast_path() || !root.is_map())
        return std::nullopt;
    bool key_found = false;
    for (std::size_t k = 0; k < root.size() && !key_found; ++k)
        key_found = root.key(k).scalar() == key &&
                    root.key(k).line() == static_cast<int>(split.key_line) &&
                    root.key(k).column() == 1 && root.value(k).is_null();
    if (!key_found)
        return std::nullopt;
    split.text = std::move(text);
    return split;
}

bool YamlDoc::parse_piece(const Split& split, std::size_t i, YamlDoc& out) {
    out.m_text = split.text;
    if (out.m_owned)
        out.m_owned->clear();
    else
        out.m_owned = std::make_shared<std::deque<std::string>>();
    out.m_nodes.clear();
    out.m_children.clear();
    out.m_fast = true;
    const auto& p = split.pieces.at(i);
    try {
        FastParser parser(out, p.end - p.begin);
        out.m_root = parser.piece(split, i);
        return true;
    } catch (const Unsupported&) {
        return false;
    } catch (const YamlError&) {
        return false;
    }
}

} // namespace skforge::graph
