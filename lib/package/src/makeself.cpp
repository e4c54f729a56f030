// SPDX-License-Identifier: Apache-2.0
#include "skforge/package/makeself.hpp"

#include "skforge/package/generated.hpp"
#include "skforge/package/index_rules.hpp"
#include "skforge/package/manifest.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/hex.hpp"
#include "skforge/support/sha256.hpp"
#include "skforge/support/temp_dir.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <array>
#include <cerrno>
#include <charconv>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <memory>
#include <openssl/evp.h>
#include <regex>
#include <sys/stat.h>
#include <unistd.h>

namespace skforge::package {

using support::Error;
namespace fs = std::filesystem;

namespace {

constexpr std::string_view k_banner = "# This script was generated using Makeself ";
constexpr std::size_t k_max_header = 1u << 20; // makeself's own script is about 20 KiB
constexpr std::size_t k_max_entries = 1u << 20;

Error bad(const std::string& path, const std::string& why) {
    return Error("'" + path + "' " + why, support::ErrorKind::integrity);
}

// The archive opened once (support::open_regular: without blocking, refused unless regular),
// with its size; the header and the payload are read from this one handle.
support::UniqueFd open_input(const std::string& path, std::uint64_t& size) {
    auto fd = support::open_regular(path, {UINT64_MAX});
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        throw support::io_error("cannot stat", path, errno);
    size = static_cast<std::uint64_t>(st.st_size);
    return fd;
}

std::string read_head(int fd, std::uint64_t size, const std::string& path) {
    std::vector<std::uint8_t> head(
        static_cast<std::size_t>(std::min<std::uint64_t>(size, k_max_header)));
    head.resize(support::pread_full(fd, head, 0, path));
    return std::string(head.begin(), head.end());
}

// The header's NAME="VALUE" assignments at the start of a line (the first of each name).
std::map<std::string, std::string> assignments(std::string_view head) {
    static const std::regex k_line(R"(^([A-Za-z_][A-Za-z0-9_]*)="([^"\n]*)\"$)");
    std::map<std::string, std::string> out;
    std::size_t start = 0;
    while (start < head.size()) {
        std::size_t end = head.find('\n', start);
        if (end == std::string_view::npos)
            break;
        std::string line(head.substr(start, end - start));
        std::smatch m;
        if (line.size() < 4096 && std::regex_match(line, m, k_line))
            out.emplace(m[1], m[2]);
        start = end + 1;
    }
    return out;
}

std::uint64_t number(const std::string& path, const std::string& field, const std::string& text) {
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size() || text.empty())
        throw bad(path, "is not a makeself archive skforge reads: " + field + "=\"" + text +
                            "\" is not a number");
    return v;
}

// Bytes of the first `lines` lines of `head`.
std::uint64_t line_offset(const std::string& path, std::string_view head, std::uint64_t lines) {
    std::size_t at = 0;
    for (std::uint64_t i = 0; i < lines; ++i) {
        at = head.find('\n', at);
        if (at == std::string_view::npos)
            throw bad(path, "is not a makeself archive skforge reads: its header is longer than " +
                                std::to_string(k_max_header) + " bytes or cut short");
        ++at;
    }
    return at;
}

bool recorded(const std::string& digest) {
    return !digest.empty() && digest.find_first_not_of('0') != std::string::npos;
}

// POSIX cksum's CRC (polynomial 0x04C11DB7, the length appended, inverted).
class Cksum {
  public:
    void update(const std::uint8_t* p, std::size_t n) {
        for (std::size_t i = 0; i < n; ++i)
            byte(p[i]);
        m_length += n;
    }
    std::uint32_t finish() {
        for (std::uint64_t len = m_length; len != 0; len >>= 8)
            byte(static_cast<std::uint8_t>(len & 0xff));
        return ~m_crc;
    }

  private:
    void byte(std::uint8_t b) {
        m_crc ^= static_cast<std::uint32_t>(b) << 24;
        for (int k = 0; k < 8; ++k)
            m_crc = (m_crc & 0x80000000u) != 0 ? (m_crc << 1) ^ 0x04C11DB7u : m_crc << 1;
    }
    std::uint32_t m_crc = 0;
    std::uint64_t m_length = 0;
};

struct Md5 {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx{EVP_MD_CTX_new(), EVP_MD_CTX_free};
    Md5() { EVP_DigestInit_ex(ctx.get(), EVP_md5(), nullptr); }
    void update(const std::uint8_t* p, std::size_t n) { EVP_DigestUpdate(ctx.get(), p, n); }
    std::string finish() {
        std::uint8_t out[EVP_MAX_MD_SIZE];
        unsigned n = 0;
        EVP_DigestFinal_ex(ctx.get(), out, &n);
        return support::to_hex(std::span<const std::uint8_t>(out, n));
    }
};

// Every checksum the header records, over the payload.
void check_sums(int fd, const MakeselfHeader& h, const std::string& path) {
    if (!recorded(h.sha256) && !recorded(h.md5) && !h.crc)
        throw bad(path, "records no checksum of its payload (made with --nomd5 --nocrc): its "
                        "integrity cannot be checked");
    support::Sha256 sha;
    Md5 md5;
    Cksum crc;
    std::vector<std::uint8_t> buf(1u << 20);
    for (std::uint64_t at = h.offset, end = h.offset + h.size; at < end;) {
        std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), end - at));
        std::size_t n = support::pread_full(fd, std::span(buf.data(), want), at, path);
        if (n == 0)
            throw bad(path, "is cut short");
        sha.update(std::span<const std::uint8_t>(buf.data(), n));
        md5.update(buf.data(), n);
        crc.update(buf.data(), n);
        at += n;
    }
    auto mismatch = [&](const char* what, const std::string& want, const std::string& got) {
        return bad(path, std::string("payload ") + what + " mismatch: the header records " + want +
                             ", the payload has " + got +
                             "; the file is damaged or was changed: get the original again");
    };
    if (auto got = support::digest_hex(sha.finish()); recorded(h.sha256) && got != h.sha256)
        throw mismatch("SHA-256", h.sha256, got);
    if (auto got = md5.finish(); recorded(h.md5) && got != h.md5)
        throw mismatch("MD5", h.md5, got);
    if (auto got = crc.finish(); h.crc && got != *h.crc)
        throw mismatch("CRC", std::to_string(*h.crc), std::to_string(got));
}

struct Range {
    int fd;
    std::uint64_t at, end;
    std::vector<std::uint8_t> buf = std::vector<std::uint8_t>(1u << 20);
    const std::string* path;
};

la_ssize_t range_read(archive* a, void* client, const void** out) {
    auto* r = static_cast<Range*>(client);
    try {
        std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(r->buf.size(), r->end - r->at));
        std::size_t n =
            want == 0 ? 0
                      : support::pread_full(r->fd, std::span(r->buf.data(), want), r->at, *r->path);
        r->at += n;
        *out = r->buf.data();
        return static_cast<la_ssize_t>(n);
    } catch (const std::exception& e) {
        archive_set_error(a, EIO, "%s", e.what());
        return -1;
    }
}

// The entry's path without a leading "./", checked as a package path; "" for the root itself.
std::string entry_path(archive_entry* e, const std::string& path) {
    const char* raw = archive_entry_pathname(e);
    std::string p = raw == nullptr ? "" : raw;
    while (p.starts_with("./"))
        p.erase(0, 2);
    while (p.ends_with("/"))
        p.pop_back();
    if (p.empty() || p == ".")
        return "";
    if (auto why = check_entry_path(p))
        throw bad(path, "holds the entry '" + p + "', which " + *why);
    return p;
}

// Bytes the entries declare so far, and the most an archive may declare.
struct Unpacked {
    std::uint64_t total = 0;
    std::uint64_t limit = 0;
};

// A regular file's apparent size, counted against the limit before a byte is written: a sparse
// member's data blocks say nothing of the holes between them (457 bytes declared 1 TiB).
void count_entry(archive_entry* e, const std::string& rel, const std::string& path,
                 Unpacked& unpacked) {
    if (archive_entry_sparse_count(e) > 0)
        throw bad(path, "holds '" + rel + "', a sparse file of " +
                            std::to_string(archive_entry_size(e)) +
                            " bytes (mostly holes): skforge refuses sparse members; pack the "
                            "files without --sparse");
    la_int64_t size = archive_entry_size(e);
    if (!archive_entry_size_is_set(e) || size < 0)
        throw bad(path, "holds '" + rel + "', whose size is not recorded");
    unpacked.total += static_cast<std::uint64_t>(size);
    if (unpacked.total > unpacked.limit)
        throw bad(path, "unpacks to more than " + std::to_string(unpacked.limit) + " bytes (at '" +
                            rel + "')");
}

// The entry's data into `fd`. The blocks follow one another from 0 to the recorded size: a hole
// (a sparse map the entry did not declare) or a block past the end is refused.
void copy_data(archive* a, archive_entry* e, int fd, const std::string& target,
               const std::string& rel, const std::string& path) {
    const void* buf = nullptr;
    size_t size = 0;
    la_int64_t offset = 0;
    auto written = static_cast<std::uint64_t>(0);
    auto declared = static_cast<std::uint64_t>(archive_entry_size(e));
    for (;;) {
        int rc = archive_read_data_block(a, &buf, &size, &offset);
        if (rc == ARCHIVE_EOF)
            break;
        if (rc != ARCHIVE_OK)
            throw bad(path, "has a damaged payload at '" + rel + "': " + archive_error_string(a));
        if (offset < 0 || static_cast<std::uint64_t>(offset) != written ||
            size > declared - written)
            throw bad(path, "holds '" + rel +
                                "', whose data does not run whole from its start to "
                                "its recorded size (a sparse or damaged member)");
        if (::pwrite(fd, buf, size, offset) != static_cast<ssize_t>(size))
            throw support::io_error("cannot write", target, errno);
        written += size;
    }
    if (written != declared)
        throw bad(path, "holds '" + rel + "', whose data ends before its recorded size");
}

// The directory `dir` (for entry `rel`) and its parents in the scratch tree; an entry below one
// the archive made a file is refused.
void make_dirs(const std::string& dir, const std::string& rel, const std::string& path) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        throw bad(path, "holds '" + rel + "', which cannot be unpacked (" + ec.message() +
                            "): an earlier entry is a file on its path");
}

void write_entry(archive* a, archive_entry* e, const std::string& dest, const std::string& rel,
                 const std::string& path, Unpacked& unpacked) {
    std::string target = dest + "/" + rel;
    auto type = archive_entry_filetype(e);
    if (archive_entry_hardlink(e) != nullptr || (type != AE_IFREG && type != AE_IFDIR))
        throw bad(path, "holds '" + rel +
                            "', which is not a regular file or a directory (links and devices "
                            "are refused)");
    if (type == AE_IFDIR) {
        make_dirs(target, rel, path);
        return;
    }
    count_entry(e, rel, path, unpacked);
    make_dirs(fs::path(target).parent_path(), rel, path);
    mode_t mode = (archive_entry_perm(e) & 0111) != 0 ? 0755 : 0644;
    int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0 && (errno == EEXIST || errno == EISDIR || errno == ENOTDIR))
        throw bad(path, "holds '" + rel + "' more than once (a file where an entry already is)");
    if (fd < 0)
        throw support::io_error("cannot create", target, errno);
    support::UniqueFd out(fd);
    copy_data(a, e, fd, target, rel, path);
}

using ArchivePtr = std::unique_ptr<archive, decltype(&archive_read_free)>;

// A decompression libarchive's archive_read_support_filter_all enables, with the bytes its
// stream starts with (as libarchive's bidder for it looks for them; none for lzma, which it
// guesses from the header's fields, and for rpm and uu, which libarchive always decodes itself).
struct Filter {
    std::string_view name;
    int (*enable)(archive*);
    std::array<std::string_view, 2> magic;
};

using namespace std::string_view_literals;
constexpr Filter k_filters[] = {
    {"gzip", archive_read_support_filter_gzip, {"\x1f\x8b\x08"sv}},
    {"bzip2", archive_read_support_filter_bzip2, {"BZh"sv}},
    {"compress", archive_read_support_filter_compress, {"\x1f\x9d"sv}},
    {"xz", archive_read_support_filter_xz, {"\xfd\x37zXZ\0"sv}},
    {"lzma", archive_read_support_filter_lzma, {}},
    {"lzip", archive_read_support_filter_lzip, {"LZIP"sv}},
    {"lz4", archive_read_support_filter_lz4, {"\x04\x22\x4d\x18"sv, "\x02\x21\x4c\x18"sv}},
    {"zstd", archive_read_support_filter_zstd, {"\x28\xb5\x2f\xfd"sv}},
    {"lzop", archive_read_support_filter_lzop, {"\x89LZO\0"sv}},
    {"lrzip", archive_read_support_filter_lrzip, {"LRZI"sv}},
    {"grzip", archive_read_support_filter_grzip, {"GRZipII\0"sv}},
    {"rpm", archive_read_support_filter_rpm, {}},
    {"uu", archive_read_support_filter_uu, {}},
};

// Enables on `a` each filter libarchive decodes in-process and returns the others: enabling one
// returns ARCHIVE_WARN when libarchive would run an external program for it (lrzip and grzip
// always, lzop without liblzo2, the others without their library), and
// what is enabled cannot be taken back, so each is tried on a scratch handle first. A package is
// input: reading one never runs a program.
std::vector<const Filter*> enable_in_process_filters(archive* a) {
    std::vector<const Filter*> external;
    for (const auto& f : k_filters) {
        ArchivePtr scratch(archive_read_new(), archive_read_free);
        if (f.enable(scratch.get()) == ARCHIVE_OK && f.enable(a) == ARCHIVE_OK)
            continue;
        external.push_back(&f);
    }
    return external;
}

// The filter of `external` whose stream the payload's innermost stream (after the in-process
// filters) starts like, or null: read as raw data through a handle of its own.
const Filter* external_compression(int fd, const MakeselfHeader& h, const std::string& path,
                                   const std::vector<const Filter*>& external) {
    if (external.empty())
        return nullptr;
    ArchivePtr a(archive_read_new(), archive_read_free);
    enable_in_process_filters(a.get());
    archive_read_support_format_raw(a.get());
    Range r{fd, h.offset, h.offset + h.size, std::vector<std::uint8_t>(1u << 16), &path};
    archive_entry* e = nullptr;
    char head[16] = {};
    if (archive_read_open(a.get(), &r, nullptr, range_read, nullptr) != ARCHIVE_OK ||
        archive_read_next_header(a.get(), &e) != ARCHIVE_OK)
        return nullptr;
    la_ssize_t n = archive_read_data(a.get(), head, sizeof head);
    std::string_view start(head, n > 0 ? static_cast<std::size_t>(n) : 0);
    for (const Filter* f : external)
        for (std::string_view m : f->magic)
            if (!m.empty() && start.starts_with(m))
                return f;
    return nullptr;
}

// Why the payload cannot be read: its compression, when libarchive would decode it only with an
// external program, else libarchive's message.
Error unreadable(int fd, const MakeselfHeader& h, const std::string& path, archive* a,
                 const std::vector<const Filter*>& external, const char* what) {
    std::string why = archive_error_string(a) != nullptr ? archive_error_string(a) : "unknown";
    if (const Filter* f = external_compression(fd, h, path, external))
        return bad(path, "has a payload compressed with " + std::string(f->name) +
                             ", which this libarchive decodes only by running the external "
                             "program '" +
                             std::string(f->name) +
                             "': skforge runs no program because of a package it reads; repack "
                             "it with gzip (makeself's default)");
    return bad(path, what + why);
}

void extract(int fd, const MakeselfHeader& h, const std::string& path, const std::string& dest,
             std::uint64_t max_unpacked) {
    ArchivePtr a(archive_read_new(), archive_read_free);
    auto external = enable_in_process_filters(a.get());
    archive_read_support_format_tar(a.get());
    Range r{fd, h.offset, h.offset + h.size, std::vector<std::uint8_t>(1u << 20), &path};
    if (archive_read_open(a.get(), &r, nullptr, range_read, nullptr) != ARCHIVE_OK)
        throw unreadable(fd, h, path, a.get(), external, "has a payload libarchive cannot read: ");
    Unpacked unpacked{0, max_unpacked};
    std::size_t count = 0;
    archive_entry* e = nullptr;
    for (;;) {
        int rc = archive_read_next_header(a.get(), &e);
        if (rc == ARCHIVE_EOF)
            break;
        // At the first entry, a payload in a compression left out reads as no tar: name it.
        if (rc != ARCHIVE_OK)
            throw unreadable(fd, h, path, a.get(), count == 0 ? external : decltype(external)(),
                             "has a damaged payload: ");
        if (++count > k_max_entries)
            throw bad(path, "holds more than " + std::to_string(k_max_entries) + " entries");
        std::string rel = entry_path(e, path);
        if (!rel.empty())
            write_entry(a.get(), e, dest, rel, path, unpacked);
    }
}

// The one top-level directory laid out as CANN's package: config/<soc>/binary_info_config.json.
std::string package_dir(const std::string& root, const std::string& path) {
    std::vector<std::string> found;
    for (const auto& top : fs::directory_iterator(root)) {
        if (!top.is_directory() || !fs::is_directory(top.path() / "config"))
            continue;
        for (const auto& soc : fs::directory_iterator(top.path() / "config"))
            if (fs::is_regular_file(soc.path() / std::string(k_index_file_name))) {
                found.push_back(top.path().filename());
                break;
            }
    }
    if (found.size() != 1)
        throw bad(path, found.empty()
                            ? "holds no package in CANN's layout (a directory with "
                              "config/<soc>/binary_info_config.json)"
                            : "holds " + std::to_string(found.size()) +
                                  " packages in CANN's layout; skforge imports one at a time");
    return found.front();
}

// static_kernel_<datetime>_<pid>, or static_kernel_<datetime> as the CANN 8.0.RC3, 8.0 and
// 8.1.RC1 guides name them: the datetime, which orders CANN's builds.
std::string default_version(const std::string& name, const std::string& path) {
    static const std::regex k_name(R"(static_kernel_([0-9]{1,30})(_[0-9]+)?)");
    std::smatch m;
    if (std::regex_match(name, m, k_name))
        return m[1];
    throw Error(
        "'" + path + "': the package '" + name +
            "' is not named static_kernel_<datetime>_<pid> or static_kernel_<datetime>, so it "
            "has no version to take; "
            "give one with 'skc import " +
            path + " --package-version V'",
        support::ErrorKind::usage);
}

// The header of the archive open at `fd`, of `size` bytes.
MakeselfHeader parse_header(int fd, std::uint64_t size, const std::string& path) {
    std::string head = read_head(fd, size, path);
    auto nl = head.find('\n');
    if (nl == std::string::npos || head.compare(nl + 1, k_banner.size(), k_banner) != 0)
        throw bad(path, "is not a makeself archive");
    MakeselfHeader h;
    auto vend = head.find('\n', nl + 1);
    h.version = head.substr(nl + 1 + k_banner.size(), vend - nl - 1 - k_banner.size());
    auto vars = assignments(head);
    auto get = [&](const char* k) { return vars.contains(k) ? vars.at(k) : std::string(); };
    if (!vars.contains("skip"))
        throw bad(path, "is a makeself archive older than 2.4 (no skip=\"N\" in its header: " +
                            h.version + "); repack it with makeself 2.4 or later");
    if (!get("decrypt_cmd").empty())
        throw bad(path, "is encrypted (decrypt_cmd=\"" + get("decrypt_cmd") +
                            "\"); skforge reads only plain makeself archives");
    if (get("filesizes").find(' ') != std::string::npos)
        throw bad(path, "holds several archives (filesizes=\"" + get("filesizes") +
                            "\", made with --append); skforge reads one");
    h.label = get("label");
    h.script = get("script");
    h.size = number(path, "filesizes", get("filesizes"));
    h.offset = line_offset(path, head, number(path, "skip", get("skip")));
    h.sha256 = get("SHA");
    h.md5 = get("MD5");
    if (std::string crc = get("CRCsum"); recorded(crc))
        h.crc = static_cast<std::uint32_t>(number(path, "CRCsum", crc));
    if (h.offset + h.size != size)
        throw bad(path, "is " + std::to_string(size) + " bytes, its header declares " +
                            std::to_string(h.offset + h.size) +
                            " (header and payload): it was cut short or changed; get it again");
    return h;
}

} // namespace

bool is_makeself(const std::string& path) {
    try {
        std::uint64_t size = 0;
        auto fd = open_input(path, size);
        std::string head = read_head(fd.get(), std::min<std::uint64_t>(size, 512), path);
        auto nl = head.find('\n');
        return nl != std::string::npos && head.compare(nl + 1, k_banner.size(), k_banner) == 0;
    } catch (const Error&) {
        return false;
    }
}

MakeselfHeader read_makeself_header(const std::string& path) {
    std::uint64_t size = 0;
    auto fd = open_input(path, size);
    return parse_header(fd.get(), size, path);
}

PackResult import_makeself(const ImportOptions& o) {
    std::uint64_t size = 0;
    auto fd = open_input(o.input, size);
    auto h = parse_header(fd.get(), size, o.input);
    check_sums(fd.get(), h, o.input);
    support::TempDir scratch(support::temp_parent(), "skforge-import-");
    extract(fd.get(), h, o.input, scratch.path(), o.max_unpacked_bytes);
    std::string name = package_dir(scratch.path(), o.input);
    std::string src = scratch.path() + "/" + name;
    // The vendor's own scripts are not installed: skforge renders the package's install.sh,
    // uninstall.sh and version.info, and its installer never runs package code.
    // Whatever they are: a directory of that name is left out too.
    for (const char* generated : k_generated_paths)
        fs::remove_all(src + "/" + generated);
    fs::remove_all(src + "/" + std::string(k_manifest_path));
    PackOptions p;
    p.source_dir = src;
    p.output = o.output;
    p.name = name;
    p.version = o.version.empty() ? default_version(name, o.input) : o.version;
    p.sign_key = o.sign_key;
    p.compression = o.compression;
    p.mtime = o.mtime;
    p.cann = o.cann;
    return pack(p);
}

} // namespace skforge::package
