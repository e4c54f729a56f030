// SPDX-License-Identifier: Apache-2.0
// skrun: runs an installed package through libskforge_runtime (include/skforge/runtime.h), fused
// (one launch per SuperKernel) and, with --compare-unfused, one launch per operator, and compares
// every output bitwise, the first run as well as the last.
#include "../common/cli_main.hpp"
#include "skforge/runtime.h"
#include "skforge/runtime/data.hpp"
#include "skforge/runtime/report.hpp"
#include "skforge/support/error.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

namespace po = boost::program_options;
namespace rt = skforge::runtime;
using skforge::support::Error;
using skforge::support::ErrorKind;

namespace {

struct Options {
    std::string name, install_path, inputs = "random", device = "host";
    std::uint64_t seed = 1;
    unsigned iterations = 10, cores = 0;
    bool compare = false, json = false, drop_side_waits = false;
};

// Throws the library's message unless `code` is SKF_OK.
void check(int code) {
    if (code != SKF_OK)
        throw Error(skf_last_error(),
                    code == SKF_E_ARGUMENT ? ErrorKind::usage : ErrorKind::failure);
}

// The device string for skf_open: --device host|npu[:N], with --cores for the host.
std::string device_string(const Options& o) {
    if (o.device == "host")
        return o.cores != 0 ? "host:" + std::to_string(o.cores) : "host";
    if (o.device == "npu")
        return "npu:0";
    if (o.device.starts_with("npu:"))
        return o.device;
    throw Error("--device must be host, npu or npu:<id>, not '" + o.device + "'", ErrorKind::usage);
}

struct Free {
    void operator()(void* p) const noexcept { std::free(p); }
};
using Memory = std::unique_ptr<std::byte, Free>;

Memory zeroed(std::size_t bytes) {
    std::size_t n = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, n == 0 ? 64 : n);
    if (p == nullptr)
        throw Error("out of memory allocating " + std::to_string(bytes) + " bytes");
    std::memset(p, 0, n == 0 ? 64 : n);
    return Memory(static_cast<std::byte*>(p));
}

// The package's bindable tensors and one set of memory for them.
struct Tensor {
    skf_tensor_info info;
    int role;
};

// Memory of the handle's device (skf_device_malloc: host memory on the host, aclrtMalloc'd on
// an NPU), freed with the object, before the handle is closed.
class DeviceMemory {
  public:
    DeviceMemory(skf_package* pkg, std::size_t bytes) : m_pkg(pkg) {
        check(skf_device_malloc(pkg, bytes, &m_memory));
    }
    ~DeviceMemory() { skf_device_free(m_pkg, m_memory); }
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    void* get() const { return m_memory; }

  private:
    skf_package* m_pkg;
    void* m_memory = nullptr;
};
using Set = std::vector<std::unique_ptr<DeviceMemory>>; ///< device memory, bound
using HostSet = std::vector<Memory>;                    ///< host copies, compared

// An open package, closed with the object.
class Handle {
  public:
    explicit Handle(const Options& o) {
        check(skf_open(o.install_path.empty() ? nullptr : o.install_path.c_str(), o.name.c_str(),
                       device_string(o).c_str(), &m_pkg));
        for (std::size_t i = 0; i < skf_tensor_count(m_pkg); ++i) {
            Tensor t{};
            check(skf_tensor_info_at(m_pkg, i, &t.info));
            t.role = skf_tensor_role(m_pkg, i);
            m_tensors.push_back(t);
        }
    }
    ~Handle() { skf_close(m_pkg); }
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    skf_package* get() const { return m_pkg; }
    const std::vector<Tensor>& tensors() const { return m_tensors; }

    // Device memory for every tensor, the graph inputs filled as the options say (in host
    // memory, then copied).
    Set make_set(const Options& o) const {
        Set set;
        for (std::size_t i = 0; i < m_tensors.size(); ++i) {
            const auto& t = m_tensors[i].info;
            set.push_back(std::make_unique<DeviceMemory>(m_pkg, t.bytes));
            if (m_tensors[i].role != SKF_ROLE_INPUT)
                continue;
            Memory host = zeroed(t.bytes);
            if (o.inputs == "random")
                rt::random_fill(host.get(), t.bytes, t.dtype, i, o.seed);
            else
                rt::read_tensor_file(host.get(), t.bytes, o.inputs, t.name, t.dtype);
            check(skf_copy_to_device(m_pkg, set.back()->get(), host.get(), t.bytes));
        }
        return set;
    }
    void bind(const Set& set) const {
        for (std::size_t i = 0; i < m_tensors.size(); ++i)
            check(skf_bind(m_pkg, m_tensors[i].info.name, set[i]->get()));
    }
    // A host copy of every tensor.
    HostSet snapshot(const Set& set) const {
        HostSet copy;
        for (std::size_t i = 0; i < m_tensors.size(); ++i) {
            copy.push_back(zeroed(m_tensors[i].info.bytes));
            check(
                skf_copy_to_host(m_pkg, copy.back().get(), set[i]->get(), m_tensors[i].info.bytes));
        }
        return copy;
    }

  private:
    skf_package* m_pkg = nullptr;
    std::vector<Tensor> m_tensors;
};

// One run untimed (the first, whose results are kept in `first`), then `iterations` timed ones,
// whose last results are kept in `last`.
template <typename Run>
rt::Timing time_runs(const Handle& h, const Set& set, HostSet& first, HostSet& last, Run run,
                     unsigned iterations) {
    rt::Timing t;
    skf_stats stats{};
    check(run());
    check(skf_get_stats(h.get(), &stats));
    t.launches = stats.last_launches;
    first = h.snapshot(set);
    std::vector<double> ms;
    for (unsigned i = 0; i < iterations; ++i) {
        check(run());
        check(skf_get_stats(h.get(), &stats));
        ms.push_back(static_cast<double>(stats.last_nanoseconds) / 1e6);
    }
    last = h.snapshot(set);
    if (!ms.empty()) {
        std::sort(ms.begin(), ms.end());
        t.median_ms = ms[ms.size() / 2];
        t.min_ms = ms.front();
    }
    return t;
}

// Compares every tensor both modes write (all but graph inputs), after the first run and after
// the last: a fused run that reads what an earlier run left behind differs only in the first.
rt::Comparison compare(const Handle& h, const HostSet& f1, const HostSet& u1, const HostSet& f,
                       const HostSet& u) {
    rt::Comparison c;
    for (std::size_t i = 0; i < h.tensors().size(); ++i) {
        const auto& t = h.tensors()[i];
        if (t.role == SKF_ROLE_INPUT)
            continue;
        ++c.compared;
        auto a = rt::compare_bytes(t.info.name, f1[i].get(), u1[i].get(), t.info.bytes);
        auto b = rt::compare_bytes(t.info.name, f[i].get(), u[i].get(), t.info.bytes);
        if (a.differing_bytes != 0)
            c.first.push_back(a);
        if (b.differing_bytes != 0)
            c.last.push_back(b);
        c.differing += a.differing_bytes != 0 || b.differing_bytes != 0 ? 1 : 0;
    }
    return c;
}

int run(const Options& o) {
    Handle h(o);
    check(skf_debug_drop_side_waits(h.get(), o.drop_side_waits ? 1 : 0));
    Set fused = h.make_set(o);
    HostSet fused_first, fused_last;
    h.bind(fused);
    rt::RunReport r{o.name, skf_graph_name(h.get()),     skf_device(h.get()),        o.inputs,
                    o.seed, skf_operator_count(h.get()), skf_segment_count(h.get()), o.iterations};
    r.fused = time_runs(
        h, fused, fused_first, fused_last, [&] { return skf_run(h.get(), nullptr); }, o.iterations);
    Set unfused;
    HostSet unfused_first, unfused_last;
    if (o.compare) {
        unfused = h.make_set(o);
        h.bind(unfused);
        r.unfused = time_runs(
            h, unfused, unfused_first, unfused_last,
            [&] { return skf_run_unfused(h.get(), nullptr); }, o.iterations);
        r.comparison = compare(h, fused_first, unfused_first, fused_last, unfused_last);
    }
    if (o.json)
        std::cout << rt::report_json(r).dump(2) << "\n";
    else
        for (const auto& line : rt::report_text(r))
            std::cout << line << "\n";
    std::cout.flush();
    for (const auto& line : rt::report_differences(r))
        std::cerr << line << "\n";
    return r.comparison && r.comparison->differing != 0 ? 1 : 0;
}

// Parses the command line into `o`; false when --help or --version was answered.
bool parse(const std::vector<std::string>& args, Options& o) {
    skforge::cli::check_option_words(args);
    skforge::cli::CommandLine cl(
        "skrun", "skrun NAME [options]",
        "Runs the installed package NAME through libskforge_runtime: each SuperKernel\n"
        "as one launch, on worker threads standing in for AI cores (--device host, for\n"
        "packages of skc compile --npu-arch host), or on NPU N through CANN's runtime\n"
        "(--device npu:N, packages of --npu-arch dav-2201|dav-3510), its tensors in the\n"
        "device's memory (runtime.md in /usr/share/doc/skforge/).\n"
        "--compare-unfused also runs every operator as its own launch, compares every\n"
        "output bitwise after the first and the last run and prints both timings.",
        "Exit status: 0 success (every output identical), 1 failure or an output\n"
        "differs, 2 usage error. See host-target.md in /usr/share/doc/skforge/.");
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
        "timed runs of each mode after its first run (default 10)");
    add("cores", skforge::cli::integer_value(o.cores, "--cores", 0, 256),
        "worker threads standing in for AI cores, 0: one per core (default)");
    add("device", po::value(&o.device)->value_name("host|npu[:N]"),
        "where to run: host worker threads (default), or NPU N (default 0)");
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
