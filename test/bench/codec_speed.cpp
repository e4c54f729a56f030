// SPDX-License-Identifier: Apache-2.0
// Single-core limits of what `skc pack` does per byte: SHA-256 (OpenSSL), deflate as zlib and as
// libdeflate (the same 4 MiB whole-buffer gzip members skforge writes), and zstd frames. Run by
// test/bench/bench_package.sh on the benchmark's input; prints one Markdown table row per codec.
//   codec_speed LEVEL FILE...
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <libdeflate.h>
#include <openssl/evp.h>
#include <string>
#include <vector>
#include <zlib.h>
#include <zstd.h>

namespace {

using Bytes = std::vector<unsigned char>;
constexpr std::size_t k_chunk = 4u << 20;

std::size_t zlib_gzip(const Bytes& in, std::size_t off, std::size_t n, int level, Bytes& out) {
    z_stream zs{};
    deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    out.resize(deflateBound(&zs, n) + 32);
    zs.next_in = const_cast<Bytef*>(in.data() + off);
    zs.avail_in = static_cast<uInt>(n);
    zs.next_out = out.data();
    zs.avail_out = static_cast<uInt>(out.size());
    deflate(&zs, Z_FINISH);
    std::size_t size = zs.total_out;
    deflateEnd(&zs);
    return size;
}

std::size_t libdeflate_gzip(const Bytes& in, std::size_t off, std::size_t n, int level,
                            Bytes& out) {
    libdeflate_compressor* c = libdeflate_alloc_compressor(level);
    out.resize(libdeflate_gzip_compress_bound(c, n));
    std::size_t size = libdeflate_gzip_compress(c, in.data() + off, n, out.data(), out.size());
    libdeflate_free_compressor(c);
    return size;
}

std::size_t zstd_frame(const Bytes& in, std::size_t off, std::size_t n, int level, Bytes& out) {
    out.resize(ZSTD_compressBound(n));
    return ZSTD_compress(out.data(), out.size(), in.data() + off, n, level);
}

std::size_t sha256(const Bytes& in, std::size_t off, std::size_t n, int, Bytes& out) {
    out.resize(32);
    unsigned len = 0;
    EVP_Digest(in.data() + off, n, out.data(), &len, EVP_sha256(), nullptr);
    return 0;
}

void row(const char* name, const Bytes& in, int level,
         const std::function<std::size_t(const Bytes&, std::size_t, std::size_t, int, Bytes&)>& f) {
    Bytes out;
    std::size_t total = 0;
    auto t0 = std::chrono::steady_clock::now();
    for (std::size_t off = 0; off < in.size(); off += k_chunk)
        total += f(in, off, std::min(k_chunk, in.size() - off), level, out);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double mib = static_cast<double>(in.size()) / 1048576.0;
    if (total == 0)
        std::printf("| %s | %.0f MiB/s | | %.2f s |\n", name, mib / s, s);
    else
        std::printf("| %s | %.0f MiB/s | %.4f | %.2f s |\n", name, mib / s,
                    static_cast<double>(total) / static_cast<double>(in.size()), s);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: codec_speed LEVEL FILE...\n");
        return 2;
    }
    int level = std::atoi(argv[1]);
    Bytes in;
    for (int i = 2; i < argc; ++i) {
        std::ifstream f(argv[i], std::ios::binary);
        in.insert(in.end(), std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
    std::printf("| one core, %zu MiB in 4 MiB pieces | speed | compressed / input | time |\n",
                in.size() >> 20);
    std::printf("|---|---|---|---|\n");
    row("SHA-256 (OpenSSL)", in, level, sha256);
    std::string z = "gzip level " + std::to_string(level) + ", zlib";
    row(z.c_str(), in, level, zlib_gzip);
    std::string d = "gzip level " + std::to_string(level) + ", libdeflate";
    row(d.c_str(), in, level, libdeflate_gzip);
    std::string s = "zstd level " + std::to_string(level);
    row(s.c_str(), in, level, zstd_frame);
    return 0;
}
