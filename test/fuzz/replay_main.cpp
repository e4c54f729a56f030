// SPDX-License-Identifier: Apache-2.0
// Without libFuzzer (GCC builds, CI): runs a fuzz target on every file of its corpus and on a
// fixed number of deterministic mutations of them, so the targets run under ASan and UBSan in
// every test run. With clang, -DSKFORGE_FUZZ=ON links the targets with libFuzzer instead.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void run(const std::string& s) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

std::string mutate(std::string s, const std::vector<std::string>& corpus, std::mt19937& rng) {
    auto pick = [&](std::size_t n) {
        return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
    };
    static const char* k_tokens[] = {
        ":", "- ", "{", "}",  "[",  "]", ",",       "\n",           "  ",
        "'", "\"", "#", "&a", "*a", "|", "scope: ", "stream_id: 1", "recv_event_list: [1]",
        "=", "::"};
    for (int n = 1 + static_cast<int>(pick(4)); n > 0; --n) {
        switch (pick(5)) {
        case 0:
            if (!s.empty())
                s[pick(s.size())] = static_cast<char>(rng());
            break;
        case 1:
            if (!s.empty())
                s.erase(pick(s.size()), 1 + pick(8));
            break;
        case 2:
            s.insert(pick(s.size() + 1), k_tokens[pick(std::size(k_tokens))]);
            break;
        case 3: {
            const auto& o = corpus[pick(corpus.size())];
            if (!o.empty()) {
                auto at = pick(o.size());
                s.insert(pick(s.size() + 1), o.substr(at, pick(64)));
            }
            break;
        }
        default:
            if (!s.empty()) {
                auto at = pick(s.size());
                s.insert(at, s.substr(at, pick(32)));
            }
            break;
        }
    }
    return s;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS]\n", argv[0]);
        return 2;
    }
    long mutations = argc > 2 ? std::atol(argv[2]) : 2000;
    std::vector<std::string> corpus;
    for (const auto& e : std::filesystem::directory_iterator(argv[1]))
        if (e.is_regular_file())
            corpus.push_back(read(e.path()));
    if (corpus.empty()) {
        std::fprintf(stderr, "empty corpus %s\n", argv[1]);
        return 1;
    }
    for (const auto& s : corpus)
        run(s);
    std::mt19937 rng(12345);
    for (long i = 0; i < mutations; ++i)
        run(mutate(corpus[static_cast<std::size_t>(i) % corpus.size()], corpus, rng));
    std::printf("%zu corpus inputs and %ld mutations ran clean\n", corpus.size(), mutations);
    return 0;
}
