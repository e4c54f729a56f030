// SPDX-License-Identifier: Apache-2.0
// A stand-in for CANN's libascendcl.so, written from the runtime API reference's prototypes
// (hicann/runtime include/external/acl/acl_rt.h): the calls libskforge_runtime makes, on host
// memory. It checks what it is handed the way the runtime would refuse it — a binary registered
// without a known magic, a function its binary does not define, an argument buffer used before
// it is finalised, a slot that points at no device memory, an event waited for before it was
// recorded, memory freed twice, an AICPU function launched other than opbase launches one, a
// launch attribute it does not know, a CMO or a lock task outside device memory — failing the
// call (ACL_ERROR_INVALID_PARAM) and recording why; and it records every call, every launch with
// its argument buffer slot by slot and its attributes, every AICPU launch, so a test can compare
// them with the package's SuperKernel and kernel JSONs. It runs no kernel: an aclrtValueWrite
// writes its value when it is called, an aclrtValueWait only records what it waits for.
//
// Test queries (not CANN's): skf_standin_log() is the record as JSON text, skf_standin_reset()
// empties it (keeping what is allocated and loaded), skf_standin_errors() counts refusals.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

using json = nlohmann::json;
using aclError = int;

namespace {

constexpr aclError k_ok = 0;
constexpr aclError k_invalid = 100000;                // ACL_ERROR_INVALID_PARAM
constexpr aclError k_repeat_init = 100002;            // ACL_ERROR_REPEAT_INITIALIZE
constexpr int k_load_option_magic = 2;                // ACL_RT_BINARY_LOAD_OPT_MAGIC
constexpr int k_load_option_cpu_kernel_mode = 3;      // ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE
constexpr int k_attr_schedule_mode = 1;               // ACL_RT_LAUNCH_KERNEL_ATTR_SCHEM_MODE
constexpr int k_attr_dyn_ubuf_size = 2;               // ACL_RT_LAUNCH_KERNEL_ATTR_DYN_UBUF_SIZE
constexpr std::uint32_t k_magic_aicore = 0x43554245U; // ACL_RT_BINARY_MAGIC_ELF_AICORE
constexpr std::uint32_t k_magic_vector = 0x41415246U; // ..._VECTOR_CORE
constexpr std::uint32_t k_magic_cube = 0x41494343U;   // ..._CUBE_CORE

struct LoadOption {
    int type;
    union {
        std::uint32_t magic;
        std::int32_t cpu_kernel_mode;
        std::uint32_t rsv[4];
    } value;
};
struct LaunchAttr {
    int id;
    union {
        std::uint8_t schedule_mode;
        std::uint32_t dyn_ubuf_size;
        std::uint32_t rsv[4];
    } value;
};
struct LaunchCfg {
    LaunchAttr* attrs;
    std::size_t num_attrs;
};
struct LoadOptions {
    LoadOption* options;
    std::size_t num_options;
};

struct Allocation {
    std::size_t id, size;
};
struct Binary {
    std::size_t id;
    std::string bytes;
    std::uint32_t magic; ///< 0 for a CPU kernel binary
};
struct Function {
    std::size_t binary;
    std::string name;
    std::vector<std::string> symbols;
    std::string op_type; ///< a CPU function's (aclrtRegisterCpuFunc), else empty
};
struct Args {
    const Function* function;
    std::vector<std::uint64_t> slots;
    std::vector<bool> place_holder;
    std::map<std::size_t, std::string> data; ///< place holder slot -> its data
    bool finalized = false;
};

struct State {
    std::mutex mutex;
    bool initialised = false;
    int device = -1;
    std::map<std::uintptr_t, Allocation> memory; ///< start -> allocation
    std::size_t next_allocation = 0;
    std::map<void*, std::unique_ptr<Binary>> binaries;
    std::vector<std::unique_ptr<Function>> functions;
    std::vector<std::unique_ptr<Args>> args;
    std::vector<std::unique_ptr<std::string>> place_holders;
    std::set<void*> streams, events, recorded;
    std::vector<std::unique_ptr<int>> handles; ///< what streams and events point at
    alignas(64) unsigned char ffts[64] = {};
    alignas(64) unsigned char overflow[64] = {};
    json calls = json::array(), launches = json::array(), errors = json::array();
    json cpu_launches = json::array();
};

State& state() {
    static State s;
    return s;
}

aclError refuse(State& s, const std::string& fn, const std::string& why) {
    s.errors.push_back(fn + ": " + why);
    s.calls.push_back({{"fn", fn}, {"rc", k_invalid}, {"error", why}});
    return k_invalid;
}

aclError ok(State& s, json call) {
    call["rc"] = k_ok;
    s.calls.push_back(std::move(call));
    return k_ok;
}

// The allocation holding [p, p + n), or nullptr.
const Allocation* find_memory(State& s, const void* p, std::size_t n, std::uintptr_t* start) {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto it = s.memory.upper_bound(a);
    if (it == s.memory.begin())
        return nullptr;
    --it;
    if (a + n > it->first + it->second.size)
        return nullptr;
    *start = it->first;
    return &it->second;
}

// Where a slot's value points: the FFTS address, null, an allocation and offset, or nowhere.
json describe_pointer(State& s, std::uint64_t v) {
    if (v == 0)
        return {{"null", true}};
    if (v == reinterpret_cast<std::uint64_t>(s.ffts))
        return {{"ffts", true}};
    if (v == reinterpret_cast<std::uint64_t>(s.overflow))
        return {{"overflow", true}};
    std::uintptr_t start = 0;
    if (const Allocation* a = find_memory(s, reinterpret_cast<void*>(v), 1, &start))
        return {{"allocation", a->id}, {"offset", v - start}, {"size", a->size}};
    return {{"nowhere", true}};
}

// The symbols of `bytes` that `name` resolves to: the name itself, or for a MIX kernel its
// `_mix_aic` / `_mix_aiv` entries, each followed by a terminator as in an ELF string table.
std::vector<std::string> symbols_for(const std::string& bytes, const std::string& name) {
    std::vector<std::string> out;
    for (const std::string& sym : {name, name + "_mix_aic", name + "_mix_aiv"}) {
        for (std::size_t at = bytes.find(sym); at != std::string::npos;
             at = bytes.find(sym, at + 1)) {
            std::size_t end = at + sym.size();
            char next = end < bytes.size() ? bytes[end] : '\0';
            char prev = at > 0 ? bytes[at - 1] : '\0';
            bool word = (std::isalnum(static_cast<unsigned char>(next)) == 0 && next != '_') &&
                        (std::isalnum(static_cast<unsigned char>(prev)) == 0 && prev != '_');
            if (word) {
                out.push_back(sym);
                break;
            }
        }
    }
    return out;
}

void* new_handle(State& s) {
    s.handles.push_back(std::make_unique<int>(0));
    return s.handles.back().get();
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) aclError aclInit(const char* config) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.initialised) {
        s.calls.push_back({{"fn", "aclInit"}, {"rc", k_repeat_init}});
        return k_repeat_init;
    }
    s.initialised = true;
    return ok(s, {{"fn", "aclInit"}, {"config", config == nullptr ? "" : config}});
}

__attribute__((visibility("default"))) aclError aclrtSetDevice(std::int32_t device) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!s.initialised)
        return refuse(s, "aclrtSetDevice", "called before aclInit");
    if (device != 0)
        return refuse(s, "aclrtSetDevice", "this stand-in has device 0 only");
    s.device = device;
    return ok(s, {{"fn", "aclrtSetDevice"}, {"device", device}});
}

__attribute__((visibility("default"))) aclError aclrtCreateStream(void** stream) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (stream == nullptr || s.device < 0)
        return refuse(s, "aclrtCreateStream", "no device set, or a null out pointer");
    *stream = new_handle(s);
    s.streams.insert(*stream);
    return ok(s, {{"fn", "aclrtCreateStream"}});
}

__attribute__((visibility("default"))) aclError aclrtDestroyStream(void* stream) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.streams.erase(stream) == 0)
        return refuse(s, "aclrtDestroyStream", "not a stream of aclrtCreateStream");
    return ok(s, {{"fn", "aclrtDestroyStream"}});
}

__attribute__((visibility("default"))) aclError aclrtSynchronizeStream(void* stream) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (stream != nullptr && !s.streams.contains(stream))
        return refuse(s, "aclrtSynchronizeStream", "not a stream of aclrtCreateStream");
    return ok(s, {{"fn", "aclrtSynchronizeStream"}});
}

__attribute__((visibility("default"))) aclError aclrtCreateEvent(void** event) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (event == nullptr)
        return refuse(s, "aclrtCreateEvent", "null out pointer");
    *event = new_handle(s);
    s.events.insert(*event);
    return ok(s, {{"fn", "aclrtCreateEvent"}});
}

__attribute__((visibility("default"))) aclError aclrtDestroyEvent(void* event) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.events.erase(event) == 0)
        return refuse(s, "aclrtDestroyEvent", "not an event of aclrtCreateEvent");
    s.recorded.erase(event);
    return ok(s, {{"fn", "aclrtDestroyEvent"}});
}

__attribute__((visibility("default"))) aclError aclrtRecordEvent(void* event, void* stream) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!s.events.contains(event) || (stream != nullptr && !s.streams.contains(stream)))
        return refuse(s, "aclrtRecordEvent", "unknown event or stream");
    s.recorded.insert(event);
    return ok(s, {{"fn", "aclrtRecordEvent"},
                  {"event", reinterpret_cast<std::uintptr_t>(event)},
                  {"stream", reinterpret_cast<std::uintptr_t>(stream)}});
}

__attribute__((visibility("default"))) aclError aclrtStreamWaitEvent(void* stream, void* event) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (!s.events.contains(event) || (stream != nullptr && !s.streams.contains(stream)))
        return refuse(s, "aclrtStreamWaitEvent", "unknown event or stream");
    if (!s.recorded.contains(event))
        return refuse(s, "aclrtStreamWaitEvent", "waits for an event not recorded yet");
    return ok(s, {{"fn", "aclrtStreamWaitEvent"},
                  {"event", reinterpret_cast<std::uintptr_t>(event)},
                  {"stream", reinterpret_cast<std::uintptr_t>(stream)}});
}

__attribute__((visibility("default"))) aclError aclrtMalloc(void** ptr, std::size_t size,
                                                            int policy) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (ptr == nullptr || size == 0 || policy < 0 || policy > 7)
        return refuse(s, "aclrtMalloc", "null out pointer, zero size or unknown policy");
    std::size_t rounded = (size + 63) / 64 * 64;
    *ptr = std::aligned_alloc(64, rounded);
    if (*ptr == nullptr)
        return refuse(s, "aclrtMalloc", "out of memory");
    s.memory[reinterpret_cast<std::uintptr_t>(*ptr)] = {s.next_allocation++, size};
    return ok(s, {{"fn", "aclrtMalloc"}, {"size", size}, {"allocation", s.next_allocation - 1}});
}

__attribute__((visibility("default"))) aclError aclrtFree(void* ptr) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto it = s.memory.find(reinterpret_cast<std::uintptr_t>(ptr));
    if (it == s.memory.end())
        return refuse(s, "aclrtFree", "not the start of device memory (freed twice?)");
    std::size_t id = it->second.id;
    s.memory.erase(it);
    std::free(ptr);
    return ok(s, {{"fn", "aclrtFree"}, {"allocation", id}});
}

__attribute__((visibility("default"))) aclError aclrtMemset(void* ptr, std::size_t max,
                                                            std::int32_t value, std::size_t n) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    std::uintptr_t start = 0;
    if (n > max || find_memory(s, ptr, n, &start) == nullptr)
        return refuse(s, "aclrtMemset", "outside device memory, or count > max");
    std::memset(ptr, value, n);
    return ok(s, {{"fn", "aclrtMemset"},
                  {"bytes", n},
                  {"at", describe_pointer(s, reinterpret_cast<std::uint64_t>(ptr))}});
}

__attribute__((visibility("default"))) aclError
aclrtMemcpy(void* dst, std::size_t max, const void* src, std::size_t n, int kind) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    std::uintptr_t start = 0;
    bool dst_device = kind == 1 || kind == 3, src_device = kind == 2 || kind == 3;
    if (n > max || (dst_device && find_memory(s, dst, n, &start) == nullptr) ||
        (src_device && find_memory(s, src, n, &start) == nullptr))
        return refuse(s, "aclrtMemcpy", "outside device memory, or count > max");
    std::memcpy(dst, src, n);
    json call = {{"fn", "aclrtMemcpy"}, {"bytes", n}, {"kind", kind}};
    if (dst_device)
        call["to"] = describe_pointer(s, reinterpret_cast<std::uint64_t>(dst));
    if (n == 8)
        call["value"] = *static_cast<const std::uint64_t*>(src);
    return ok(s, std::move(call));
}

__attribute__((visibility("default"))) aclError aclrtGetHardwareSyncAddr(void** addr) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (addr == nullptr)
        return refuse(s, "aclrtGetHardwareSyncAddr", "null out pointer");
    *addr = s.ffts;
    return ok(s, {{"fn", "aclrtGetHardwareSyncAddr"}});
}

__attribute__((visibility("default"))) aclError aclrtBinaryLoadFromData(const void* data,
                                                                        std::size_t length,
                                                                        const LoadOptions* options,
                                                                        void** binary) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    const char* fn = "aclrtBinaryLoadFromData";
    if (data == nullptr || length == 0 || binary == nullptr)
        return refuse(s, fn, "no data or a null out pointer");
    if (options == nullptr || options->num_options != 1 || options->options == nullptr ||
        (options->options[0].type != k_load_option_magic &&
         options->options[0].type != k_load_option_cpu_kernel_mode))
        return refuse(s, fn,
                      "expected exactly one option, ACL_RT_BINARY_LOAD_OPT_MAGIC or "
                      "ACL_RT_BINARY_LOAD_OPT_CPU_KERNEL_MODE");
    std::uint32_t magic = 0;
    if (options->options[0].type == k_load_option_cpu_kernel_mode) {
        if (options->options[0].value.cpu_kernel_mode != 2)
            return refuse(s, fn, "a CPU kernel's data is loaded in cpuKernelMode 2 (load data)");
    } else {
        magic = options->options[0].value.magic;
        if (magic != k_magic_aicore && magic != k_magic_vector && magic != k_magic_cube)
            return refuse(s, fn, "magic " + std::to_string(magic) + " is none of the three");
    }
    auto b = std::make_unique<Binary>();
    b->id = s.binaries.size();
    b->bytes.assign(static_cast<const char*>(data), length);
    b->magic = magic;
    *binary = b.get();
    std::size_t id = b->id;
    s.binaries.emplace(*binary, std::move(b));
    return ok(s, {{"fn", fn}, {"binary", id}, {"bytes", length}, {"magic", magic}});
}

__attribute__((visibility("default"))) aclError aclrtBinaryUnLoad(void* binary) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (s.binaries.erase(binary) == 0)
        return refuse(s, "aclrtBinaryUnLoad", "not a loaded binary (unloaded twice?)");
    return ok(s, {{"fn", "aclrtBinaryUnLoad"}});
}

__attribute__((visibility("default"))) aclError
aclrtBinaryGetFunction(void* binary, const char* name, void** function) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    const char* fn = "aclrtBinaryGetFunction";
    auto it = s.binaries.find(binary);
    if (it == s.binaries.end() || name == nullptr || function == nullptr)
        return refuse(s, fn, "unknown binary, or a null name or out pointer");
    if (it->second->magic == 0)
        return refuse(s, fn, "a CPU kernel binary: its functions are aclrtRegisterCpuFunc's");
    auto symbols = symbols_for(it->second->bytes, name);
    if (symbols.empty())
        return refuse(s, fn,
                      std::string("binary ") + std::to_string(it->second->id) +
                          " defines no function '" + name + "' (nor its _mix_aic/_mix_aiv)");
    s.functions.push_back(std::make_unique<Function>(Function{it->second->id, name, symbols}));
    *function = s.functions.back().get();
    return ok(s, {{"fn", fn}, {"binary", it->second->id}, {"name", name}, {"symbols", symbols}});
}

__attribute__((visibility("default"))) aclError aclrtKernelArgsInit(void* function, void** args) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    auto known = std::any_of(s.functions.begin(), s.functions.end(),
                             [&](const auto& f) { return f.get() == function; });
    if (!known || args == nullptr)
        return refuse(s, "aclrtKernelArgsInit", "unknown function or a null out pointer");
    if (!static_cast<Function*>(function)->op_type.empty())
        return refuse(s, "aclrtKernelArgsInit",
                      "a CPU function: opbase launches those with aclrtLaunchKernelWithHostArgs");
    s.args.push_back(std::make_unique<Args>());
    s.args.back()->function = static_cast<Function*>(function);
    *args = s.args.back().get();
    return ok(s, {{"fn", "aclrtKernelArgsInit"}});
}

namespace {
Args* find_args(State& s, void* args) {
    for (auto& a : s.args)
        if (a.get() == args)
            return a.get();
    return nullptr;
}
} // namespace

__attribute__((visibility("default"))) aclError
aclrtKernelArgsAppend(void* args, void* param, std::size_t size, void** param_handle) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    Args* a = find_args(s, args);
    if (a == nullptr || a->finalized || param == nullptr || param_handle == nullptr)
        return refuse(s, "aclrtKernelArgsAppend", "unknown or finalised arguments, or nulls");
    if (size != 8)
        return refuse(s, "aclrtKernelArgsAppend",
                      "a parameter of " + std::to_string(size) +
                          " bytes (this stand-in takes addresses)");
    std::uint64_t v = 0;
    std::memcpy(&v, param, 8);
    a->slots.push_back(v);
    a->place_holder.push_back(false);
    *param_handle = reinterpret_cast<void*>(a->slots.size());
    return k_ok; // not recorded one by one: the launch records the whole buffer
}

__attribute__((visibility("default"))) aclError aclrtKernelArgsAppendPlaceHolder(void* args,
                                                                                 void** handle) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    Args* a = find_args(s, args);
    if (a == nullptr || a->finalized || handle == nullptr)
        return refuse(s, "aclrtKernelArgsAppendPlaceHolder", "unknown or finalised arguments");
    a->slots.push_back(0);
    a->place_holder.push_back(true);
    *handle = reinterpret_cast<void*>(a->slots.size());
    return k_ok;
}

__attribute__((visibility("default"))) aclError
aclrtKernelArgsGetPlaceHolderBuffer(void* args, void* handle, std::size_t size, void** buffer) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    Args* a = find_args(s, args);
    auto slot = reinterpret_cast<std::size_t>(handle);
    if (a == nullptr || a->finalized || buffer == nullptr || slot == 0 || slot > a->slots.size() ||
        !a->place_holder[slot - 1])
        return refuse(s, "aclrtKernelArgsGetPlaceHolderBuffer", "not a place holder of these");
    s.place_holders.push_back(std::make_unique<std::string>(std::max<std::size_t>(size, 1), '\0'));
    *buffer = s.place_holders.back()->data();
    a->data[slot - 1] = std::string(size, '\0');
    a->slots[slot - 1] = reinterpret_cast<std::uint64_t>(*buffer);
    return k_ok;
}

__attribute__((visibility("default"))) aclError aclrtKernelArgsFinalize(void* args) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    Args* a = find_args(s, args);
    if (a == nullptr || a->finalized)
        return refuse(s, "aclrtKernelArgsFinalize", "unknown or already finalised arguments");
    a->finalized = true;
    return k_ok;
}

__attribute__((visibility("default"))) aclError
aclrtLaunchKernelWithConfig(void* function, std::uint32_t block_dim, void* stream, void* config,
                            void* args, void* reserve) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    const char* fn = "aclrtLaunchKernelWithConfig";
    Args* a = find_args(s, args);
    if (a == nullptr || !a->finalized)
        return refuse(s, fn, "arguments not finalised (aclrtKernelArgsFinalize)");
    if (a->function != function)
        return refuse(s, fn, "arguments built for another function");
    if (block_dim == 0)
        return refuse(s, fn, "blockDim 0");
    if (stream != nullptr && !s.streams.contains(stream))
        return refuse(s, fn, "not a stream of aclrtCreateStream");
    (void)reserve;
    // The launch attributes opbase passes a static kernel: the schedule mode and the local memory
    // (dynamic UB) size, each at most once.
    json attrs = json::object();
    if (config != nullptr) {
        const auto* cfg = static_cast<const LaunchCfg*>(config);
        if (cfg->num_attrs != 0 && cfg->attrs == nullptr)
            return refuse(s, fn, "a launch config with attributes but no array");
        for (std::size_t i = 0; i < cfg->num_attrs; ++i) {
            const auto& at = cfg->attrs[i];
            const char* key = at.id == k_attr_schedule_mode   ? "schedule_mode"
                              : at.id == k_attr_dyn_ubuf_size ? "dyn_ubuf_size"
                                                              : nullptr;
            if (key == nullptr || attrs.contains(key))
                return refuse(s, fn,
                              "launch attribute " + std::to_string(at.id) +
                                  " unknown to this stand-in, or given twice");
            attrs[key] = at.id == k_attr_schedule_mode ? json(at.value.schedule_mode)
                                                       : json(at.value.dyn_ubuf_size);
        }
    }
    json slots = json::array(), where = json::array(), data = json::object();
    for (std::size_t i = 0; i < a->slots.size(); ++i) {
        slots.push_back(a->slots[i]);
        if (a->place_holder[i]) {
            // the data the caller wrote into the place holder's buffer, as hex
            const auto* p = reinterpret_cast<const unsigned char*>(a->slots[i]);
            std::string hex;
            static const char* digits = "0123456789abcdef";
            for (std::size_t k = 0; k < a->data[i].size(); ++k) {
                hex += digits[p[k] >> 4];
                hex += digits[p[k] & 15];
            }
            data[std::to_string(i)] = hex;
            where.push_back({{"place_holder", true}});
            continue;
        }
        json w = describe_pointer(s, a->slots[i]);
        if (w.contains("nowhere"))
            return refuse(s, fn,
                          a->function->name + ": slot " + std::to_string(i) + " holds " +
                              std::to_string(a->slots[i]) + ", which is no device memory");
        where.push_back(std::move(w));
    }
    json launch = {{"function", a->function->name},
                   {"symbols", a->function->symbols},
                   {"binary", a->function->binary},
                   {"magic", 0},
                   {"block_dim", block_dim},
                   {"stream", reinterpret_cast<std::uintptr_t>(stream)},
                   {"args_bytes", a->slots.size() * 8},
                   {"slots", slots},
                   {"where", where},
                   {"attrs", attrs},
                   {"place_holder_data", data}};
    for (const auto& [h, b] : s.binaries)
        if (b->id == a->function->binary)
            launch["magic"] = b->magic;
    s.launches.push_back(launch);
    return ok(s, {{"fn", fn},
                  {"function", a->function->name},
                  {"block_dim", block_dim},
                  {"stream", reinterpret_cast<std::uintptr_t>(stream)}});
}

__attribute__((visibility("default"))) aclError
aclrtRegisterCpuFunc(void* binary, const char* name, const char* op_type, void** function) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    const char* fn = "aclrtRegisterCpuFunc";
    auto it = s.binaries.find(binary);
    if (it == s.binaries.end() || name == nullptr || op_type == nullptr || *op_type == '\0' ||
        function == nullptr)
        return refuse(s, fn, "unknown binary, or a null name, op type or out pointer");
    if (it->second->magic != 0)
        return refuse(s, fn,
                      "binary " + std::to_string(it->second->id) +
                          " was loaded as an AI-core binary, not in CPU kernel mode");
    auto symbols = symbols_for(it->second->bytes, name);
    if (symbols.empty() || symbols.front() != name)
        return refuse(s, fn,
                      "binary " + std::to_string(it->second->id) + " defines no '" + name + "'");
    s.functions.push_back(
        std::make_unique<Function>(Function{it->second->id, name, {name}, op_type}));
    *function = s.functions.back().get();
    return ok(s, {{"fn", fn}, {"binary", it->second->id}, {"name", name}, {"op_type", op_type}});
}

__attribute__((visibility("default"))) aclError
aclrtLaunchKernelWithHostArgs(void* function, std::uint32_t block_dim, void* stream, void* config,
                              void* args, std::size_t size, void* place_holders,
                              std::size_t place_holder_count) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    const char* fn = "aclrtLaunchKernelWithHostArgs";
    const Function* f = nullptr;
    for (const auto& x : s.functions)
        if (x.get() == function)
            f = x.get();
    if (f == nullptr || f->op_type.empty())
        return refuse(s, fn, "not a function of aclrtRegisterCpuFunc");
    if (block_dim != 1)
        return refuse(s, fn, "an AICPU kernel is launched on one block (opbase)");
    if (stream != nullptr && !s.streams.contains(stream))
        return refuse(s, fn, "not a stream of aclrtCreateStream");
    if (args == nullptr || size == 0 || size % 8 != 0 || place_holders != nullptr ||
        place_holder_count != 0)
        return refuse(s, fn, "arguments not whole 8-byte slots, or place holders given");
    if (config == nullptr || static_cast<const LaunchCfg*>(config)->num_attrs != 0)
        return refuse(s, fn, "an AICPU launch carries a config of no attributes (opbase)");
    json slots = json::array(), where = json::array();
    for (std::size_t i = 0; i < size / 8; ++i) {
        std::uint64_t v = 0;
        std::memcpy(&v, static_cast<const char*>(args) + 8 * i, 8);
        json w = describe_pointer(s, v);
        if (w.contains("nowhere") || w.contains("ffts") || w.contains("overflow"))
            return refuse(s, fn,
                          f->name + ": slot " + std::to_string(i) + " holds " + std::to_string(v) +
                              ", which is no device memory");
        slots.push_back(v);
        where.push_back(std::move(w));
    }
    s.cpu_launches.push_back({{"function", f->name},
                              {"op_type", f->op_type},
                              {"stream", reinterpret_cast<std::uintptr_t>(stream)},
                              {"slots", slots},
                              {"where", where}});
    return ok(
        s,
        {{"fn", fn}, {"function", f->name}, {"stream", reinterpret_cast<std::uintptr_t>(stream)}});
}

__attribute__((visibility("default"))) aclError aclrtCmoAsync(void* src, std::size_t size, int type,
                                                              void* stream) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    std::uintptr_t start = 0;
    if (type < 0 || type > 3 || size == 0 || find_memory(s, src, size, &start) == nullptr ||
        (stream != nullptr && !s.streams.contains(stream)))
        return refuse(s, "aclrtCmoAsync", "outside device memory, no size, bad type or stream");
    return ok(s, {{"fn", "aclrtCmoAsync"},
                  {"address", reinterpret_cast<std::uintptr_t>(src)},
                  {"bytes", size},
                  {"type", type},
                  {"stream", reinterpret_cast<std::uintptr_t>(stream)}});
}

__attribute__((visibility("default"))) aclError aclrtValueWrite(void* address, std::uint64_t value,
                                                                std::uint32_t flag, void* stream) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    std::uintptr_t start = 0;
    if (flag != 0 || find_memory(s, address, 8, &start) == nullptr ||
        reinterpret_cast<std::uintptr_t>(address) % 8 != 0 ||
        (stream != nullptr && !s.streams.contains(stream)))
        return refuse(s, "aclrtValueWrite",
                      "not 8 aligned bytes of device memory, flag not 0, "
                      "or a bad stream");
    std::memcpy(address, &value, 8); // the stand-in runs it when it is queued
    return ok(s, {{"fn", "aclrtValueWrite"},
                  {"address", reinterpret_cast<std::uintptr_t>(address)},
                  {"value", value},
                  {"stream", reinterpret_cast<std::uintptr_t>(stream)}});
}

__attribute__((visibility("default"))) aclError aclrtValueWait(void* address, std::uint64_t value,
                                                               std::uint32_t flag, void* stream) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    std::uintptr_t start = 0;
    if (flag > 3 || find_memory(s, address, 8, &start) == nullptr ||
        reinterpret_cast<std::uintptr_t>(address) % 8 != 0 ||
        (stream != nullptr && !s.streams.contains(stream)))
        return refuse(s, "aclrtValueWait",
                      "not 8 aligned bytes of device memory, an unknown "
                      "wait mode, or a bad stream");
    // Not checked here: the value is a kernel's to write, which the stand-in does not run.
    return ok(s, {{"fn", "aclrtValueWait"},
                  {"address", reinterpret_cast<std::uintptr_t>(address)},
                  {"value", value},
                  {"flag", flag},
                  {"stream", reinterpret_cast<std::uintptr_t>(stream)}});
}

__attribute__((visibility("default"))) aclError aclrtGetDeviceSatMode(int* mode) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (mode == nullptr)
        return refuse(s, "aclrtGetDeviceSatMode", "null out pointer");
    *mode = 0; // ACL_RT_OVERFLOW_MODE_SATURATION
    return ok(s, {{"fn", "aclrtGetDeviceSatMode"}});
}

__attribute__((visibility("default"))) aclError aclrtCtxGetFloatOverflowAddr(void** address) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (address == nullptr)
        return refuse(s, "aclrtCtxGetFloatOverflowAddr", "null out pointer");
    *address = s.overflow;
    return ok(s, {{"fn", "aclrtCtxGetFloatOverflowAddr"}});
}

// What the host runs: aclCANNPackageVersion (acl/acl.h) and the SoC name. A test says what they
// are with STANDIN_CANN_VERSION and STANDIN_SOC_NAME; unset, the stand-in answers as a host
// without the CANN package does (100003, which the API reference says a query of a package that is
// not installed returns) and without a SoC name (NULL).
struct CannPackageVersion {
    char version[128];
    char major_version[64];
    char minor_version[64];
    char release_version[64];
    char patch_version[64];
    char reserved[128];
};

__attribute__((visibility("default"))) aclError aclsysGetCANNVersion(int name,
                                                                     CannPackageVersion* v) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    if (v == nullptr)
        return refuse(s, "aclsysGetCANNVersion", "null out pointer");
    const char* text = std::getenv("STANDIN_CANN_VERSION");
    if (text == nullptr) {
        s.calls.push_back({{"fn", "aclsysGetCANNVersion"}, {"name", name}, {"rc", 100003}});
        return 100003;
    }
    std::memset(v, 0, sizeof *v);
    std::strncpy(v->version, text, sizeof v->version - 1);
    return ok(s, {{"fn", "aclsysGetCANNVersion"}, {"name", name}});
}

__attribute__((visibility("default"))) const char* aclrtGetSocName() {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.calls.push_back({{"fn", "aclrtGetSocName"}});
    return std::getenv("STANDIN_SOC_NAME");
}

// ---- the test's queries ----------------------------------------------------------------

__attribute__((visibility("default"))) const char* skf_standin_log(void) {
    static std::string text;
    State& s = state();
    std::lock_guard lock(s.mutex);
    json live = json::array();
    for (const auto& [start, a] : s.memory)
        live.push_back({{"allocation", a.id}, {"size", a.size}, {"address", start}});
    text = json{{"calls", s.calls},
                {"launches", s.launches},
                {"cpu_launches", s.cpu_launches},
                {"errors", s.errors},
                {"memory", live},
                {"ffts", reinterpret_cast<std::uintptr_t>(s.ffts)},
                {"overflow", reinterpret_cast<std::uintptr_t>(s.overflow)},
                {"binaries_loaded", s.binaries.size()},
                {"streams_live", s.streams.size()},
                {"events_live", s.events.size()}}
               .dump();
    return text.c_str();
}

__attribute__((visibility("default"))) void skf_standin_reset(void) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    s.calls = json::array();
    s.launches = json::array();
    s.cpu_launches = json::array();
    s.errors = json::array();
}

__attribute__((visibility("default"))) int skf_standin_errors(void) {
    State& s = state();
    std::lock_guard lock(s.mutex);
    return static_cast<int>(s.errors.size());
}

} // extern "C"
