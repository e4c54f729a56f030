// SPDX-License-Identifier: Apache-2.0
// opbase_read OPP SOC_DIR: lists the static kernels CANN's runtime would find in an installed
// tree (test/unit/opbase_reader.hpp), one line each, sorted:
//   <OpType> core=<coreType> bin=<binPath> blockDim=<n> kernel=<kernelName> ws=<sizes> key=<key>
// Exits 1, saying why, when the runtime would skip an entry or an entry's binary or JSON is not a
// regular file; prints "no index <path>" (exit 0) when there is no index to read.
#include "opbase_reader.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace opbase = skforge::test::opbase;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: opbase_read OPP SOC_DIR\n";
        return 2;
    }
    const std::string opp = argv[1];
    auto r = opbase::read_static_kernels(opp, argv[2]);
    if (!r.index_read) {
        std::cout << "no index " << r.index_path << "\n";
        return 0;
    }
    int status = 0;
    for (const auto& why : r.skipped) {
        std::cerr << "skipped: " << why << "\n";
        status = 1;
    }
    const std::string base = opp + "/static_kernel/ai_core/";
    std::vector<std::string> lines;
    for (const auto& k : r.kernels) {
        for (const auto& file : {k.bin_path, k.json_path})
            if (file.empty() || !fs::is_regular_file(fs::symlink_status(file))) {
                std::cerr << k.op_type << ": '" << file << "' is not a regular file\n";
                status = 1;
            }
        std::string ws;
        for (auto w : k.workspace)
            ws += (ws.empty() ? "" : ",") + std::to_string(w);
        for (const auto& key : k.keys)
            lines.push_back(k.op_type + " core=" + std::to_string(k.core_type) +
                            " bin=" + k.bin_path.substr(base.size()) +
                            " blockDim=" + std::to_string(k.block_dim) +
                            " kernel=" + k.kernel_name + " ws=" + ws + " key=" + key);
    }
    std::sort(lines.begin(), lines.end());
    for (const auto& l : lines)
        std::cout << l << "\n";
    return status;
}
