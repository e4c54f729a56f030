// SPDX-License-Identifier: Apache-2.0
// The NPU executor over CANN's public runtime API, loaded with dlopen: it reads the package's
// npu/program.json, registers every binary with its magic, allocates workspaces, intermediates
// and locks once, and launches each SuperKernel (and each operator left out) with an argument
// buffer laid out slot by slot as the program says. See share/doc/runtime.md.
#include "skforge/runtime/npu.hpp"

#include "acl_api.hpp"
#include "program_check.hpp"
#include "skforge/install/cann_check.hpp"
#include "skforge/kernel/host_dtype.hpp"
#include "skforge/kernel/kernel_meta.hpp"
#include "skforge/kernel/soc.hpp"
#include "skforge/kernel/toolkit.hpp"
#include "skforge/runtime.h"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/json_depth.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <type_traits>

namespace skforge::runtime {

using nlohmann::json;

std::string ascendcl_library() {
    const char* env = std::getenv("SKFORGE_ASCENDCL");
    return env != nullptr && *env != '\0' ? env : "libascendcl.so";
}

namespace acl {

Api resolve(void* handle, const std::string& library) {
    Api api{};
    auto get = [&](auto& fn, const char* name) {
        void* p = ::dlsym(handle, name);
        if (p == nullptr)
            throw ApiError(SKF_E_DEVICE,
                           library + " has no " + name +
                               ": a CANN runtime too old for libskforge_runtime "
                               "(it needs the aclrtBinary*, aclrtKernelArgs*, "
                               "aclrtRegisterCpuFunc, aclrtCmoAsync and aclrtValue* API)");
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    get(api.init, "aclInit");
    get(api.set_device, "aclrtSetDevice");
    get(api.create_stream, "aclrtCreateStream");
    get(api.destroy_stream, "aclrtDestroyStream");
    get(api.synchronize_stream, "aclrtSynchronizeStream");
    get(api.create_event, "aclrtCreateEvent");
    get(api.destroy_event, "aclrtDestroyEvent");
    get(api.record_event, "aclrtRecordEvent");
    get(api.stream_wait_event, "aclrtStreamWaitEvent");
    get(api.malloc, "aclrtMalloc");
    get(api.free, "aclrtFree");
    get(api.memset, "aclrtMemset");
    get(api.memcpy, "aclrtMemcpy");
    get(api.get_hardware_sync_addr, "aclrtGetHardwareSyncAddr");
    get(api.binary_load_from_data, "aclrtBinaryLoadFromData");
    get(api.binary_unload, "aclrtBinaryUnLoad");
    get(api.binary_get_function, "aclrtBinaryGetFunction");
    get(api.kernel_args_init, "aclrtKernelArgsInit");
    get(api.kernel_args_append, "aclrtKernelArgsAppend");
    get(api.kernel_args_append_place_holder, "aclrtKernelArgsAppendPlaceHolder");
    get(api.kernel_args_get_place_holder_buffer, "aclrtKernelArgsGetPlaceHolderBuffer");
    get(api.kernel_args_finalize, "aclrtKernelArgsFinalize");
    get(api.launch_kernel_with_config, "aclrtLaunchKernelWithConfig");
    get(api.register_cpu_func, "aclrtRegisterCpuFunc");
    get(api.launch_kernel_with_host_args, "aclrtLaunchKernelWithHostArgs");
    get(api.cmo_async, "aclrtCmoAsync");
    get(api.value_write, "aclrtValueWrite");
    get(api.value_wait, "aclrtValueWait");
    // Optional: without them a static kernel's overflow slot is null, as opbase leaves it when
    // the device is in neither overflow mode.
    api.get_device_sat_mode = reinterpret_cast<decltype(api.get_device_sat_mode)>(
        ::dlsym(handle, "aclrtGetDeviceSatMode"));
    api.ctx_get_float_overflow_addr = reinterpret_cast<decltype(api.ctx_get_float_overflow_addr)>(
        ::dlsym(handle, "aclrtCtxGetFloatOverflowAddr"));
    api.get_cann_version =
        reinterpret_cast<decltype(api.get_cann_version)>(::dlsym(handle, "aclsysGetCANNVersion"));
    api.get_soc_name =
        reinterpret_cast<decltype(api.get_soc_name)>(::dlsym(handle, "aclrtGetSocName"));
    return api;
}

} // namespace acl

namespace {

constexpr std::uint64_t k_lock_stride = 64; // one cache line per lock

// One slot of a SuperKernel's parameter table, as the program gives it.
struct Slot {
    enum class Kind { ffts, tensor, arena, workspace, lock, null, superkernel_workspace } kind;
    std::uint64_t value = 0; ///< tensor index, offset in the workspace block, or lock index
};

struct KernelLaunch {
    std::string json, binary, kernel_name, magic;
    std::string op_type; ///< the operator's OpType (an AICPU kernel is registered under it)
    std::uint32_t block_dim = 1;
    bool ffts = false;
    bool cpu = false;                    ///< an AICPU kernel (magic RT_DEV_BINARY_MAGIC_ELF_AICPU)
    std::uint8_t schedule_mode = 0;      ///< the launch's ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE
    std::uint32_t local_memory_size = 0; ///< ... and its DYN_UBUF_SIZE
    std::vector<std::uint64_t> workspace;
    bool has_tiling = false;
    std::string tiling; ///< the tiling data's bytes
    void* function = nullptr;
    std::vector<void*> workspace_memory;
};

struct OpStep {
    std::string name, type, kind;
    std::uint32_t stream = 0;
    std::vector<std::size_t> inputs, outputs;
    std::vector<std::int64_t> send, recv;
    int segment = -1;
    std::optional<KernelLaunch> kernel;
};

struct SegmentStep {
    std::string name;
    std::uint32_t stream = 0;
    std::vector<std::size_t> ops;
    KernelLaunch launch;
    std::uint64_t workspace_bytes = 0;
    std::vector<Slot> slots;               ///< by slot index
    std::vector<std::size_t> wait_slots;   ///< the slots of its wait locks
    std::vector<std::size_t> launch_waits; ///< ... of those another launch ends, set before a run
    std::string unsupported;               ///< why it cannot be launched, or empty
    void* workspace = nullptr;
};

// The tiling data's bytes from its hex text; throws naming the file.
std::string unhex(const std::string& hex, const std::string& where) {
    auto nibble = [&](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
            return c - 'A' + 10;
        throw support::Error(where + ": tiling data is not hex");
    };
    if (hex.size() % 2 != 0)
        throw support::Error(where + ": tiling data has an odd number of hex digits");
    std::string out(hex.size() / 2, '\0');
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<char>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
    return out;
}

// A path from the program: relative, inside the package.
std::string package_path(const std::string& dir, const std::string& rel, const std::string& file) {
    if (rel.empty() || rel[0] == '/' || rel.find("..") != std::string::npos)
        throw support::Error(file + ": path '" + rel +
                             "' is not a relative path inside the package");
    return dir + "/" + rel;
}

// A launch of the program (`where`: the field it is, as "ops[3].kernel"), its numbers checked.
KernelLaunch kernel_launch(const json& k, const std::string& file, const std::string& where) {
    KernelLaunch l;
    l.json = k.at("json").get<std::string>();
    l.binary = k.at("binary").get<std::string>();
    package_path("", l.binary, file); // refused here, before the device is touched
    l.kernel_name = k.at("kernel_name").get<std::string>();
    l.magic = k.at("magic").get<std::string>();
    l.block_dim =
        std::max<std::uint32_t>(1, check::member<std::uint32_t>(k, "block_dim", file, where));
    l.ffts = k.value("ffts", false);
    std::size_t i = 0;
    for (const auto& w : k.value("workspace", json::array())) {
        std::string field = where + ".workspace[" + std::to_string(i++) + "]";
        l.workspace.push_back(
            check::unsigned_integer(w, std::numeric_limits<std::uint64_t>::max(), file, field));
        check::allocatable(l.workspace.back(), file, field);
    }
    l.schedule_mode = check::member<std::uint8_t>(k, "schedule_mode", file, where, std::uint8_t{0});
    l.local_memory_size = check::member<std::uint32_t>(k, "local_memory_size", file, where, 0u);
    if (k.contains("tiling") && !k["tiling"].is_null()) {
        l.has_tiling = true;
        l.tiling = unhex(k["tiling"].at("data").get<std::string>(), l.json);
    }
    return l;
}

// The slots of a segment's table; a sub-kernel whose parameters its JSON names
// (sub_operator_params) makes the segment unsupported, saying so.
void read_slots(SegmentStep& s, const json& args, const std::map<std::int64_t, std::size_t>& locks,
                std::size_t tensors, const std::string& file, const std::string& where) {
    // The table's size: every entry's slots inside it, at most k_max_slots of them.
    std::uint64_t count = 0;
    std::vector<std::size_t> first;
    for (const auto& a : args) {
        std::string field = where + ".args[" + std::to_string(first.size()) + "]";
        auto at =
            check::unsigned_integer(a.at("slot"), check::k_max_slots - 1, file, field + ".slot");
        auto n = a.contains("count") ? check::unsigned_integer(a["count"], check::k_max_slots - at,
                                                               file, field + ".count")
                                     : 1;
        count = std::max(count, at + n);
        first.push_back(static_cast<std::size_t>(at));
    }
    s.slots.assign(static_cast<std::size_t>(count), {Slot::Kind::null, 0});
    std::size_t k = 0;
    for (const auto& a : args) {
        auto at = first[k++];
        const std::string field = where + ".args[" + std::to_string(k - 1) + "]";
        // An offset in the workspace block: inside it.
        auto offset = [&](const char* key) {
            return check::unsigned_integer(a[key], s.workspace_bytes, file, field + "." + key);
        };
        Slot& slot = s.slots[at];
        if (a.contains("ffts")) {
            slot = {Slot::Kind::ffts, 0};
        } else if (a.contains("tensor")) {
            slot = {Slot::Kind::tensor,
                    check::index(a["tensor"], tensors, "tensors", file, field + ".tensor")};
        } else if (a.contains("arena")) {
            slot = {Slot::Kind::arena, offset("arena")};
        } else if (a.contains("workspace")) {
            slot = {Slot::Kind::workspace, offset("workspace")};
        } else if (a.contains("superkernel_workspace") && !a["superkernel_workspace"].is_null()) {
            slot = {Slot::Kind::superkernel_workspace, offset("superkernel_workspace")};
        } else if (a.contains("lock")) {
            auto event = check::member<std::int64_t>(a, "lock", file, field);
            auto lock = locks.find(event);
            if (lock == locks.end())
                throw support::Error(file + ": " + field + ".lock: event " + std::to_string(event) +
                                     " is not in 'locks'");
            slot = {Slot::Kind::lock, lock->second};
            if (a.value("role", std::string()) == "wait") {
                s.wait_slots.push_back(at);
                if (a.value("peer", std::string()) == "launch")
                    s.launch_waits.push_back(at);
            }
        } else if (a.contains("sub_operator_params")) {
            s.unsupported = "its sub-kernel " + a.value("op", std::string()) +
                            " names its parameters (sub_operator_params) in a way this runtime "
                            "cannot map to its tensors: " +
                            a.value("reason", std::string("(no reason given)"));
        }
    }
}

// Everything npu/program.json says.
struct Program {
    std::string graph, arch;
    std::vector<TensorInfo> tensors;
    std::vector<OpStep> ops;
    std::vector<SegmentStep> segments;
    std::vector<std::int64_t> locks;
    std::map<std::int64_t, std::size_t> lock_of; ///< event -> its index in locks
    std::vector<Step> steps;
};

// The tensor indices of list `key` of `o` (`where`.key), each checked.
std::vector<std::size_t> tensor_refs(const json& o, const char* key, const Program& p,
                                     const std::string& file, const std::string& where) {
    std::vector<std::size_t> out;
    for (const auto& i : o.at(key))
        out.push_back(check::index(i, p.tensors.size(), "tensors", file,
                                   where + "." + key + "[" + std::to_string(out.size()) + "]"));
    return out;
}

// Every tensor: at most SK_MAX_RANK dims, a size memory can hold, a name of its own.
void read_tensors(const json& j, Program& p, const std::string& file) {
    for (const auto& t : j.at("tensors")) {
        const std::string where = "tensors[" + std::to_string(p.tensors.size()) + "]";
        TensorInfo info;
        info.name = t.at("name").get<std::string>();
        info.dtype = t.at("dtype").get<std::string>();
        info.dt = kernel::host_dtype(info.dtype).value_or(0);
        info.shape = check::integers(t.at("shape"), file, where + ".shape");
        check::rank(info, file, where);
        info.bytes = check::member<std::uint64_t>(t, "bytes", file, where);
        check::allocatable(info.bytes, file, where + ".bytes");
        info.graph_input = t.at("graph_input").get<bool>();
        info.graph_output = t.at("graph_output").get<bool>();
        p.tensors.push_back(std::move(info));
    }
    check::unique_names(p.tensors, file);
}

void read_ops(const json& j, Program& p, const std::string& file) {
    for (const auto& o : j.at("ops")) {
        const std::string where = "ops[" + std::to_string(p.ops.size()) + "]";
        OpStep op;
        op.name = o.at("name").get<std::string>();
        op.kind = o.at("kind").get<std::string>();
        op.type = o.value("type", std::string());
        op.stream = check::member<std::uint32_t>(o, "stream", file, where);
        op.inputs = tensor_refs(o, "inputs", p, file, where);
        op.outputs = tensor_refs(o, "outputs", p, file, where);
        op.send = check::integers(o.at("send_events"), file, where + ".send_events");
        op.recv = check::integers(o.at("recv_events"), file, where + ".recv_events");
        op.segment = check::member<int>(o, "segment", file, where); // its range: read_steps
        if (!o.at("kernel").is_null()) {
            op.kernel = kernel_launch(o["kernel"], file, where + ".kernel");
            op.kernel->op_type = op.type;
        }
        p.ops.push_back(std::move(op));
    }
}

void read_segments(const json& j, Program& p, const std::string& file) {
    p.locks = check::integers(j.at("locks"), file, "locks");
    auto& lock_index = p.lock_of;
    for (std::size_t i = 0; i < p.locks.size(); ++i)
        lock_index.emplace(p.locks[i], i);
    for (const auto& s : j.at("segments")) {
        const std::string where = "segments[" + std::to_string(p.segments.size()) + "]";
        SegmentStep seg;
        seg.name = s.at("name").get<std::string>();
        seg.stream = check::member<std::uint32_t>(s, "stream", file, where);
        for (const auto& i : s.at("ops"))
            seg.ops.push_back(check::index(i, p.ops.size(), "operators", file,
                                           where + ".ops[" + std::to_string(seg.ops.size()) + "]"));
        json k = s;
        k["ffts"] = false; // the table's slot 0 says it
        k.erase("workspace");
        seg.launch = kernel_launch(k, file, where);
        seg.workspace_bytes = check::member<std::uint64_t>(s, "workspace_bytes", file, where);
        check::allocatable(seg.workspace_bytes, file, where + ".workspace_bytes");
        read_slots(seg, s.at("args"), lock_index, p.tensors.size(), file, where);
        // Its arena tensors are no caller's to bind.
        for (const auto& arg : s.at("args"))
            if (arg.contains("arena"))
                for (auto& t : p.tensors)
                    t.arena = t.arena || t.name == arg.value("name", std::string());
        p.segments.push_back(std::move(seg));
    }
}

// The steps, and each operator's SuperKernel: an operator of a SuperKernel is launched by it,
// never by a step of its own (a fused run launches a step's operator with its own kernel).
void read_steps(const json& j, Program& p, const std::string& file) {
    for (std::size_t i = 0; i < p.ops.size(); ++i)
        if (p.ops[i].segment < -1 ||
            p.ops[i].segment >= static_cast<std::int64_t>(p.segments.size()))
            throw support::Error(file + ": ops[" + std::to_string(i) + "].segment: " +
                                 std::to_string(p.ops[i].segment) + " is out of range (" +
                                 std::to_string(p.segments.size()) + " segments; -1: none)");
    for (const auto& st : j.at("steps")) {
        bool seg = st.contains("segment");
        std::string field =
            "steps[" + std::to_string(p.steps.size()) + "]." + (seg ? "segment" : "op");
        auto i = seg ? check::index(st["segment"], p.segments.size(), "segments", file, field)
                     : check::index(st.at("op"), p.ops.size(), "operators", file, field);
        if (!seg && p.ops[i].segment >= 0)
            throw support::Error(file + ": " + field + ": operator '" + p.ops[i].name +
                                 "' is part of SuperKernel " +
                                 p.segments[static_cast<std::size_t>(p.ops[i].segment)].name +
                                 ", which launches it; a step cannot launch it alone");
        p.steps.push_back({seg, i});
    }
}

Program parse_program(const std::string& text, const std::string& file);

// The package's npu/program.json, read and checked (parse_program).
Program read_program(const std::string& dir) {
    const std::string file = dir + "/npu/program.json";
    std::string text;
    try {
        text = support::read_file(file);
    } catch (const support::Error& e) {
        throw ApiError(SKF_E_PACKAGE, std::string(e.what()) +
                                          " (an NPU package built by an skc without the NPU "
                                          "program, or a host package: rebuild it)");
    }
    return parse_program(text, file);
}

Program parse_program(const std::string& text, const std::string& file) {
    if (auto deep = support::check_json_depth(text))
        throw support::Error(file + ": " + *deep);
    Program p;
    try {
        json j = json::parse(text);
        if (j.at("format") != "skforge-npu-program" || j.at("version") != 1)
            throw ApiError(SKF_E_PACKAGE, file + ": not a version 1 skforge NPU program");
        p.graph = j.at("graph").get<std::string>();
        p.arch = j.at("arch").get<std::string>();
        read_tensors(j, p, file);
        read_ops(j, p, file);
        read_segments(j, p, file);
        read_steps(j, p, file);
    } catch (const json::exception& e) {
        throw ApiError(SKF_E_PACKAGE, file + ": damaged program: " + e.what());
    }
    return p;
}

// Why operator `op` cannot be launched on an NPU, or "": an AICPU tiling operator's kernel is an
// AICPU kernel, every other operator's an AI-core kernel.
std::string unlaunchable(const OpStep& op) {
    if (op.kind == "prefetch")
        return "";
    if (!op.kernel)
        return "it has no kernel in the program";
    const kernel::Magic* magic = kernel::find_magic(op.kernel->magic);
    bool cpu = magic != nullptr && magic->aicpu;
    if (op.kind == "aicpu_tiling" && !cpu)
        return "its kernel " + op.kernel->json + " has magic '" + op.kernel->magic +
               "', an AI-core binary's: the kernel of an aicpu_tiling operator runs on the AICPU "
               "(magic RT_DEV_BINARY_MAGIC_ELF_AICPU)";
    if (op.kind == "kernel" && cpu)
        return "its kernel " + op.kernel->json +
               " is an AICPU kernel (magic RT_DEV_BINARY_MAGIC_ELF_AICPU), whose arguments are "
               "the AICPU framework's; this runtime launches AICPU kernels of aicpu_tiling "
               "operators only";
    return "";
}

// One loaded libascendcl.so per process: aclInit may be called only once.
struct Library {
    void* handle = nullptr;
    acl::Api api{};
    bool initialised = false;
};

Library& library(unsigned device_id) {
    static std::mutex mutex;
    static Library lib;
    std::lock_guard lock(mutex);
    if (lib.handle == nullptr) {
        std::string name = ascendcl_library();
        void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr)
            throw ApiError(SKF_E_DEVICE,
                           "npu:" + std::to_string(device_id) + ": cannot load CANN's runtime " +
                               name + " (" + ::dlerror() +
                               "); install the CANN toolkit and source its set_env.sh (e.g. "
                               "'source /usr/local/Ascend/ascend-toolkit/set_env.sh') so that "
                               "LD_LIBRARY_PATH finds libascendcl.so");
        try {
            lib.api = acl::resolve(h, name);
        } catch (...) {
            ::dlclose(h);
            throw;
        }
        lib.handle = h; // kept for the process's life, as CANN's runtime expects
    }
    if (!lib.initialised) {
        acl::Error rc = lib.api.init(nullptr);
        // An application that initialised ACL itself (an inference engine) is no error.
        if (rc != acl::k_success && rc != acl::k_repeat_initialize)
            throw ApiError(SKF_E_DEVICE, "npu:" + std::to_string(device_id) +
                                             ": aclInit failed with error " + std::to_string(rc));
        lib.initialised = true;
    }
    return lib;
}

// What an executor holds of the device, released in reverse (also when its constructor fails
// half way): streams synchronised and destroyed, events, binaries, memory.
struct DeviceResources {
    const acl::Api& api;
    std::vector<void*> allocations, binaries, events, streams;

    explicit DeviceResources(const acl::Api& a) : api(a) {}
    DeviceResources(const DeviceResources&) = delete;
    DeviceResources& operator=(const DeviceResources&) = delete;
    ~DeviceResources() {
        for (void* s : streams)
            api.synchronize_stream(s);
        for (void* e : events)
            api.destroy_event(e);
        for (void* s : streams)
            api.destroy_stream(s);
        for (void* b : binaries)
            api.binary_unload(b);
        for (void* p : allocations)
            api.free(p);
    }
};

class NpuExecutor final : public Executor {
  public:
    NpuExecutor(const std::string& dir, unsigned device, Program program);
    NpuExecutor(const NpuExecutor&) = delete;
    NpuExecutor& operator=(const NpuExecutor&) = delete;

    void bind(std::size_t i, void* memory) override { m_bound[i] = memory; }
    std::uint64_t run_fused(void* stream) override;
    std::uint64_t run_unfused(void* stream) override;
    std::uint64_t run_segment(std::size_t segment, void* stream) override;
    void drop_side_waits(bool drop) override {
        if (drop)
            throw ApiError(SKF_E_UNSUPPORTED,
                           "skf_debug_drop_side_waits: a test switch of the host runtime");
    }
    const Program& program() const { return m_program; }
    void* device_malloc(std::size_t bytes) override;
    void device_free(void* memory) override;
    void copy(void* dst, const void* src, std::size_t bytes, Copy direction) override;

  private:
    void check(acl::Error rc, const std::string& what) const;
    void* device_alloc(std::uint64_t bytes, const std::string& what);
    void load(KernelLaunch& l, const std::string& what);
    void prepare_dependencies();
    void* data(std::size_t t) const { return m_bound[t] != nullptr ? m_bound[t] : m_own[t]; }
    void* stream_of(std::uint32_t plan_stream, void* caller) const;
    std::vector<std::uint64_t> segment_args(const SegmentStep& s) const;
    void launch(KernelLaunch& l, const std::vector<std::uint64_t>& slots, void* stream,
                bool overflow);
    void launch_segment(std::size_t s, void* stream);
    void launch_op(std::size_t op, void* stream);
    void run_beside(std::size_t op, void* stream);
    void run_beside_ordered(std::size_t op, void* stream);
    void* lock_address(std::int64_t event) const;
    bool is_beside(const Step& st) const;
    bool lock_between(const Step& a, const Step& b) const;
    void refuse_unlaunchable(bool fused) const;
    void finish(void* caller);
    void set_lock(const SegmentStep& seg, std::size_t slot, std::uint64_t value);

    std::string m_dir;
    std::string m_where; ///< "npu:<id>"
    const acl::Api& m_api;
    DeviceResources m_res;
    Program m_program;
    std::vector<void*> m_bound, m_own;
    void* m_own_stream = nullptr; ///< the main stream when the caller gives none
    std::map<std::string, std::pair<void*, std::string>> m_loaded; ///< binary -> handle, magic
    std::map<std::uint32_t, void*> m_stream_of;                    ///< plan stream -> own stream
    std::uint32_t m_main_stream = 0;
    std::vector<std::vector<std::size_t>> m_waits; ///< per step: earlier steps on other streams
    std::vector<void*> m_step_event;               ///< per step: recorded when others wait for it
    void* m_locks = nullptr;
    void* m_ffts = nullptr;
    void* m_overflow = nullptr; ///< opbase's float overflow address, or null
    std::set<void*> m_user;     ///< what skf_device_malloc returned and skf_device_free did not
};

void NpuExecutor::check(acl::Error rc, const std::string& what) const {
    if (rc != acl::k_success)
        throw ApiError(SKF_E_DEVICE, m_where + ": " + what + " failed with error " +
                                         std::to_string(rc) + " (package " + m_dir + ")");
}

void* NpuExecutor::device_alloc(std::uint64_t bytes, const std::string& what) {
    if (bytes == 0)
        return nullptr;
    void* p = nullptr;
    check(m_api.malloc(&p, static_cast<std::size_t>(bytes), acl::k_malloc_huge_first),
          "aclrtMalloc of " + std::to_string(bytes) + " bytes for " + what);
    m_res.allocations.push_back(p);
    check(m_api.memset(p, static_cast<std::size_t>(bytes), 0, static_cast<std::size_t>(bytes)),
          "aclrtMemset of " + what);
    return p;
}

// Registers the binary (once per file) with the magic its JSON names and finds its function by
// the JSON's kernelName, as opbase's static-kernel launch does.
void NpuExecutor::load(KernelLaunch& l, const std::string& what) {
    const kernel::Magic* magic = kernel::find_magic(l.magic);
    if (magic == nullptr || magic->value == kernel::k_host_magic)
        throw ApiError(SKF_E_PACKAGE, m_dir + "/" + l.json + ": " + what + " has magic '" +
                                          l.magic + "', which is no NPU binary's");
    l.cpu = magic->aicpu;
    auto it = m_loaded.find(l.binary);
    if (it == m_loaded.end()) {
        std::string bytes =
            support::read_file(package_path(m_dir, l.binary, m_dir + "/npu/program.json"));
        // An AI-core binary is registered with its magic; an AICPU kernel's in CPU kernel mode
        // 2 ("load data"), as opbase loads a custom AICPU operator's (aicpu_json_load_manager).
        acl::BinaryLoadOption option{acl::k_load_option_magic, {}};
        option.value.magic = magic->value;
        if (l.cpu) {
            option.type = acl::k_load_option_cpu_kernel_mode;
            option.value.cpu_kernel_mode = acl::k_cpu_kernel_mode_data;
        }
        acl::BinaryLoadOptions options{&option, 1};
        void* binary = nullptr;
        check(m_api.binary_load_from_data(bytes.data(), bytes.size(), &options, &binary),
              "aclrtBinaryLoadFromData of " + l.binary + " (" + what + ")");
        m_res.binaries.push_back(binary);
        it = m_loaded.emplace(l.binary, std::make_pair(binary, l.magic)).first;
    } else if (it->second.second != l.magic) {
        throw ApiError(SKF_E_PACKAGE, m_dir + "/" + l.binary + " is loaded with two magics");
    }
    if (l.cpu)
        check(m_api.register_cpu_func(it->second.first, l.kernel_name.c_str(), l.op_type.c_str(),
                                      &l.function),
              "aclrtRegisterCpuFunc '" + l.kernel_name + "' of " + l.op_type + " in " + l.binary +
                  " (" + what + ")");
    else
        check(m_api.binary_get_function(it->second.first, l.kernel_name.c_str(), &l.function),
              "aclrtBinaryGetFunction '" + l.kernel_name + "' in " + l.binary + " (" + what + ")");
    for (auto bytes : l.workspace)
        l.workspace_memory.push_back(device_alloc(bytes, what + "'s workspace"));
}

NpuExecutor::NpuExecutor(const std::string& dir, unsigned device, Program program)
    : m_dir(dir), m_where("npu:" + std::to_string(device)), m_api(library(device).api),
      m_res(m_api), m_program(std::move(program)) {
    {
        check(m_api.set_device(static_cast<std::int32_t>(device)), "aclrtSetDevice");
        const auto& tensors = m_program.tensors;
        m_bound.assign(tensors.size(), nullptr);
        m_own.assign(tensors.size(), nullptr);
        // Intermediates get memory of their own (arena tensors too: an unfused run writes them).
        for (std::size_t t = 0; t < tensors.size(); ++t)
            if (!tensors[t].graph_input && !tensors[t].graph_output)
                m_own[t] = device_alloc(tensors[t].bytes, "tensor " + tensors[t].name);
        m_locks = device_alloc(m_program.locks.size() * k_lock_stride, "the notify/wait locks");
        if (m_program.arch != "dav-3510")
            check(m_api.get_hardware_sync_addr(&m_ffts), "aclrtGetHardwareSyncAddr");
        // The float overflow address, in the two modes opbase passes it in (indv_executor_utils.h
        // NnopbaseSetOverFlowAddr); else null.
        int mode = -1;
        if (m_api.get_device_sat_mode != nullptr && m_api.ctx_get_float_overflow_addr != nullptr &&
            m_api.get_device_sat_mode(&mode) == acl::k_success &&
            (mode == acl::k_overflow_saturation || mode == acl::k_overflow_infnan))
            check(m_api.ctx_get_float_overflow_addr(&m_overflow), "aclrtCtxGetFloatOverflowAddr");
        for (auto& s : m_program.segments) {
            s.workspace = device_alloc(s.workspace_bytes, "SuperKernel " + s.name + "'s workspace");
            load(s.launch, "SuperKernel " + s.name);
        }
        for (auto& op : m_program.ops)
            if (op.kernel && unlaunchable(op).empty())
                load(*op.kernel, "operator " + op.name);
        prepare_dependencies();
    }
}

// The step of every operator, each step's plan stream, and which earlier steps on other streams
// it must wait for: the producers of its inputs and the senders of its events.
void NpuExecutor::prepare_dependencies() {
    const auto& p = m_program;
    std::vector<std::uint32_t> stream(p.steps.size());
    std::map<std::size_t, std::size_t> step_of_tensor;
    std::map<std::int64_t, std::size_t> step_of_event;
    std::set<std::uint32_t> streams;
    m_waits.assign(p.steps.size(), {});
    m_step_event.assign(p.steps.size(), nullptr);
    for (std::size_t i = 0; i < p.steps.size(); ++i) {
        std::vector<std::size_t> ops =
            p.steps[i].segment ? p.segments[p.steps[i].index].ops : std::vector{p.steps[i].index};
        stream[i] = p.steps[i].segment ? p.segments[p.steps[i].index].stream
                                       : p.ops[p.steps[i].index].stream;
        streams.insert(stream[i]);
        std::set<std::size_t> deps;
        for (auto o : ops) {
            for (auto t : p.ops[o].inputs)
                if (auto it = step_of_tensor.find(t); it != step_of_tensor.end())
                    deps.insert(it->second);
            for (auto e : p.ops[o].recv)
                if (auto it = step_of_event.find(e); it != step_of_event.end())
                    deps.insert(it->second);
        }
        for (auto o : ops) {
            for (auto t : p.ops[o].outputs)
                step_of_tensor[t] = i;
            for (auto e : p.ops[o].send)
                step_of_event[e] = i;
        }
        // Between an operator beside the cores and a SuperKernel a lock orders them: a stream
        // wait there would hold the one until the other ends, while the SuperKernel spins on the
        // lock inside (a deadlock on a device).
        for (auto d : deps)
            if (d != i && stream[d] != stream[i] &&
                !((is_beside(p.steps[i]) || is_beside(p.steps[d])) &&
                  (lock_between(p.steps[d], p.steps[i]) || lock_between(p.steps[i], p.steps[d]))))
                m_waits[i].push_back(d);
    }
    m_main_stream = streams.empty() ? 0 : *streams.begin();
    check(m_api.create_stream(&m_own_stream), "aclrtCreateStream");
    m_res.streams.push_back(m_own_stream);
    for (auto s : streams)
        if (s != m_main_stream) {
            void* own = nullptr;
            check(m_api.create_stream(&own), "aclrtCreateStream for stream " + std::to_string(s));
            m_res.streams.push_back(own);
            m_stream_of[s] = own;
        }
    for (const auto& w : m_waits)
        for (auto d : w)
            if (m_step_event[d] == nullptr) {
                check(m_api.create_event(&m_step_event[d]), "aclrtCreateEvent");
                m_res.events.push_back(m_step_event[d]);
            }
}

void* NpuExecutor::stream_of(std::uint32_t plan_stream, void* caller) const {
    if (plan_stream == m_main_stream)
        return caller != nullptr ? caller : m_own_stream;
    return m_stream_of.at(plan_stream);
}

// The SuperKernel's parameter table with the tensors' memory as bound now.
std::vector<std::uint64_t> NpuExecutor::segment_args(const SegmentStep& s) const {
    std::vector<std::uint64_t> out(s.slots.size(), 0);
    auto in_block = [&](std::uint64_t off) {
        return s.workspace == nullptr ? 0 : reinterpret_cast<std::uint64_t>(s.workspace) + off;
    };
    for (std::size_t i = 0; i < s.slots.size(); ++i) {
        const Slot& slot = s.slots[i];
        switch (slot.kind) {
        case Slot::Kind::ffts:
            out[i] = reinterpret_cast<std::uint64_t>(m_ffts);
            break;
        case Slot::Kind::tensor:
            out[i] = reinterpret_cast<std::uint64_t>(data(slot.value));
            break;
        case Slot::Kind::arena:
        case Slot::Kind::workspace:
        case Slot::Kind::superkernel_workspace:
            out[i] = in_block(slot.value);
            break;
        case Slot::Kind::lock:
            out[i] = reinterpret_cast<std::uint64_t>(m_locks) + slot.value * k_lock_stride;
            break;
        case Slot::Kind::null:
            break;
        }
    }
    return out;
}

// One launch: the argument buffer is the slots, 8 bytes each, in order, then (for an operator
// with tiling data) a placeholder the runtime points at its copy of the tiling data, then (for an
// operator) the overflow address. The launch carries the JSON's schedule mode and local memory
// size as opbase's static-kernel launch does (indv_executor.cpp, CreateRtsLaunchCfgAttrs). An
// AICPU kernel is launched with its slots as host arguments on one block, as opbase launches a
// custom AICPU operator (aicpu_task.cpp), with no attributes.
void NpuExecutor::launch(KernelLaunch& l, const std::vector<std::uint64_t>& slots, void* stream,
                         bool overflow) {
    if (l.cpu) {
        std::vector<std::uint64_t> host(slots);
        acl::LaunchKernelAttr none{};
        acl::LaunchKernelCfg cfg{&none, 0};
        check(m_api.launch_kernel_with_host_args(l.function, 1, stream, &cfg, host.data(),
                                                 host.size() * sizeof(std::uint64_t), nullptr, 0),
              "aclrtLaunchKernelWithHostArgs of " + l.kernel_name);
        return;
    }
    void* args = nullptr;
    check(m_api.kernel_args_init(l.function, &args), "aclrtKernelArgsInit for " + l.kernel_name);
    for (auto slot : slots) {
        void* param = nullptr;
        check(m_api.kernel_args_append(args, &slot, sizeof slot, &param),
              "aclrtKernelArgsAppend for " + l.kernel_name);
    }
    if (l.has_tiling) {
        void* param = nullptr;
        void* buffer = nullptr;
        check(m_api.kernel_args_append_place_holder(args, &param),
              "aclrtKernelArgsAppendPlaceHolder for " + l.kernel_name);
        check(m_api.kernel_args_get_place_holder_buffer(args, param, l.tiling.size(), &buffer),
              "aclrtKernelArgsGetPlaceHolderBuffer for " + l.kernel_name);
        if (!l.tiling.empty())
            std::memcpy(buffer, l.tiling.data(), l.tiling.size());
    }
    if (overflow) {
        auto address = reinterpret_cast<std::uint64_t>(m_overflow);
        void* param = nullptr;
        check(m_api.kernel_args_append(args, &address, sizeof address, &param),
              "aclrtKernelArgsAppend for " + l.kernel_name);
    }
    check(m_api.kernel_args_finalize(args), "aclrtKernelArgsFinalize for " + l.kernel_name);
    acl::LaunchKernelAttr attrs[2] = {{acl::k_attr_schedule_mode, {}},
                                      {acl::k_attr_dyn_ubuf_size, {}}};
    attrs[0].value.schedule_mode = l.schedule_mode;
    attrs[1].value.dyn_ubuf_size = l.local_memory_size;
    acl::LaunchKernelCfg cfg{attrs, 2};
    check(m_api.launch_kernel_with_config(l.function, l.block_dim, stream, &cfg, args, nullptr),
          "aclrtLaunchKernelWithConfig of " + l.kernel_name);
}

void NpuExecutor::launch_segment(std::size_t s, void* stream) {
    auto& seg = m_program.segments[s];
    launch(seg.launch, segment_args(seg), stream, false);
}

// An operator alone, as opbase lays a static kernel's arguments out (indv_executor.cpp,
// NnopbaseExecutorPrepareParamsExt): the FFTS address for a MIX kernel, inputs, outputs, a
// workspace each (one null slot when it has none), its tiling data, the overflow address. An
// AICPU tiling kernel gets the same but for the FFTS address, the tiling data and the overflow
// address (our choice: share/doc/npu-program.md).
void NpuExecutor::launch_op(std::size_t i, void* stream) {
    auto& op = m_program.ops[i];
    auto& k = *op.kernel;
    std::vector<std::uint64_t> slots;
    if (k.ffts && !k.cpu)
        slots.push_back(reinterpret_cast<std::uint64_t>(m_ffts));
    for (auto t : op.inputs)
        slots.push_back(reinterpret_cast<std::uint64_t>(data(t)));
    for (auto t : op.outputs)
        slots.push_back(reinterpret_cast<std::uint64_t>(data(t)));
    if (k.workspace_memory.empty())
        slots.push_back(0);
    for (void* w : k.workspace_memory)
        slots.push_back(reinterpret_cast<std::uint64_t>(w));
    launch(k, slots, stream, !k.cpu);
}

void* NpuExecutor::lock_address(std::int64_t event) const {
    return static_cast<char*>(m_locks) + m_program.lock_of.at(event) * k_lock_stride;
}

// An operator beside the cores on `stream`: an AICPU tiling kernel, or a prefetch, one CMO
// prefetch task per tensor (aclrtCmoAsync, the public form of GE's Cmo task).
void NpuExecutor::run_beside(std::size_t i, void* stream) {
    const auto& op = m_program.ops[i];
    if (op.kind != "prefetch") {
        launch_op(i, stream);
        return;
    }
    for (auto t : op.inputs)
        check(m_api.cmo_async(data(t), static_cast<std::size_t>(m_program.tensors[t].bytes),
                              acl::k_cmo_prefetch, stream),
              "aclrtCmoAsync (prefetch) of tensor " + m_program.tensors[t].name + " for operator " +
                  op.name);
}

bool NpuExecutor::is_beside(const Step& st) const {
    return !st.segment && m_program.ops[st.index].kind != "kernel";
}

// Whether a lock (an event of `locks`) goes from an operator of step `a` to one of step `b`.
bool NpuExecutor::lock_between(const Step& a, const Step& b) const {
    const auto& p = m_program;
    auto ops = [&](const Step& st) {
        return st.segment ? p.segments[st.index].ops : std::vector{st.index};
    };
    for (auto x : ops(a))
        for (auto e : p.ops[x].send)
            if (p.lock_of.contains(e))
                for (auto y : ops(b))
                    if (std::find(p.ops[y].recv.begin(), p.ops[y].recv.end(), e) !=
                        p.ops[y].recv.end())
                        return true;
    return false;
}

// What a fused (or unfused) run cannot launch, refused before anything is launched.
void NpuExecutor::refuse_unlaunchable(bool fused) const {
    const auto& p = m_program;
    const std::string call = fused ? "skf_run" : "skf_run_unfused";
    for (const auto& st : p.steps)
        if (st.segment && !p.segments[st.index].unsupported.empty())
            throw ApiError(SKF_E_UNSUPPORTED,
                           call + ": SuperKernel " + p.segments[st.index].name +
                               " cannot be launched: " + p.segments[st.index].unsupported);
    for (const auto& op : p.ops) {
        if (fused && op.segment >= 0)
            continue;
        if (auto why = unlaunchable(op); !why.empty())
            throw ApiError(SKF_E_UNSUPPORTED,
                           call + ": operator '" + op.name + "' (" + op.kind +
                               ") cannot be launched on an NPU: " + why +
                               " (skf_run_segment launches each SuperKernel, with its waits on "
                               "operators outside it counted as satisfied)");
        if (op.kind == "kernel" && !op.kernel->has_tiling)
            throw ApiError(SKF_E_UNSUPPORTED,
                           call + ": operator '" + op.name + "' cannot be launched alone: its " +
                               "kernel " + m_dir + "/" + op.kernel->json +
                               " has no tiling data (runInfo.tiling_data, which the op compiler " +
                               "writes for a static kernel); skf_run_segment launches the " +
                               "package's SuperKernels without it");
    }
}

// Writes `value` into the lock of slot `slot` of `seg`.
void NpuExecutor::set_lock(const SegmentStep& seg, std::size_t slot, std::uint64_t value) {
    void* at = static_cast<char*>(m_locks) + seg.slots[slot].value * k_lock_stride;
    check(m_api.memcpy(at, sizeof value, &value, sizeof value, acl::k_memcpy_host_to_device),
          "aclrtMemcpy of a lock of SuperKernel " + seg.name);
}

// Returns when every stream the run used has finished.
void NpuExecutor::finish(void* caller) {
    for (void* s : m_res.streams)
        check(m_api.synchronize_stream(s), "aclrtSynchronizeStream");
    if (caller != nullptr)
        check(m_api.synchronize_stream(caller), "aclrtSynchronizeStream");
}

std::uint64_t NpuExecutor::run_fused(void* stream) {
    refuse_unlaunchable(true);
    // Locks start at zero every run: the kernels clear their wait locks, not what they notify.
    if (m_locks != nullptr)
        check(m_api.memset(m_locks, m_program.locks.size() * k_lock_stride, 0,
                           m_program.locks.size() * k_lock_stride),
              "aclrtMemset of the notify/wait locks");
    // A wait on another launch is satisfied by the streams' order: its lock holds 1 from the start.
    for (const auto& seg : m_program.segments)
        for (auto slot : seg.launch_waits)
            set_lock(seg, slot, 1);
    std::uint64_t launches = 0;
    for (std::size_t i = 0; i < m_program.steps.size(); ++i) {
        const auto& st = m_program.steps[i];
        void* s = stream_of(st.segment ? m_program.segments[st.index].stream
                                       : m_program.ops[st.index].stream,
                            stream);
        for (auto d : m_waits[i])
            check(m_api.stream_wait_event(s, m_step_event[d]), "aclrtStreamWaitEvent");
        if (st.segment) {
            launch_segment(st.index, s);
            ++launches;
        } else if (is_beside(st)) {
            run_beside_ordered(st.index, s);
        } else {
            launch_op(st.index, s);
            ++launches;
        }
        if (m_step_event[i] != nullptr)
            check(m_api.record_event(m_step_event[i], s), "aclrtRecordEvent");
    }
    finish(stream);
    return launches;
}

// An operator beside the cores in the fused run, ordered with the SuperKernels by their locks as
// GE orders them with RecvMem/SendMem tasks: on its stream it waits until each lock it receives
// holds 1 (aclrtValueWait), runs, then writes 1 into each lock it sends (aclrtValueWrite).
void NpuExecutor::run_beside_ordered(std::size_t i, void* stream) {
    const auto& op = m_program.ops[i];
    for (auto e : op.recv)
        if (m_program.lock_of.contains(e))
            check(m_api.value_wait(lock_address(e), 1, acl::k_wait_value_eq, stream),
                  "aclrtValueWait on the lock of event " + std::to_string(e) + " for operator " +
                      op.name);
    run_beside(i, stream);
    for (auto e : op.send)
        if (m_program.lock_of.contains(e))
            check(m_api.value_write(lock_address(e), 1, 0, stream),
                  "aclrtValueWrite of the lock of event " + std::to_string(e) + " by operator " +
                      op.name);
}

// Every operator in graph order on the main stream; those beside the cores are not counted as
// launches (as on the host).
std::uint64_t NpuExecutor::run_unfused(void* stream) {
    refuse_unlaunchable(false);
    std::uint64_t launches = 0;
    void* s = stream_of(m_main_stream, stream);
    for (std::size_t i = 0; i < m_program.ops.size(); ++i) {
        if (m_program.ops[i].kind == "kernel") {
            launch_op(i, s);
            ++launches;
        } else {
            run_beside(i, s);
        }
    }
    finish(stream);
    return launches;
}

void* NpuExecutor::device_malloc(std::size_t bytes) {
    void* p = device_alloc(std::max<std::size_t>(bytes, 1), "skf_device_malloc");
    m_user.insert(p);
    return p;
}

void NpuExecutor::device_free(void* memory) {
    if (m_user.erase(memory) == 0)
        throw ApiError(SKF_E_ARGUMENT, "skf_device_free: " + m_where +
                                           ": not memory that skf_device_malloc of this handle "
                                           "returned (freed twice?)");
    std::erase(m_res.allocations, memory);
    check(m_api.free(memory), "aclrtFree (skf_device_free)");
}

void NpuExecutor::copy(void* dst, const void* src, std::size_t bytes, Copy direction) {
    bool in = direction == Copy::to_device;
    check(m_api.memcpy(dst, bytes, src, bytes,
                       in ? acl::k_memcpy_host_to_device : acl::k_memcpy_device_to_host),
          std::string("aclrtMemcpy ") + (in ? "host to device" : "device to host") + " of " +
              std::to_string(bytes) + " bytes");
}

std::uint64_t NpuExecutor::run_segment(std::size_t segment, void* stream) {
    const auto& seg = m_program.segments[segment];
    if (!seg.unsupported.empty())
        throw ApiError(SKF_E_UNSUPPORTED, "skf_run_segment: SuperKernel " + seg.name +
                                              " cannot be launched: " + seg.unsupported);
    // Its waits count as satisfied (the caller ran those operators): each wait lock holds 1,
    // each notify lock 0, before it starts.
    for (std::size_t i = 0; i < seg.slots.size(); ++i)
        if (seg.slots[i].kind == Slot::Kind::lock) {
            bool wait =
                std::find(seg.wait_slots.begin(), seg.wait_slots.end(), i) != seg.wait_slots.end();
            set_lock(seg, i, wait ? 1 : 0);
        }
    launch_segment(segment, stream_of(m_main_stream, stream));
    finish(stream);
    return 1;
}

// What a handle knows of an NPU package beside its executor (as open.cpp's describe for a host
// package): tensors, the bindable ones, and what each SuperKernel reads and writes.
void describe_npu(Opened& o, const Program& p) {
    o.graph = p.graph;
    o.operator_count = p.ops.size();
    o.tensors = p.tensors;
    for (std::size_t i = 0; i < o.tensors.size(); ++i) {
        o.by_name.emplace(o.tensors[i].name, i);
        if (!o.tensors[i].arena)
            o.listed.push_back(i);
    }
    o.bound.assign(o.tensors.size(), false);
    for (const auto& s : p.segments) {
        o.segment_names.push_back(s.name);
        std::vector<std::size_t> used;
        std::vector<bool> writes;
        for (const auto& slot : s.slots)
            if (slot.kind == Slot::Kind::tensor &&
                std::find(used.begin(), used.end(), slot.value) == used.end()) {
                used.push_back(slot.value);
                bool w = false;
                for (auto op : s.ops) {
                    const auto& outs = p.ops[op].outputs;
                    w = w || std::find(outs.begin(), outs.end(), slot.value) != outs.end();
                }
                writes.push_back(w);
            }
        o.segment_tensors.push_back(std::move(used));
        o.segment_writes.push_back(std::move(writes));
    }
}

} // namespace

void check_npu_program(const std::string& text, const std::string& file) {
    parse_program(text, file);
}

void check_device_fits(const package::Manifest& m, unsigned device_id) {
    const acl::Api& api = library(device_id).api;
    install::HostCann host;
    acl::CannPackageVersion v{};
    const char* ignore = std::getenv("SKFORGE_IGNORE_CANN_VERSION");
    if (api.get_cann_version != nullptr && !(ignore != nullptr && std::string(ignore) == "1") &&
        api.get_cann_version(acl::k_pkg_name_cann, &v) == acl::k_success) {
        v.version[sizeof v.version - 1] = '\0';
        host.version = kernel::version_prefix(v.version); // as the installers read version.info
        host.version_from = "aclsysGetCANNVersion";
    }
    if (api.get_soc_name != nullptr)
        if (const char* soc = api.get_soc_name(); soc != nullptr)
            if (auto dir = kernel::soc_dir(soc)) {
                host.soc_dir = std::string(*dir);
                host.soc_from = std::string("aclrtGetSocName: ") + soc;
            }
    auto refusals = install::stamp_refusals(m, host);
    if (!refusals.empty())
        throw ApiError(SKF_E_UNSUPPORTED,
                       "npu:" + std::to_string(device_id) + ": " + refusals.front().message +
                           (refusals.front().kind == install::StampRefusal::Kind::release
                                ? " (SKFORGE_IGNORE_CANN_VERSION=1 opens it anyway)"
                                : ""));
}

std::unique_ptr<Executor> npu_executor(const std::string& dir, unsigned device_id, Opened& o) {
    library(device_id); // names set_env.sh when CANN's runtime is missing, before the package
    Program program = read_program(dir);
    auto ex = std::make_unique<NpuExecutor>(dir, device_id, std::move(program));
    describe_npu(o, ex->program());
    return ex;
}

} // namespace skforge::runtime
