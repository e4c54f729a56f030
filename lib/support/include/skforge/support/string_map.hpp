// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

namespace skforge::support {

/// A hash map from string views to small values, for indexes over a graph's names (hundreds of
/// thousands of them): open addressing with linear probing over a table of 8-byte slots (part of
/// the hash and the entry's number), the keys and values in insertion order beside it. Building
/// and probing allocate nothing per entry, and the table stays small enough to be cheap to
/// create and to walk. The viewed strings must outlive the map; pointers to values are valid
/// until the next insertion.
template <typename V> class StringMap {
  public:
    /// Room for `n` entries without growing.
    void reserve(std::size_t n) {
        std::size_t want = std::bit_ceil(std::max<std::size_t>(16, n * 2));
        if (want > m_slots.size())
            rehash(want);
        m_keys.reserve(n);
        m_values.reserve(n);
    }

    /// The value of `key`, or nullptr.
    V* find(std::string_view key) {
        if (m_slots.empty())
            return nullptr;
        std::uint64_t h = hash(key);
        auto tag = static_cast<std::uint32_t>(h >> 32);
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            const Slot& s = m_slots[i];
            if (s.entry == 0)
                return nullptr;
            if (s.tag == tag && m_keys[s.entry - 1] == key)
                return &m_values[s.entry - 1];
        }
    }
    const V* find(std::string_view key) const { return const_cast<StringMap*>(this)->find(key); }

    /// Inserts `key` with `value` unless present; returns the entry and whether it was inserted.
    std::pair<V*, bool> emplace(std::string_view key, V value) {
        if ((m_keys.size() + 1) * 2 > m_slots.size())
            rehash(std::max<std::size_t>(16, m_slots.size() * 2));
        std::uint64_t h = hash(key);
        auto tag = static_cast<std::uint32_t>(h >> 32);
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            Slot& s = m_slots[i];
            if (s.entry == 0) {
                m_keys.push_back(key);
                m_values.push_back(std::move(value));
                s = Slot{tag, static_cast<std::uint32_t>(m_keys.size())};
                return {&m_values.back(), true};
            }
            if (s.tag == tag && m_keys[s.entry - 1] == key)
                return {&m_values[s.entry - 1], false};
        }
    }

    /// The value of `key`, inserted as V{} when missing.
    V& operator[](std::string_view key) { return *emplace(key, V{}).first; }

    std::size_t size() const { return m_keys.size(); }

  private:
    struct Slot {
        std::uint32_t tag = 0;   ///< the hash's upper half
        std::uint32_t entry = 0; ///< 1 + index into m_keys and m_values; 0: empty
    };

    static std::uint64_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

    void rehash(std::size_t capacity) {
        m_slots.assign(capacity, Slot{});
        m_mask = capacity - 1;
        for (std::size_t e = 0; e < m_keys.size(); ++e) {
            std::uint64_t h = hash(m_keys[e]);
            std::size_t i = h & m_mask;
            while (m_slots[i].entry != 0)
                i = (i + 1) & m_mask;
            m_slots[i] =
                Slot{static_cast<std::uint32_t>(h >> 32), static_cast<std::uint32_t>(e + 1)};
        }
    }

    std::vector<Slot> m_slots;
    std::vector<std::string_view> m_keys;
    std::vector<V> m_values;
    std::size_t m_mask = 0;
};

} // namespace skforge::support
