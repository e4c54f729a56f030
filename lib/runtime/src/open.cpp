// SPDX-License-Identifier: Apache-2.0
// Opening an installed package on a device, binding its tensors by name, and the host executor.
#include "skforge/runtime/open.hpp"

#include "program_check.hpp"
#include "skforge/install/layout.hpp"
#include "skforge/install/query.hpp"
#include "skforge/runtime.h"
#include "skforge/runtime/npu.hpp"
#include "skforge/support/error.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <thread>

namespace skforge::runtime {

using support::Error;
using support::ErrorKind;

namespace {

// Worker threads, tensors and runner of a host package, built once per open.
class HostExecutor final : public Executor {
  public:
    HostExecutor(Package package, unsigned workers)
        : m_package(std::move(package)), m_device(workers),
          m_tensors(m_package.tensors(), Allocate::not_graph_io),
          m_runner(m_package, m_device, m_tensors) {}
    void bind(std::size_t i, void* memory) override { m_tensors.bind(i, memory); }
    std::uint64_t run_fused(void*) override { return m_runner.run_fused(); }
    std::uint64_t run_unfused(void*) override { return m_runner.run_unfused(); }
    std::uint64_t run_segment(std::size_t s, void*) override { return m_runner.run_segment(s); }
    void drop_side_waits(bool drop) override { m_runner.drop_side_waits(drop); }
    // The host's device memory is host memory, 64-byte aligned as a device allocation is.
    void* device_malloc(std::size_t bytes) override {
        auto n = check::block_size(bytes);
        std::unique_ptr<std::byte, Free> p(
            n ? static_cast<std::byte*>(std::aligned_alloc(64, static_cast<std::size_t>(*n)))
              : nullptr);
        if (p == nullptr)
            throw ApiError(SKF_E_MEMORY, "skf_device_malloc: out of memory for " +
                                             std::to_string(bytes) + " bytes");
        std::memset(p.get(), 0, static_cast<std::size_t>(*n));
        void* out = p.get();
        m_user.emplace(out, std::move(p));
        return out;
    }
    void device_free(void* memory) override {
        if (m_user.erase(memory) == 0)
            throw ApiError(SKF_E_ARGUMENT, "skf_device_free: not memory that skf_device_malloc "
                                           "of this handle returned (freed twice?)");
    }
    void copy(void* dst, const void* src, std::size_t bytes, Copy) override {
        std::memmove(dst, src, bytes);
    }

  private:
    struct Free {
        void operator()(std::byte* p) const noexcept { std::free(p); }
    };
    std::map<void*, std::unique_ptr<std::byte, Free>> m_user; ///< skf_device_malloc's
    Package m_package;
    Device m_device;
    Tensors m_tensors;
    Runner m_runner;
};

// `text` as a number from `low` to `high`, or nullopt.
std::optional<unsigned> number(std::string_view text, unsigned low, unsigned high) {
    unsigned v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || v < low ||
        v > high)
        return std::nullopt;
    return v;
}

// The package's directory under the tree, after checking that it is installed and unchanged.
std::string installed_dir(const install::InstallTree& tree, const std::string& name,
                          package::Manifest& manifest) {
    auto order = tree.install_order();
    if (std::find(order.begin(), order.end(), name) == order.end()) {
        std::string list;
        for (const auto& n : order)
            list += (list.empty() ? "" : ", ") + n;
        throw ApiError(SKF_E_NOT_FOUND, "package '" + name + "' is not installed under " +
                                            tree.shown() +
                                            " (installed: " + (list.empty() ? "none" : list) + ")");
    }
    // Its code is about to run: check every file against the manifest first.
    auto checked = install::check_installed(tree, name);
    if (!checked.problems.empty()) {
        const auto& p = checked.problems.front();
        throw Error("package '" + name + "' does not match its manifest (" + p.path + ": " +
                        std::string(install::problem_name(p.kind)) + ", and " +
                        std::to_string(checked.problems.size() - 1) +
                        " more); run 'skinstall verify " + name + "'",
                    ErrorKind::integrity);
    }
    manifest = std::move(checked.manifest);
    return tree.shown() + "/" + name;
}

// What a handle knows of a host package beside its executor.
void describe(Opened& o, const Package& p) {
    o.graph = p.graph();
    o.operator_count = p.ops().size();
    o.tensors = p.tensors();
    for (std::size_t i = 0; i < o.tensors.size(); ++i) {
        o.by_name.emplace(o.tensors[i].name, i);
        if (!o.tensors[i].arena)
            o.listed.push_back(i);
    }
    o.bound.assign(o.tensors.size(), false);
    for (const auto& s : p.segments()) {
        o.segment_names.push_back(s.name);
        std::vector<std::size_t> used;
        std::vector<bool> writes;
        for (const auto& [t, offset] : s.parameters)
            if (std::find(used.begin(), used.end(), t) == used.end()) {
                used.push_back(t);
                bool w = false;
                for (auto op : s.ops) {
                    const auto& outs = p.ops()[op].outputs;
                    w = w || std::find(outs.begin(), outs.end(), t) != outs.end();
                }
                writes.push_back(w);
            }
        o.segment_tensors.push_back(std::move(used));
        o.segment_writes.push_back(std::move(writes));
    }
}

} // namespace

DeviceSpec parse_device(const std::string& text) {
    std::string_view t = text;
    if (t == "host")
        return {DeviceSpec::Kind::host, 0};
    if (t.starts_with("host:"))
        if (auto n = number(t.substr(5), 1, 256))
            return {DeviceSpec::Kind::host, *n};
    if (t.starts_with("npu:"))
        if (auto n = number(t.substr(4), 0, 1023))
            return {DeviceSpec::Kind::npu, *n};
    throw ApiError(SKF_E_ARGUMENT,
                   "device '" + text + "': expected host, host:<workers> (1 to 256) or npu:<id>");
}

std::unique_ptr<Executor> host_executor(Package package, unsigned workers) {
    if (workers == 0)
        workers = std::max(1u, std::thread::hardware_concurrency());
    return std::make_unique<HostExecutor>(std::move(package), workers);
}

Opened open_installed(const std::string& install_path, const std::string& package,
                      const std::string& device) {
    DeviceSpec spec = parse_device(device);
    std::string root = install::choose_install_path(install_path);
    auto tree = install::InstallTree::open(root, install::Create::no);
    if (!tree)
        throw ApiError(SKF_E_NOT_FOUND, "no static kernels are installed under " + root);
    install::TreeLock lock(*tree, install::LockMode::shared);
    package::Manifest manifest;
    std::string dir = installed_dir(*tree, package, manifest);
    Opened o;
    o.package = package;
    if (spec.kind == DeviceSpec::Kind::npu) {
        check_device_fits(manifest, spec.number);
        o.device_name = "npu:" + std::to_string(spec.number);
        o.executor = npu_executor(dir, spec.number, o);
        return o;
    }
    unsigned workers =
        spec.number != 0 ? spec.number : std::max(1u, std::thread::hardware_concurrency());
    o.device_name = "host:" + std::to_string(workers);
    auto p = Package::open(dir);
    describe(o, p);
    o.executor = host_executor(std::move(p), workers);
    return o;
}

const TensorInfo& Opened::tensor(std::size_t i, const char* call) const {
    if (i >= listed.size())
        throw ApiError(SKF_E_ARGUMENT, std::string(call) + ": tensor index " + std::to_string(i) +
                                           " out of range (package '" + package + "' has " +
                                           std::to_string(listed.size()) + ")");
    return tensors[listed[i]];
}

std::size_t Opened::listed_index(std::size_t i) const {
    return static_cast<std::size_t>(std::find(listed.begin(), listed.end(), i) - listed.begin());
}

void Opened::bind(const std::string& name, void* memory) {
    auto it = by_name.find(name);
    if (it == by_name.end() || tensors[it->second].arena) {
        std::string names;
        for (auto i : listed)
            names += (names.empty() ? "" : ", ") + tensors[i].name;
        throw ApiError(
            SKF_E_NOT_FOUND,
            "skf_bind: package '" + package + "' has no tensor '" + name + "'" +
                (it != by_name.end() ? " to bind (it lives in a SuperKernel's arena)" : "") +
                "; its tensors: " + names);
    }
    executor->bind(it->second, memory);
    bound[it->second] = memory != nullptr;
}

void* Opened::device_malloc(std::size_t bytes) {
    void* p = executor->device_malloc(bytes);
    blocks[reinterpret_cast<std::uintptr_t>(p)] = std::max<std::size_t>(bytes, 1); // at least one
    return p;
}

void Opened::device_free(void* memory) {
    executor->device_free(memory);
    blocks.erase(reinterpret_cast<std::uintptr_t>(memory));
}

void Opened::copy(void* dst, const void* src, std::size_t bytes, Executor::Copy direction,
                  const char* call) {
    auto device =
        reinterpret_cast<std::uintptr_t>(direction == Executor::Copy::to_device ? dst : src);
    auto it = blocks.upper_bound(device);
    if (it != blocks.begin()) {
        --it;
        std::uintptr_t offset = device - it->first;
        if (offset < it->second && bytes > it->second - offset)
            throw ApiError(SKF_E_ARGUMENT, std::string(call) + ": " + std::to_string(bytes) +
                                               " bytes at offset " + std::to_string(offset) +
                                               " of a block of " + std::to_string(it->second) +
                                               " bytes (skf_device_malloc) would run past its end");
    }
    executor->copy(dst, src, bytes, direction);
}

namespace {

// Throws SKF_E_UNBOUND naming every tensor of `needed` that is not bound.
void require_bound(const Opened& o, const std::vector<std::size_t>& needed,
                   const std::string& what) {
    std::string missing;
    std::size_t count = 0;
    for (auto i : needed)
        if (!o.bound[i]) {
            missing += (missing.empty() ? "" : ", ") + o.tensors[i].name;
            ++count;
        }
    if (count != 0)
        throw ApiError(SKF_E_UNBOUND, what + " needs " + std::to_string(count) + " unbound tensor" +
                                          (count == 1 ? "" : "s") + ": " + missing +
                                          " (bind them with skf_bind)");
}

std::vector<std::size_t> graph_io(const Opened& o) {
    std::vector<std::size_t> io;
    for (auto i : o.listed)
        if (o.tensors[i].graph_input || o.tensors[i].graph_output)
            io.push_back(i);
    return io;
}

} // namespace

std::uint64_t Opened::run_fused(void* stream) {
    require_bound(*this, graph_io(*this), "skf_run: package '" + package + "'");
    return executor->run_fused(stream);
}

std::uint64_t Opened::run_unfused(void* stream) {
    require_bound(*this, graph_io(*this), "skf_run_unfused: package '" + package + "'");
    return executor->run_unfused(stream);
}

std::uint64_t Opened::run_segment(const std::string& segment, void* stream) {
    auto it = std::find(segment_names.begin(), segment_names.end(), segment);
    if (it == segment_names.end()) {
        std::string names;
        for (const auto& n : segment_names)
            names += (names.empty() ? "" : ", ") + n;
        throw ApiError(SKF_E_NOT_FOUND,
                       "skf_run_segment: package '" + package + "' has no SuperKernel '" + segment +
                           "' (its SuperKernels: " + (names.empty() ? "none" : names) + ")");
    }
    auto s = static_cast<std::size_t>(it - segment_names.begin());
    require_bound(*this, segment_tensors[s], "skf_run_segment: SuperKernel " + segment);
    return executor->run_segment(s, stream);
}

} // namespace skforge::runtime
