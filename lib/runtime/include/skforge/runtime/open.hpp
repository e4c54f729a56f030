// SPDX-License-Identifier: Apache-2.0
#pragma once

// An installed package opened on a device: what the C interface (include/skforge/runtime.h)
// holds behind a handle. Tensors are bound by graph name; runs refuse unbound tensors by name.
#include "skforge/runtime/package.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace skforge::runtime {

/// A failure with the C interface's code (SKF_E_*) to return.
class ApiError : public std::runtime_error {
  public:
    ApiError(int code, const std::string& message) : std::runtime_error(message), m_code(code) {}
    int code() const noexcept { return m_code; }

  private:
    int m_code;
};

/// Where a package runs, parsed from "host", "host:<workers>" or "npu:<id>".
struct DeviceSpec {
    enum class Kind { host, npu } kind = Kind::host;
    unsigned number = 0; ///< workers on the host (0: one per CPU), the device id on an NPU
};

/// Parses a device string; throws an ApiError (SKF_E_ARGUMENT) saying what is accepted.
DeviceSpec parse_device(const std::string& text);

/// What runs a package's launches on one kind of device.
class Executor {
  public:
    virtual ~Executor() = default;
    /// Points the launches' uses of tensor `i` (an index into the program's tensors) at `memory`.
    virtual void bind(std::size_t i, void* memory) = 0;
    virtual std::uint64_t run_fused(void* stream) = 0;
    virtual std::uint64_t run_unfused(void* stream) = 0;
    virtual std::uint64_t run_segment(std::size_t segment, void* stream) = 0;
    virtual void drop_side_waits(bool drop) = 0;
    enum class Copy { to_device, to_host };
    /// Zeroed memory of the device for `bytes` bytes (at least one), freed at close at the latest.
    virtual void* device_malloc(std::size_t bytes) = 0;
    /// Frees what device_malloc returned; throws SKF_E_ARGUMENT for anything else.
    virtual void device_free(void* memory) = 0;
    /// Copies `bytes` bytes between host memory and the device's.
    virtual void copy(void* dst, const void* src, std::size_t bytes, Copy direction) = 0;
};

/// A package opened on a device.
struct Opened {
    std::string package, device_name, graph;
    std::size_t operator_count = 0;
    std::vector<TensorInfo> tensors;        ///< every tensor of the program
    std::vector<std::size_t> listed;        ///< those a caller may bind (not arena tensors)
    std::vector<std::string> segment_names; ///< SuperKernels in launch order
    std::vector<std::vector<std::size_t>> segment_tensors; ///< what each SuperKernel uses
    std::vector<std::vector<bool>> segment_writes;         ///< ... and whether it writes each
    std::unordered_map<std::string, std::size_t> by_name;  ///< graph name -> program index
    std::vector<bool> bound;                               ///< by program index
    std::map<std::uintptr_t, std::size_t> blocks; ///< device_malloc's: address -> bytes asked
    std::unique_ptr<Executor> executor;

    /// Listed tensor `i`; throws SKF_E_ARGUMENT naming `call` when out of range.
    const TensorInfo& tensor(std::size_t i, const char* call) const;
    /// The position in `listed` of program tensor `i` (which is listed).
    std::size_t listed_index(std::size_t i) const;
    /// Binds graph tensor `name`; throws SKF_E_NOT_FOUND listing what can be bound.
    void bind(const std::string& name, void* memory);
    std::uint64_t run_fused(void* stream);
    std::uint64_t run_unfused(void* stream);
    /// Throws SKF_E_NOT_FOUND (no such SuperKernel) or SKF_E_UNBOUND naming its unbound tensors.
    std::uint64_t run_segment(const std::string& segment, void* stream);
    void drop_side_waits(bool drop) { executor->drop_side_waits(drop); }
    /// The executor's device_malloc, the block remembered for copy.
    void* device_malloc(std::size_t bytes);
    /// The executor's device_free; throws SKF_E_ARGUMENT for anything device_malloc did not give.
    void device_free(void* memory);
    /// Copies `bytes` bytes between host and device memory (`call` names the C function in
    /// errors); throws SKF_E_ARGUMENT when the device side starts in a block of device_malloc
    /// and the copy runs past that block's end. Other device memory is the caller's to size.
    void copy(void* dst, const void* src, std::size_t bytes, Executor::Copy direction,
              const char* call);
    std::size_t segment_count() const { return segment_names.size(); }
    const std::string& segment_name(std::size_t i) const { return segment_names[i]; }
};

/// Opens `package` installed under `install_path` ("": $ASCEND_HOME_PATH) on `device`: finds it
/// in the install order holding the shared tree lock, checks every file against its manifest,
/// then loads it. Throws ApiError or support::Error naming the path and the reason.
Opened open_installed(const std::string& install_path, const std::string& package,
                      const std::string& device);

/// The host executor over a loaded host package (host/program.json).
std::unique_ptr<Executor> host_executor(Package package, unsigned workers);

} // namespace skforge::runtime
