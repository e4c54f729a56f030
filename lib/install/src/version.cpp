// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/version.hpp"

#include <cctype>

namespace skforge::install {

namespace {

// dpkg's character order for the non-digit parts: '~' first (before the end), then the end,
// then letters, then everything else.
int order(char c) {
    if (std::isdigit(static_cast<unsigned char>(c)))
        return 0;
    if (std::isalpha(static_cast<unsigned char>(c)))
        return c;
    if (c == '~')
        return -1;
    return c == '\0' ? 0 : c + 256;
}

char at(std::string_view s, std::size_t i) {
    return i < s.size() ? s[i] : '\0';
}

bool is_digit(char c) {
    return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// One part (upstream or revision): alternating runs of non-digits and digits.
int compare_part(std::string_view a, std::string_view b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() || j < b.size()) {
        while ((i < a.size() && !is_digit(a[i])) || (j < b.size() && !is_digit(b[j]))) {
            int ca = order(at(a, i)), cb = order(at(b, j));
            if (ca != cb)
                return ca - cb;
            ++i;
            ++j;
        }
        while (at(a, i) == '0')
            ++i;
        while (at(b, j) == '0')
            ++j;
        int first_diff = 0;
        while (is_digit(at(a, i)) && is_digit(at(b, j))) {
            if (first_diff == 0)
                first_diff = a[i] - b[j];
            ++i;
            ++j;
        }
        if (is_digit(at(a, i)))
            return 1;
        if (is_digit(at(b, j)))
            return -1;
        if (first_diff != 0)
            return first_diff;
    }
    return 0;
}

struct Parts {
    long epoch = 0;
    std::string_view upstream;
    std::string_view revision;
};

Parts split(std::string_view v) {
    Parts p;
    if (auto colon = v.find(':'); colon != std::string_view::npos) {
        for (char c : v.substr(0, colon))
            p.epoch = is_digit(c) ? p.epoch * 10 + (c - '0') : p.epoch;
        v.remove_prefix(colon + 1);
    }
    auto dash = v.rfind('-');
    p.upstream = dash == std::string_view::npos ? v : v.substr(0, dash);
    p.revision = dash == std::string_view::npos ? std::string_view() : v.substr(dash + 1);
    return p;
}

int sign(int v) {
    return (v > 0) - (v < 0);
}

} // namespace

int compare_versions(std::string_view a, std::string_view b) {
    Parts pa = split(a), pb = split(b);
    if (pa.epoch != pb.epoch)
        return pa.epoch < pb.epoch ? -1 : 1;
    if (int c = compare_part(pa.upstream, pb.upstream))
        return sign(c);
    return sign(compare_part(pa.revision, pb.revision));
}

} // namespace skforge::install
