// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/stub.hpp"

#include "skforge/package/path_rules.hpp"
#include "skforge/package/template.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/hex.hpp"

#include <charconv>
#include <map>

namespace skforge::package {

using support::Error;

namespace {

constexpr std::size_t k_number_width = 20;
constexpr std::string_view k_header_end = "# end of header\n";

std::string padded(std::uint64_t value) {
    std::string s = std::to_string(value);
    s.resize(k_number_width, ' ');
    return s;
}

std::string hex_or_zeros(const std::string& digest) {
    return digest.empty() ? std::string(64, '0') : digest;
}

std::map<std::string, std::string> stub_values(const StubHeader& h) {
    return {{"FORMAT", std::to_string(h.format)},
            {"NAME", h.name},
            {"VERSION", h.version},
            {"NPU_ARCH", h.npu_arch},
            {"SOC_VERSION", h.soc_version},
            {"TOOLCHAIN", h.toolchain},
            {"COMPRESSION", std::string(compression_name(h.compression))},
            {"FILE_COUNT", padded(h.file_count)},
            {"UNPACKED_SIZE", padded(h.unpacked_size)},
            {"PAYLOAD_OFFSET", padded(h.payload_offset)},
            {"PAYLOAD_SIZE", padded(h.payload_size)},
            {"PAYLOAD_SHA256", hex_or_zeros(h.payload_sha256)},
            {"TRAILER_SIZE", padded(h.trailer_size)},
            {"INSTALL_SH_SHA256", hex_or_zeros(h.install_sh_sha256)},
            {"UNINSTALL_SH_SHA256", hex_or_zeros(h.uninstall_sh_sha256)}};
}

std::uint64_t parse_number(const std::string& value, const std::string& key,
                           const std::string& at) {
    std::uint64_t out = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
    if (ec != std::errc() || ptr != value.data() + value.size() || value.empty())
        throw Error(at + key + " is not a number: '" + value + "'");
    return out;
}

// "KEY=VALUE   " or "KEY='VALUE'" -> (KEY, VALUE); the quoted form allows no quote inside.
std::pair<std::string, std::string> split_line(std::string_view line, const std::string& at) {
    auto eq = line.find('=');
    if (eq == std::string_view::npos || line.substr(0, 4) != "SKF_")
        throw Error(at + "unexpected header line '" + std::string(line) + "'");
    std::string key(line.substr(4, eq - 4));
    std::string_view value = line.substr(eq + 1);
    if (!value.empty() && value.front() == '\'') {
        if (value.size() < 2 || value.back() != '\'' ||
            value.substr(1, value.size() - 2).find('\'') != std::string_view::npos)
            throw Error(at + "badly quoted value for SKF_" + key);
        return {key, std::string(value.substr(1, value.size() - 2))};
    }
    while (!value.empty() && value.back() == ' ')
        value.remove_suffix(1);
    return {key, std::string(value)};
}

} // namespace

std::string_view compression_name(Compression c) {
    return c == Compression::gzip ? "gzip" : "zstd";
}

std::string render_stub(StubHeader header) {
    header.payload_offset = stub_size(header);
    return render_template(templates::k_run_stub_sh, stub_values(header));
}

std::uint64_t stub_size(const StubHeader& header) {
    return render_template(templates::k_run_stub_sh, stub_values(header)).size();
}

StubHeader parse_stub(std::string_view head, std::string_view origin) {
    std::string at = std::string(origin) + ": not a skforge .run package: ";
    if (head.substr(0, 10) != "#!/bin/sh\n")
        throw Error(at + "it does not start with '#!/bin/sh'");
    auto end = head.find(k_header_end);
    auto begin = head.find("\nSKF_FORMAT=");
    if (end == std::string_view::npos || begin == std::string_view::npos || begin > end)
        throw Error(at + "no skforge header found in its first " +
                    std::to_string(k_max_header_bytes) + " bytes");
    std::map<std::string, std::string> kv;
    std::string_view body = head.substr(begin + 1, end - begin - 1);
    while (!body.empty()) {
        auto nl = body.find('\n');
        auto [key, value] = split_line(body.substr(0, nl), at);
        if (!kv.emplace(key, value).second)
            throw Error(at + "SKF_" + key + " appears twice");
        body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
    }
    auto get = [&](const char* key) {
        auto it = kv.find(key);
        if (it == kv.end())
            throw Error(at + "the header lacks SKF_" + key);
        return it->second;
    };
    StubHeader h;
    std::string bad = std::string(origin) + ": invalid .run header: ";
    h.format = static_cast<int>(parse_number(get("FORMAT"), "SKF_FORMAT", bad));
    if (h.format == 1)
        throw Error(bad + "format 1 packages carry install scripts that cannot be checked "
                          "against their templates (and a shell fallback with known flaws); "
                          "rebuild the package with this skforge");
    if (h.format != k_run_format)
        throw Error(bad + "format " + std::to_string(h.format) +
                    " is not supported (this skforge "
                    "reads format " +
                    std::to_string(k_run_format) + "); upgrade skforge");
    h.name = get("NAME");
    h.version = get("VERSION");
    h.npu_arch = get("NPU_ARCH");
    h.soc_version = get("SOC_VERSION");
    h.toolchain = get("TOOLCHAIN");
    auto comp = get("COMPRESSION");
    if (comp != "gzip" && comp != "zstd")
        throw Error(bad + "unknown compression '" + comp + "'");
    h.compression = comp == "gzip" ? Compression::gzip : Compression::zstd;
    h.file_count = parse_number(get("FILE_COUNT"), "SKF_FILE_COUNT", bad);
    h.unpacked_size = parse_number(get("UNPACKED_SIZE"), "SKF_UNPACKED_SIZE", bad);
    h.payload_offset = parse_number(get("PAYLOAD_OFFSET"), "SKF_PAYLOAD_OFFSET", bad);
    h.payload_size = parse_number(get("PAYLOAD_SIZE"), "SKF_PAYLOAD_SIZE", bad);
    h.payload_sha256 = get("PAYLOAD_SHA256");
    h.trailer_size = parse_number(get("TRAILER_SIZE"), "SKF_TRAILER_SIZE", bad);
    h.install_sh_sha256 = get("INSTALL_SH_SHA256");
    h.uninstall_sh_sha256 = get("UNINSTALL_SH_SHA256");
    if (auto why = check_package_name(h.name))
        throw Error(bad + "package name '" + h.name + "' " + *why);
    if (auto why = check_label(h.version, false))
        throw Error(bad + "version '" + h.version + "' " + *why);
    for (const auto* digest : {&h.payload_sha256, &h.install_sh_sha256, &h.uninstall_sh_sha256})
        if (!support::is_lower_hex(*digest, 64))
            throw Error(bad + "a SHA-256 field is not 64 lower-case hex digits");
    if (h.payload_offset < end + k_header_end.size() || h.payload_size > UINT64_MAX / 2 ||
        h.payload_offset > UINT64_MAX / 4 || h.trailer_size > 65536)
        throw Error(bad + "offsets or sizes are out of range");
    return h;
}

} // namespace skforge::package
