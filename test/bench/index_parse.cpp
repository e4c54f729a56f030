// SPDX-License-Identifier: Apache-2.0
// index_parse FILE [REPS]: what CANN's runtime pays to read a global index at process start:
// the file read and parsed by nlohmann::json, the parser opbase's static-kernel reader takes
// (hicann/opbase src/nnopbase/individual_op/executor/indv_collector.h), then every OpType's
// staticList walked. Prints the median wall and CPU milliseconds of REPS runs (CPU time is what
// a busy machine inflates least) and the entries seen.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: index_parse FILE [REPS]\n");
        return 2;
    }
    int reps = argc > 2 ? std::atoi(argv[2]) : 5;
    std::vector<double> ms, cpu;
    std::size_t entries = 0;
    for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        std::clock_t c0 = std::clock();
        std::ifstream in(argv[1], std::ios::binary);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto doc = nlohmann::json::parse(text);
        entries = 0;
        for (const auto& [op, value] : doc.items())
            entries += value.at("staticList").size();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count());
        cpu.push_back(1000.0 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    }
    std::sort(ms.begin(), ms.end());
    std::sort(cpu.begin(), cpu.end());
    std::printf("%.1f ms wall, %.1f ms CPU, %zu entries\n", ms[ms.size() / 2], cpu[cpu.size() / 2],
                entries);
    return 0;
}
