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
/// thousands of them): open addressing with linear probing in one flat array, so building and
/// probing allocate nothing per entry. The viewed strings must outlive the map.
template <typename V> class StringMap {
  public:
    /// Room for `n` entries without growing.
    void reserve(std::size_t n) {
        std::size_t want = std::bit_ceil(std::max<std::size_t>(16, n * 2));
        if (want > m_slots.size())
            rehash(want);
    }

    /// The value of `key`, or nullptr.
    V* find(std::string_view key) {
        if (m_slots.empty())
            return nullptr;
        std::uint64_t h = hash(key);
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            Slot& s = m_slots[i];
            if (!s.used)
                return nullptr;
            if (s.hash == h && s.key == key)
                return &s.value;
        }
    }
    const V* find(std::string_view key) const { return const_cast<StringMap*>(this)->find(key); }

    /// Inserts `key` with `value` unless present; returns the entry and whether it was inserted.
    std::pair<V*, bool> emplace(std::string_view key, V value) {
        if ((m_size + 1) * 2 > m_slots.size())
            rehash(std::max<std::size_t>(16, m_slots.size() * 2));
        std::uint64_t h = hash(key);
        for (std::size_t i = h & m_mask;; i = (i + 1) & m_mask) {
            Slot& s = m_slots[i];
            if (!s.used) {
                s = Slot{h, key, std::move(value), true};
                ++m_size;
                return {&s.value, true};
            }
            if (s.hash == h && s.key == key)
                return {&s.value, false};
        }
    }

    /// The value of `key`, inserted as V{} when missing.
    V& operator[](std::string_view key) { return *emplace(key, V{}).first; }

    std::size_t size() const { return m_size; }

  private:
    struct Slot {
        std::uint64_t hash = 0;
        std::string_view key;
        V value{};
        bool used = false;
    };

    static std::uint64_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

    void rehash(std::size_t capacity) {
        std::vector<Slot> old = std::move(m_slots);
        m_slots.assign(capacity, Slot{});
        m_mask = capacity - 1;
        m_size = 0;
        for (auto& s : old)
            if (s.used) {
                std::size_t i = s.hash & m_mask;
                while (m_slots[i].used)
                    i = (i + 1) & m_mask;
                m_slots[i] = std::move(s);
                ++m_size;
            }
    }

    std::vector<Slot> m_slots;
    std::size_t m_mask = 0;
    std::size_t m_size = 0;
};

} // namespace skforge::support
