// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>

#include <sys/mman.h>

namespace skforge::support {

namespace detail {

// madvise(advice) over the part of [p, p + bytes) aligned to `unit` bytes; errors are ignored
// (the advice is a hint).
inline void advise_aligned(void* p, std::size_t bytes, std::uintptr_t unit, int advice) {
    auto begin = (reinterpret_cast<std::uintptr_t>(p) + unit - 1) & ~(unit - 1);
    auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(unit - 1);
    if (end > begin)
        (void)::madvise(reinterpret_cast<void*>(begin), end - begin, advice);
}

} // namespace detail

/// Asks the kernel to back the whole pages inside [p, p + bytes) with memory now, in one call,
/// instead of one page fault at a time as they are first written (each fault costs microseconds:
/// a fifth of the time of reading a large graph). Only a hint: the contents do not change, and
/// on a kernel without MADV_POPULATE_WRITE (before Linux 5.14) nothing happens.
inline void prefault(void* p, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    detail::advise_aligned(p, bytes, 4096, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

/// Asks the kernel to back the 2 MiB-aligned part of [p, p + bytes) with huge pages as it is
/// first written: one fault per 2 MiB instead of one per 4 KiB, for the largest arrays (a
/// graph's operators). Only a hint: without transparent huge pages nothing changes.
inline void advise_huge_pages(void* p, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
    detail::advise_aligned(p, bytes, std::uintptr_t{2} << 20, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

/// Asks for every cache line of `*p` ahead of use. For walks over large arrays of large
/// objects (a graph's operators are hundreds of bytes each): the hardware's own prefetch stops
/// at every page boundary, which such a walk crosses every few elements. `p` may be null (an
/// empty vector's data()): nothing is asked, and no arithmetic is done on the null pointer.
template <class T> inline void prefetch(const T* p) {
    if (p == nullptr)
        return;
    const char* bytes = reinterpret_cast<const char*>(p);
    for (std::size_t at = 0; at < sizeof(T); at += 64)
        __builtin_prefetch(bytes + at);
}

/// In a walk over `v` at element i, asks for the element a few places ahead, if there is one.
template <class V> inline void prefetch_ahead(const V& v, std::size_t i) {
    constexpr std::size_t ahead = 4;
    if (i + ahead < v.size())
        prefetch(&v[i + ahead]);
}

} // namespace skforge::support
