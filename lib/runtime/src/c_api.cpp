// SPDX-License-Identifier: Apache-2.0
// The C interface of libskforge_runtime (include/skforge/runtime.h) over the C++ runtime: handles
// kept in a registry so that a closed one is refused rather than used, every failure caught at
// the boundary and kept as this thread's last error.
#include "skforge/runtime.h"

#include "skforge/runtime/open.hpp"
#include "skforge/support/error.hpp"

#include <chrono>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>

namespace rt = skforge::runtime;
using skforge::support::Error;
using skforge::support::ErrorKind;

struct skf_package {
    rt::Opened opened;
    skf_stats stats{};
};

namespace {

thread_local std::string t_last_error;

std::mutex g_live_mutex;
std::unordered_set<const skf_package*> g_live; // handles skf_open returned and skf_close did not

int fail(int code, std::string message) {
    t_last_error = std::move(message);
    return code;
}

// Runs `body` (which returns a code), turning every exception into a code and a message.
template <typename Body> int guarded(Body body) noexcept {
    try {
        t_last_error.clear();
        return body();
    } catch (const rt::ApiError& e) {
        return fail(e.code(), e.what());
    } catch (const Error& e) {
        return fail(e.kind() == ErrorKind::usage ? SKF_E_ARGUMENT : SKF_E_PACKAGE, e.what());
    } catch (const std::bad_alloc&) {
        return fail(SKF_E_MEMORY, "out of memory");
    } catch (const std::exception& e) {
        return fail(SKF_E_PACKAGE, e.what());
    } catch (...) {
        return fail(SKF_E_PACKAGE, "unknown failure");
    }
}

bool live(const skf_package* pkg) {
    std::lock_guard lock(g_live_mutex);
    return pkg != nullptr && g_live.contains(pkg);
}

// Throws unless `pkg` is an open handle; `call` names the function in the message.
void require_live(const skf_package* pkg, const char* call) {
    if (!live(pkg))
        throw rt::ApiError(SKF_E_MISUSE, std::string(call) + ": " +
                                             (pkg == nullptr ? "the handle is NULL"
                                                             : "the handle is closed or did not "
                                                               "come from skf_open"));
}

// Runs one of the handle's runs, counting its launches and wall time.
template <typename Run> int timed_run(skf_package* pkg, const char* call, Run run) {
    return guarded([&] {
        require_live(pkg, call);
        auto start = std::chrono::steady_clock::now();
        std::uint64_t launches = run();
        auto ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now() - start)
                                                 .count());
        auto& s = pkg->stats;
        ++s.runs;
        s.launches += launches;
        s.last_launches = launches;
        s.last_nanoseconds = ns;
        s.total_nanoseconds += ns;
        return SKF_OK;
    });
}

// Copies between host and device memory for skf_copy_to_device / skf_copy_to_host.
int copy_memory(skf_package* pkg, void* dst, const void* src, size_t bytes, rt::Executor::Copy d,
                const char* call) {
    return guarded([&] {
        require_live(pkg, call);
        if (bytes != 0 && (dst == nullptr || src == nullptr))
            throw rt::ApiError(SKF_E_ARGUMENT, std::string(call) + ": NULL memory");
        if (bytes != 0)
            pkg->opened.copy(dst, src, bytes, d, call);
        return SKF_OK;
    });
}

} // namespace

extern "C" {

int skf_open(const char* install_path, const char* package, const char* device, skf_package** out) {
    if (out != nullptr)
        *out = nullptr;
    return guarded([&] {
        if (out == nullptr)
            throw rt::ApiError(SKF_E_ARGUMENT, "skf_open: out is NULL");
        if (package == nullptr || *package == '\0')
            throw rt::ApiError(SKF_E_ARGUMENT, "skf_open: no package name");
        auto* pkg =
            new skf_package{rt::open_installed(install_path == nullptr ? "" : install_path, package,
                                               device == nullptr ? "host" : device),
                            {}};
        std::lock_guard lock(g_live_mutex);
        g_live.insert(pkg);
        *out = pkg;
        return SKF_OK;
    });
}

const char* skf_last_error(void) {
    return t_last_error.c_str();
}

size_t skf_tensor_count(const skf_package* pkg) {
    return live(pkg) ? pkg->opened.listed.size() : 0;
}

int skf_tensor_info_at(const skf_package* pkg, size_t i, skf_tensor_info* out) {
    return guarded([&] {
        require_live(pkg, "skf_tensor_info_at");
        if (out == nullptr)
            throw rt::ApiError(SKF_E_ARGUMENT, "skf_tensor_info_at: out is NULL");
        const auto& t = pkg->opened.tensor(i, "skf_tensor_info_at");
        *out = skf_tensor_info{};
        out->name = t.name.c_str();
        out->is_output = t.graph_output && !t.graph_input ? 1 : 0;
        out->dtype = t.dtype.c_str();
        out->rank = static_cast<int>(t.shape.size());
        for (std::size_t d = 0; d < t.shape.size() && d < 8; ++d)
            out->dims[d] = t.shape[d];
        out->bytes = static_cast<size_t>(t.bytes);
        return SKF_OK;
    });
}

int skf_tensor_role(const skf_package* pkg, size_t i) {
    return guarded([&] {
        require_live(pkg, "skf_tensor_role");
        const auto& t = pkg->opened.tensor(i, "skf_tensor_role");
        return t.graph_input    ? SKF_ROLE_INPUT
               : t.graph_output ? SKF_ROLE_OUTPUT
                                : SKF_ROLE_INTERMEDIATE;
    });
}

int skf_bind(skf_package* pkg, const char* tensor, void* memory) {
    return guarded([&] {
        require_live(pkg, "skf_bind");
        pkg->opened.bind(tensor == nullptr ? "" : tensor, memory);
        return SKF_OK;
    });
}

int skf_run(skf_package* pkg, void* stream) {
    return timed_run(pkg, "skf_run", [&] { return pkg->opened.run_fused(stream); });
}

int skf_run_unfused(skf_package* pkg, void* stream) {
    return timed_run(pkg, "skf_run_unfused", [&] { return pkg->opened.run_unfused(stream); });
}

size_t skf_segment_count(const skf_package* pkg) {
    return live(pkg) ? pkg->opened.segment_count() : 0;
}

const char* skf_segment_name(const skf_package* pkg, size_t i) {
    if (!live(pkg) || i >= pkg->opened.segment_count())
        return nullptr;
    return pkg->opened.segment_name(i).c_str();
}

size_t skf_segment_tensor_count(const skf_package* pkg, size_t segment) {
    return live(pkg) && segment < pkg->opened.segment_count()
               ? pkg->opened.segment_tensors[segment].size()
               : 0;
}

int skf_segment_tensor_at(const skf_package* pkg, size_t segment, size_t j, size_t* tensor,
                          int* writes) {
    return guarded([&] {
        require_live(pkg, "skf_segment_tensor_at");
        const auto& o = pkg->opened;
        if (segment >= o.segment_count() || j >= o.segment_tensors[segment].size())
            throw rt::ApiError(SKF_E_ARGUMENT, "skf_segment_tensor_at: SuperKernel " +
                                                   std::to_string(segment) + ", tensor " +
                                                   std::to_string(j) + " out of range");
        if (tensor != nullptr)
            *tensor = o.listed_index(o.segment_tensors[segment][j]);
        if (writes != nullptr)
            *writes = o.segment_writes[segment][j] ? 1 : 0;
        return SKF_OK;
    });
}

int skf_run_segment(skf_package* pkg, const char* segment, void* stream) {
    return timed_run(pkg, "skf_run_segment", [&] {
        return pkg->opened.run_segment(segment == nullptr ? "" : segment, stream);
    });
}

const char* skf_graph_name(const skf_package* pkg) {
    return live(pkg) ? pkg->opened.graph.c_str() : nullptr;
}

size_t skf_operator_count(const skf_package* pkg) {
    return live(pkg) ? pkg->opened.operator_count : 0;
}

int skf_get_stats(const skf_package* pkg, skf_stats* out) {
    return guarded([&] {
        require_live(pkg, "skf_get_stats");
        if (out == nullptr)
            throw rt::ApiError(SKF_E_ARGUMENT, "skf_get_stats: out is NULL");
        *out = pkg->stats;
        return SKF_OK;
    });
}

const char* skf_device(const skf_package* pkg) {
    return live(pkg) ? pkg->opened.device_name.c_str() : nullptr;
}

const char* skf_version(void) {
    return SKF_VERSION;
}

int skf_version_number(void) {
    return SKF_VERSION_NUMBER;
}

int skf_debug_drop_side_waits(skf_package* pkg, int drop) {
    return guarded([&] {
        require_live(pkg, "skf_debug_drop_side_waits");
        pkg->opened.drop_side_waits(drop != 0);
        return SKF_OK;
    });
}

int skf_device_malloc(skf_package* pkg, size_t bytes, void** out) {
    if (out != nullptr)
        *out = nullptr;
    return guarded([&] {
        require_live(pkg, "skf_device_malloc");
        if (out == nullptr)
            throw rt::ApiError(SKF_E_ARGUMENT, "skf_device_malloc: out is NULL");
        *out = pkg->opened.device_malloc(bytes);
        return SKF_OK;
    });
}

int skf_device_free(skf_package* pkg, void* memory) {
    return guarded([&] {
        require_live(pkg, "skf_device_free");
        if (memory != nullptr)
            pkg->opened.device_free(memory);
        return SKF_OK;
    });
}

int skf_copy_to_device(skf_package* pkg, void* device, const void* host, size_t bytes) {
    return copy_memory(pkg, device, host, bytes, rt::Executor::Copy::to_device,
                       "skf_copy_to_device");
}

int skf_copy_to_host(skf_package* pkg, void* host, const void* device, size_t bytes) {
    return copy_memory(pkg, host, device, bytes, rt::Executor::Copy::to_host, "skf_copy_to_host");
}

void skf_close(skf_package* pkg) {
    {
        std::lock_guard lock(g_live_mutex);
        if (pkg == nullptr || g_live.erase(pkg) == 0)
            return; // NULL, closed already, or not ours: nothing to free
    }
    delete pkg;
}

} // extern "C"
