// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "skforge/support/file.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace skforge::graph {

/// A YAML syntax error with its 1-based position.
struct YamlError : std::runtime_error {
    YamlError(const std::string& what, int line_, int column_)
        : std::runtime_error(what), line(line_), column(column_) {}
    int line;
    int column;
};

/// A parsed YAML document: an immutable tree of maps, sequences and scalars with positions.
///
/// Graph files are large (a hundred thousand operators) and written in a plain subset of YAML, so
/// a fast parser reads that subset: block and flow mappings and sequences, plain and quoted
/// scalars, comments. A document using anything else (anchors, aliases, tags, block scalars,
/// multi-line plain scalars, complex keys, several documents) or that the fast parser rejects is
/// parsed again by yaml-cpp, which also produces the error message for invalid YAML.
class YamlDoc {
  public:
    /// One node of the tree (a cheap handle).
    class Node {
      public:
        /// What a node is.
        enum class Kind : std::uint8_t { null, scalar, sequence, map };
        bool is_null() const { return kind() == Kind::null; }
        bool is_scalar() const { return kind() == Kind::scalar; }
        bool is_map() const { return kind() == Kind::map; }
        bool is_sequence() const { return kind() == Kind::sequence; }
        /// The scalar's text (empty for other kinds).
        std::string_view scalar() const;
        /// 1-based line and column where the node starts.
        int line() const;
        int column() const;
        /// Entries of a sequence, or pairs of a map.
        std::size_t size() const;
        /// The i-th sequence item.
        Node item(std::size_t i) const;
        /// The i-th map key and value.
        Node key(std::size_t i) const;
        Node value(std::size_t i) const;
        /// The value for `key` in a map, or nullopt.
        std::optional<Node> find(std::string_view key) const;

      private:
        friend class YamlDoc;
        Node(const YamlDoc* doc, std::uint32_t index) : m_doc(doc), m_index(index) {}
        Kind kind() const;
        const YamlDoc* m_doc;
        std::uint32_t m_index;
    };

    /// Parses `text`; throws YamlError for invalid YAML.
    static YamlDoc parse(std::string text);
    /// The same, for text the caller shares (the tree points into it, without a copy).
    static YamlDoc parse(support::SharedText text);
    /// Parses with yaml-cpp only (for tests that compare the two paths).
    static YamlDoc parse_with_yaml_cpp(std::string text);

    struct Split;
    /// Cuts a large document for parsing on several threads: the block sequence under the
    /// top-level `key` (a graph's operators) is left out of the tree of the rest and divided into
    /// pieces of about `piece_bytes`, each parsed on its own by parse_piece. Returns nullopt when
    /// the document does not have that shape (the caller then uses parse); the split is only an
    /// offer, which parse_piece confirms piece by piece.
    static std::optional<Split> split(support::SharedText text, std::string_view key,
                                      std::size_t piece_bytes);
    /// Parses piece `i` of `split` into `out` (reusing its storage), whose root becomes a
    /// sequence of the piece's items. Returns false unless the piece parses with the fast parser
    /// exactly as it does inside the whole document and ends where the next one begins; the
    /// caller then parses the whole document with parse, which gives the same tree and the same
    /// errors as if no split had been tried.
    static bool parse_piece(const Split& split, std::size_t i, YamlDoc& out);

    /// The root node.
    Node root() const { return Node(this, m_root); }
    /// True when the fast parser read the document.
    bool fast_path() const { return m_fast; }

    /// Internal representation, public for the two parsers.
    struct Raw {
        std::uint32_t line;
        std::uint32_t column;
        union {
            const char* text;    ///< scalars
            std::uint32_t first; ///< collections: index into children
        };
        std::uint32_t size; ///< scalars: text length; collections: items, or 2 * pairs
        Node::Kind kind;
    };
    // Held through pointers so the string_views stay valid when the document is moved.
    support::SharedText m_text;
    std::shared_ptr<std::deque<std::string>> m_owned; ///< unescaped scalars
    std::vector<Raw> m_nodes;
    std::vector<std::uint32_t> m_children;
    std::uint32_t m_root = 0;
    bool m_fast = true;
};

// The node accessors, inline: the graph reader calls them a hundred times per operator.
inline YamlDoc::Node::Kind YamlDoc::Node::kind() const {
    return m_doc->m_nodes[m_index].kind;
}
inline std::string_view YamlDoc::Node::scalar() const {
    const auto& r = m_doc->m_nodes[m_index];
    return r.kind == Kind::scalar ? std::string_view(r.text, r.size) : std::string_view();
}
inline int YamlDoc::Node::line() const {
    return static_cast<int>(m_doc->m_nodes[m_index].line);
}
inline int YamlDoc::Node::column() const {
    return static_cast<int>(m_doc->m_nodes[m_index].column);
}
inline std::size_t YamlDoc::Node::size() const {
    const auto& r = m_doc->m_nodes[m_index];
    return r.kind == Kind::map ? r.size / 2 : r.kind == Kind::sequence ? r.size : 0;
}
inline YamlDoc::Node YamlDoc::Node::item(std::size_t i) const {
    return Node(m_doc, m_doc->m_children[m_doc->m_nodes[m_index].first + i]);
}
inline YamlDoc::Node YamlDoc::Node::key(std::size_t i) const {
    return Node(m_doc, m_doc->m_children[m_doc->m_nodes[m_index].first + 2 * i]);
}
inline YamlDoc::Node YamlDoc::Node::value(std::size_t i) const {
    return Node(m_doc, m_doc->m_children[m_doc->m_nodes[m_index].first + 2 * i + 1]);
}

/// A document cut by YamlDoc::split.
struct YamlDoc::Split {
    /// One piece: consecutive items of the sequence.
    struct Piece {
        std::size_t begin;      ///< first byte (the first piece: the line after the key's)
        std::size_t end;        ///< where the next piece, or what follows the sequence, begins
        std::uint32_t line;     ///< 1-based line of `begin`
        std::size_t line_start; ///< offset of that line's first byte
        std::size_t items = 0;  ///< lines that start an item (the items, if the piece parses)
    };
    YamlDoc rest; ///< the document with the sequence's lines left blank: the key maps to null
    std::uint32_t key_line = 0; ///< where the key is
    support::SharedText text;
    std::vector<Piece> pieces;
    int indent = 0; ///< the items' dash column, 0-based
};

} // namespace skforge::graph
