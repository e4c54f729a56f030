// SPDX-License-Identifier: Apache-2.0
// opbase_read OPP SOC_DIR [--reselect-path P] [--select CALLS] [--cores AIC,AIV]
//             [--cann-line 9.0|9.1|master]: what CANN's runtime would find in an installed tree
// (test/unit/opbase_reader.hpp), by the rules of opbase's release line (default master;
// line_rules in the header says what differs; 9.0.x has no reselect with a path). OPP is the
// base the runtime reads when it starts; `-` computes it as the runtime does
// (GetBuiltInBasePath: $ASCEND_HOME_PATH/opp_latest when it resolves, else $ASCEND_OPP_PATH,
// else none).
//
// Without --select: the static kernels, one line per key, sorted:
//   <OpType> core=<coreType> bin=<binPath> blockDim=<n> kernel=<kernelName> ws=<sizes> key=<key>
// Exits 1, saying why on stderr, when the runtime would skip an entry, an entry's binary or JSON
// is not a regular file, the JSON beside a kernel costs its run info ("warning: ..."), or a
// simplifiedKey is a list (which the op-kernel engine cannot read).
//
// With --select CALLS: each line of CALLS is a call, `<OpType> <tensor>...`, a tensor being
// `<dtype>,<format>,<storage dims>[,<view dims>]` (ge codes, dims joined by 'x', '-' for none).
// For each, which kernel each lookup path selects on a device with AIC/AIV cores (default
// 24,48), not deterministic, the op-kernel engine in impl mode 1 and in 2:
//   <OpType> aclnn=<binPath|none> hostapi1=<binPath|none> hostapi2=<binPath|none>
// a path's binPath followed by "(retried)" when its key with strides missed first. Exits 1 when
// a call is not selected on some path or only after a retry.
// Prints "no index <path>" (exit 0) when there is no index to read.
//
// With --reselect-path P: the process then called aclnnReselectStaticKernelWithPath(P), which
// reloads from realpath(P) and adds those kernels after OPP's. The lines are the reload's (a
// binPath printed whole, as the runtime holds it); --select looks calls up among OPP's kernels
// and then the reload's, so a key both have selects OPP's ("no index <path>" first when the
// reload finds none). Exits 3, saying so, when P does not resolve (the call fails with
// ACLNN_ERR_PARAM_INVALID and reloads nothing).
#include "opbase_reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

namespace opbase = skforge::test::opbase;
namespace fs = std::filesystem;

namespace {

std::vector<std::int64_t> dims(const std::string& text) {
    std::vector<std::int64_t> out;
    if (text == "-")
        return out;
    std::stringstream in(text);
    for (std::string d; std::getline(in, d, 'x');)
        out.push_back(std::stoll(d));
    return out;
}

opbase::AclTensor tensor(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string p; std::getline(in, p, ',');)
        parts.push_back(p);
    if (parts.size() < 3 || parts.size() > 4)
        throw std::runtime_error("bad tensor '" + text + "'");
    opbase::AclTensor t;
    t.dtype = std::stoull(parts[0]);
    t.storage_format = std::stoull(parts[1]);
    t.storage_dims = dims(parts[2]);
    t.view_dims = parts.size() == 4 ? dims(parts[3]) : t.storage_dims;
    return t;
}

// What one path selects, as printed.
std::string selected(const opbase::Selection& s, const std::string& base, int& status) {
    if (s.kernel == nullptr || s.retried)
        status = 1;
    if (s.kernel == nullptr)
        return "none";
    return s.kernel->bin_path.substr(base.size()) + (s.retried ? "(retried)" : "");
}

int select_calls(const opbase::Reading& r, const std::string& base, const std::string& calls,
                 opbase::Context ctx) {
    std::ifstream in(calls);
    if (!in) {
        std::cerr << "opbase_read: cannot read " << calls << "\n";
        return 2;
    }
    const opbase::Registry registry(r);
    int status = 0;
    for (std::string line; std::getline(in, line);) {
        std::stringstream words(line);
        std::string op;
        if (!(words >> op))
            continue;
        std::vector<opbase::AclTensor> tensors;
        for (std::string t; words >> t;)
            tensors.push_back(tensor(t));
        std::cout << op << " aclnn="
                  << selected(registry.select(opbase::Path::aclnn_executor, op, ctx, tensors), base,
                              status);
        for (std::uint64_t p : {1u, 2u}) {
            ctx.hostapi_impl_mode = p;
            std::cout << " hostapi" << p << "="
                      << selected(registry.select(opbase::Path::hostapi, op, ctx, tensors), base,
                                  status);
        }
        std::cout << "\n";
    }
    return status;
}

int list_kernels(const opbase::Reading& r, const std::string& base) {
    int status = 0;
    for (const auto& why : r.skipped) {
        std::cerr << "skipped: " << why << "\n";
        status = 1;
    }
    std::vector<std::string> lines;
    for (const auto& k : r.kernels) {
        for (const auto& file : {k.bin_path, k.json_path})
            if (file.empty() || !fs::is_regular_file(fs::symlink_status(file))) {
                std::cerr << k.op_type << ": '" << file << "' is not a regular file\n";
                status = 1;
            }
        for (const auto& w : k.warnings) {
            std::cerr << "warning: " << k.bin_path.substr(base.size()) << ": " << w << "\n";
            status = 1;
        }
        if (!k.key_is_string) {
            std::cerr << k.op_type << ": simplifiedKey is a list, which the op-kernel engine "
                      << "reads as one string\n";
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

// Says there is nothing to read; the runtime is silent.
int no_index(const opbase::Reading& r) {
    std::cout << "no index " << (r.index_path.empty() ? "(no base path)" : r.index_path) << "\n";
    return 0;
}

// OPP as given, or `-`: the base the runtime computes from its environment.
std::string start_base(const std::string& opp) {
    return opp == "-" ? opbase::builtin_base_path(std::getenv("ASCEND_HOME_PATH"),
                                                  std::getenv("ASCEND_OPP_PATH"))
                      : opp;
}

// The runtime's registrations after it started from `opp` and reselected `path`.
int reselect(const std::string& opp, const std::string& soc_dir, const std::string& path,
             const std::string& calls, const opbase::Context& ctx, opbase::Line line) {
    const std::string base = opbase::reselect_base_path(path);
    if (base.empty()) {
        std::cerr << "opbase_read: aclnnReselectStaticKernelWithPath fails: Invalid static kernel "
                  << "path: " << path << ".\n";
        return 3;
    }
    const auto reload = opbase::read_static_kernels(base, soc_dir, line);
    if (!reload.index_read)
        no_index(reload);
    if (calls.empty())
        return reload.index_read ? list_kernels(reload, "") : 0;
    const auto r =
        opbase::reloaded(opbase::read_static_kernels(start_base(opp), soc_dir, line), reload);
    return select_calls(r, "", calls, ctx);
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string calls;
    std::optional<std::string> reselect_path;
    opbase::Context ctx;
    opbase::Line line = opbase::Line::master;
    for (std::size_t i = 2; i + 1 < args.size(); i += 2) {
        if (args[i] == "--select")
            calls = args[i + 1];
        else if (args[i] == "--cann-line" && opbase::parse_line(args[i + 1]))
            line = *opbase::parse_line(args[i + 1]);
        else if (args[i] == "--reselect-path")
            reselect_path = args[i + 1];
        else if (args[i] == "--cores" && args[i + 1].find(',') != std::string::npos) {
            ctx.aic = static_cast<std::uint32_t>(std::stoul(args[i + 1]));
            ctx.aiv = static_cast<std::uint32_t>(
                std::stoul(args[i + 1].substr(args[i + 1].find(',') + 1)));
        } else
            args.clear();
    }
    if (args.size() < 2 || args.size() % 2 != 0) {
        std::cerr << "usage: opbase_read OPP|- SOC_DIR [--reselect-path P] [--select CALLS] "
                  << "[--cores AIC,AIV] [--cann-line 9.0|9.1|master]\n";
        return 2;
    }
    if (reselect_path && !opbase::line_rules(line).reselect_with_path) {
        std::cerr << "opbase_read: aclnnReselectStaticKernelWithPath does not exist on "
                  << opbase::line_rules(line).name << "\n";
        return 2;
    }
    try {
        if (reselect_path)
            return reselect(args[0], args[1], *reselect_path, calls, ctx, line);
        const std::string opp = start_base(args[0]);
        const auto r = opbase::read_static_kernels(opp, args[1], line);
        if (!r.index_read)
            return no_index(r);
        const std::string base = opp + "/static_kernel/ai_core/";
        return calls.empty() ? list_kernels(r, base) : select_calls(r, base, calls, ctx);
    } catch (const std::exception& e) {
        std::cerr << "opbase_read: " << e.what() << "\n";
        return 2;
    }
}
