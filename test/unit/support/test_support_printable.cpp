// SPDX-License-Identifier: Apache-2.0
#include "skforge/support/printable.hpp"

#include <catch2/catch.hpp>

using namespace skforge::support;

TEST_CASE("printable: controls and invalid UTF-8 become '?', the rest stays",
          "[support][printable]") {
    CHECK(printable("plain k1-1.0_x+y") == "plain k1-1.0_x+y");
    CHECK(printable("\x1b]0;title\x07\x1b[2J") == "?]0;title??[2J"); // window title, clear
    CHECK(printable(std::string("a\0b", 3)) == "a?b");
    CHECK(printable("del\x7f") == "del?");
    CHECK(printable("csi\xc2\x9b"
                    "31m") == "csi?31m"); // U+009B, a C1 escape introducer
    CHECK(printable("raw\x9b"
                    "31m") == "raw?31m"); // the same as a lone byte
    CHECK(printable("bad \xff\xfe \xc0\xaf \xed\xa0\x80 \xe2\x82") == "bad ?? ?? ??? ??");
    CHECK(printable("\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x99\x82") ==
          "\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x99\x82");
}

TEST_CASE("printable: line breaks only where a message may have several lines",
          "[support][printable]") {
    CHECK(printable("a\nb\tc\r") == "a?b?c?");
    CHECK(printable("a\nb\tc\r", Lines::keep) == "a\nb\tc?");
}

TEST_CASE("utf8_sequence: lengths and code points of valid sequences only",
          "[support][printable]") {
    std::uint32_t cp = 0;
    CHECK(utf8_sequence("A", 0, cp) == 1);
    CHECK(cp == 'A');
    CHECK(utf8_sequence("\xc3\xa9", 0, cp) == 2);
    CHECK(cp == 0xe9);
    CHECK(utf8_sequence("\xf4\x8f\xbf\xbf", 0, cp) == 4);
    CHECK(cp == 0x10ffff);
    CHECK(utf8_sequence("\xf4\x90\x80\x80", 0, cp) == 0); // past U+10FFFF
    CHECK(utf8_sequence("\xe0\x80\xaf", 0, cp) == 0);     // overlong
    CHECK(utf8_sequence("\x80", 0, cp) == 0);             // a continuation byte
    CHECK(utf8_sequence("x\xe2\x82", 1, cp) == 0);        // truncated
}
