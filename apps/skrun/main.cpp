// SPDX-License-Identifier: Apache-2.0
// skrun: runs an installed host package, fused (one launch per SuperKernel) and, with
// --compare-unfused, one launch per operator, and compares every output bitwise.
#include "../common/cli_main.hpp"
#include "skforge/install/layout.hpp"
#include "skforge/install/query.hpp"
#include "skforge/runtime/package.hpp"
#include "skforge/support/error.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <clocale>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

namespace po = boost::program_options;
namespace inst = skforge::install;
namespace rt = skforge::runtime;
using skforge::support::Error;
using skforge::support::ErrorKind;

namespace {

struct Options {
    std::string name, install_path, inputs = "random";
    std::uint64_t seed = 1;
    unsigned iterations = 10, cores = 0;
    bool compare = false, json = false, drop_side_waits = false;
};

struct Timing {
    std::uint64_t launches = 0;
    double median_ms = 0, min_ms = 0;
};

// Times `iterations` runs; `launches` is what the first run (made before, untimed) returned.
template <typename Run> Timing time_runs(Run run, unsigned iterations, std::uint64_t launches) {
    Timing t;
    t.launches = launches;
    std::vector<double> ms;
    for (unsigned i = 0; i < iterations; ++i) {
        auto start = std::chrono::steady_clock::now();
        run();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
    }
    if (!ms.empty()) {
        std::sort(ms.begin(), ms.end());
        t.median_ms = ms[ms.size() / 2];
        t.min_ms = ms.front();
    }
    return t;
}

// A difference and the run (from 1) after which it was seen.
struct RunDifference {
    rt::Difference d;
    unsigned run = 1;
};

// The first run's differences, then those after the last run in tensors the first showed none in:
// a fused plan that reads what an earlier run left behind differs on the first run only.
std::vector<RunDifference> merge_differences(const rt::Comparison& first,
                                             const rt::Comparison& last, unsigned last_run) {
    std::vector<RunDifference> out;
    for (const auto& d : first.differences)
        out.push_back({d, 1});
    for (const auto& d : last.differences)
        if (std::none_of(first.differences.begin(), first.differences.end(),
                         [&](const rt::Difference& f) { return f.tensor == d.tensor; }))
            out.push_back({d, last_run});
    return out;
}

void fill_inputs(const rt::Package& pkg, rt::Tensors& t, const Options& o) {
    if (o.inputs == "random")
        pkg.random_inputs(t, o.seed);
    else
        pkg.read_inputs(t, o.inputs);
}

int run(const Options& o) {
    std::string root = inst::choose_install_path(o.install_path);
    auto tree = inst::InstallTree::open(root, inst::Create::no);
    if (!tree)
        throw Error("no static kernels are installed under " + root);
    inst::TreeLock lock(*tree, inst::LockMode::shared);
    auto order = tree->install_order();
    if (std::find(order.begin(), order.end(), o.name) == order.end()) {
        std::string list;
        for (const auto& n : order)
            list += (list.empty() ? "" : ", ") + n;
        throw Error("package '" + o.name + "' is not installed under " + tree->shown() +
                    " (installed: " + (list.empty() ? "none" : list) + ")");
    }
    // Its code is about to run: check every file against the manifest first.
    auto checked = inst::check_installed(*tree, o.name);
    if (!checked.problems.empty()) {
        const auto& p = checked.problems.front();
        throw Error("package '" + o.name + "' does not match its manifest (" + p.path + ": " +
                        std::string(inst::problem_name(p.kind)) + ", and " +
                        std::to_string(checked.problems.size() - 1) +
                        " more); run 'skinstall verify " + o.name + "'",
                    ErrorKind::integrity);
    }
    auto pkg = rt::Package::open(tree->shown() + "/" + o.name);
    unsigned cores = o.cores != 0 ? o.cores : std::max(1u, std::thread::hardware_concurrency());
    rt::Device device(cores);

    rt::Tensors fused(pkg.tensors());
    fill_inputs(pkg, fused, o);
    rt::Runner fused_runner(pkg, device, fused);
    fused_runner.drop_side_waits(o.drop_side_waits);
    // The first run of each mode warms up (page faults, first calls through the PLT) and is
    // compared: a fused order that reads what a previous run left behind shows only there.
    std::uint64_t fused_launches = fused_runner.run_fused();
    std::optional<rt::Tensors> unfused;
    std::optional<rt::Runner> unfused_runner;
    std::uint64_t unfused_launches = 0;
    rt::Comparison first;
    if (o.compare) {
        unfused.emplace(pkg.tensors());
        fill_inputs(pkg, *unfused, o);
        unfused_runner.emplace(pkg, device, *unfused);
        unfused_launches = unfused_runner->run_unfused();
        first = pkg.compare(fused, *unfused);
    }
    Timing f = time_runs([&] { return fused_runner.run_fused(); }, o.iterations, fused_launches);
    std::optional<Timing> u;
    std::optional<rt::Comparison> cmp;
    std::vector<RunDifference> diffs;
    if (o.compare) {
        u = time_runs([&] { return unfused_runner->run_unfused(); }, o.iterations,
                      unfused_launches);
        cmp = pkg.compare(fused, *unfused);
        diffs = merge_differences(first, *cmp, 1 + o.iterations);
    }
    bool same = diffs.empty();
    if (o.json) {
        nlohmann::json j = {
            {"package", o.name},
            {"graph", pkg.graph()},
            {"operators", pkg.ops().size()},
            {"superkernels", pkg.segments().size()},
            {"workers", cores},
            {"iterations", o.iterations},
            {"fused",
             {{"launches", f.launches}, {"median_ms", f.median_ms}, {"min_ms", f.min_ms}}}};
        if (u) {
            j["unfused"] = {
                {"launches", u->launches}, {"median_ms", u->median_ms}, {"min_ms", u->min_ms}};
            j["speedup"] = f.median_ms > 0 ? u->median_ms / f.median_ms : 0.0;
            j["compared"] = cmp->compared;
            j["identical"] = same;
            nlohmann::json list = nlohmann::json::array();
            for (const auto& [d, after] : diffs)
                list.push_back({{"tensor", d.tensor},
                                {"run", after},
                                {"first_byte", d.first_byte},
                                {"differing_bytes", d.differing_bytes}});
            j["differences"] = list;
        }
        std::cout << j.dump(2) << "\n";
    } else {
        std::printf("%s: graph %s, %zu operators, %zu SuperKernels, %u workers, inputs %s\n",
                    o.name.c_str(), pkg.graph().c_str(), pkg.ops().size(), pkg.segments().size(),
                    cores,
                    o.inputs == "random" ? ("random (seed " + std::to_string(o.seed) + ")").c_str()
                                         : o.inputs.c_str());
        std::printf(
            "  fused:     %4llu launches per run, %9.3f ms per run (median of %u, min %.3f)\n",
            static_cast<unsigned long long>(f.launches), f.median_ms, o.iterations, f.min_ms);
        if (u) {
            std::printf(
                "  op-by-op:  %4llu launches per run, %9.3f ms per run (median of %u, min %.3f)\n",
                static_cast<unsigned long long>(u->launches), u->median_ms, o.iterations,
                u->min_ms);
            std::printf("  speedup:   %.2fx fused\n",
                        f.median_ms > 0 ? u->median_ms / f.median_ms : 0.0);
            if (same)
                std::printf("  compare:   %zu tensor%s bitwise identical\n", cmp->compared,
                            cmp->compared == 1 ? "" : "s");
            else
                std::printf("  compare:   %zu of %zu tensors DIFFER\n", diffs.size(),
                            cmp->compared);
        }
    }
    for (const auto& [d, after] : diffs)
        std::fprintf(stderr,
                     "skrun: %s differs fused vs op-by-op after run %u: %llu bytes, first at "
                     "byte %llu\n",
                     d.tensor.c_str(), after, static_cast<unsigned long long>(d.differing_bytes),
                     static_cast<unsigned long long>(d.first_byte));
    return same ? 0 : 1;
}

// Parses the command line into `o`; false when --help or --version was answered.
bool parse(const std::vector<std::string>& args, Options& o) {
    skforge::cli::check_option_words(args);
    skforge::cli::CommandLine cl(
        "skrun", "skrun NAME [options]",
        "Runs the installed host package NAME (skc compile --npu-arch host): each\n"
        "SuperKernel as one launch on worker threads standing in for AI cores.\n"
        "--compare-unfused also runs every operator as its own launch, compares every\n"
        "output bitwise and prints both timings.",
        "Exit status: 0 success (every output identical), 1 failure or an output\n"
        "differs, 2 usage error. See share/doc/host-target.md.");
    cl.positional("NAME", o.name);
    auto add = cl.add();
    add("install-path", po::value(&o.install_path)->value_name("P"),
        "the toolkit root (default $ASCEND_HOME_PATH)");
    add("inputs", po::value(&o.inputs)->value_name("random|DIR"),
        "input tensors: random (default) or one file per input tensor in DIR");
    add("seed", skforge::cli::integer_value(o.seed, "--seed", 0, INT64_MAX, "S"),
        "seed of the random inputs (default 1)");
    add("compare-unfused", po::bool_switch(&o.compare),
        "also run op-by-op and compare every output bitwise");
    add("iterations", skforge::cli::integer_value(o.iterations, "--iterations", 1, 1000000),
        "timed runs of each mode after a first, compared run (default 10)");
    add("cores", skforge::cli::integer_value(o.cores, "--cores", 0, 256),
        "worker threads standing in for AI cores, 0: one per core (default)");
    add("json", po::bool_switch(&o.json), "print the result as JSON");
    add("debug-drop-side-waits", po::bool_switch(&o.drop_side_waits),
        "test switch: the fused run skips its waits on AICPU tiling and prefetch operators, "
        "which then run last (--compare-unfused then shows the stale reads)");
    return cl.parse(args);
}

} // namespace

int main(int argc, char** argv) {
    std::setlocale(LC_ALL, "C.UTF-8");
    Options o;
    try {
        if (!parse(std::vector<std::string>(argv + 1, argv + argc), o))
            return 0;
    } catch (const po::error& e) {
        std::fprintf(stderr, "skrun: %s (see skrun --help)\n", e.what());
        return 2;
    } catch (const Error& e) {
        std::fprintf(stderr, "skrun: error: %s\n", skforge::cli::terminal_safe(e.what()).c_str());
        return 2;
    }
    try {
        return run(o);
    } catch (const Error& e) {
        std::fprintf(stderr, "skrun: error: %s\n", skforge::cli::terminal_safe(e.what()).c_str());
        return e.kind() == ErrorKind::usage ? 2 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "skrun: error: %s\n", skforge::cli::terminal_safe(e.what()).c_str());
        return 1;
    }
}
