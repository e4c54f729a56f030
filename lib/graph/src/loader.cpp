// SPDX-License-Identifier: Apache-2.0
#include "skforge/graph/graph.hpp"

#include "skforge/kernel/static_index.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/memory.hpp"
#include "skforge/support/parallel.hpp"
#include "skforge/support/sha256.hpp"

#include "skforge/graph/yaml_doc.hpp"
#include <algorithm>
#include <array>
#include <atomic>
#include <iterator>
#include <set>
#include <unordered_map>

#include <charconv>
#include <limits>

namespace skforge::graph {

std::string_view engine_name(Engine e) {
    switch (e) {
    case Engine::aicore:
        return "aicore";
    case Engine::tbe:
        return "tbe";
    case Engine::aicpu:
        return "aicpu";
    case Engine::simt:
        return "simt";
    case Engine::hccl:
        return "hccl";
    }
    return "unknown";
}

std::string_view op_kind_name(OpKind k) {
    switch (k) {
    case OpKind::kernel:
        return "kernel";
    case OpKind::aicpu_tiling:
        return "aicpu_tiling";
    case OpKind::prefetch:
        return "prefetch";
    }
    return "unknown";
}

const Scope* Graph::find_scope(const std::string& scope_name) const {
    for (const auto& s : scopes)
        if (s.name == scope_name)
            return &s;
    return nullptr;
}

namespace {

using YNode = YamlDoc::Node;

std::optional<std::int64_t> parse_integer(std::string_view t) {
    std::int64_t v = 0;
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc() || ptr != t.data() + t.size() || t.empty())
        return std::nullopt;
    return v;
}

// Walks the YAML tree, reporting every problem with its position.
struct Reader {
    std::shared_ptr<const std::string> file;
    Diagnostics& diags;
    /// Where a run of operators in one scope starts, in order: each scope used is in it at
    /// its first operator (operators of a scope come in runs, so this list is short).
    std::vector<Scope> scope_runs{};

    Location at(const YNode& n) const { return {file, n.line(), n.column()}; }
    std::optional<std::string> str(const YNode& n, std::string_view what) {
        if (!n.is_scalar()) {
            diags.error(at(n), std::string(what) + " must be a string");
            return std::nullopt;
        }
        return std::string(n.scalar());
    }
    template <class T> std::optional<T> number(const YNode& n, std::string_view what) {
        auto v = n.is_scalar() ? parse_integer(n.scalar()) : std::nullopt;
        if (!v || *v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
            static_cast<std::uint64_t>(*v) >
                static_cast<std::uint64_t>(std::numeric_limits<T>::max())) {
            diags.error(at(n), std::string(what) + " must be an integer in range");
            return std::nullopt;
        }
        return static_cast<T>(*v);
    }
    std::optional<bool> boolean(const YNode& n, std::string_view what) {
        std::string_view t = n.is_scalar() ? n.scalar() : std::string_view();
        for (std::string_view yes :
             {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "1"})
            if (t == yes)
                return true;
        for (std::string_view no :
             {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "0"})
            if (t == no)
                return false;
        diags.error(at(n), std::string(what) + " must be true or false");
        return std::nullopt;
    }
    // The items of a list node, each read by `item` (which returns nullopt for a bad one).
    template <class T, class F>
    std::vector<T> list_of(const YNode& n, std::string_view what, F&& item) {
        std::vector<T> out;
        if (n.is_null())
            return out;
        if (!n.is_sequence()) {
            diags.error(at(n), std::string(what) + " must be a list");
            return out;
        }
        out.reserve(n.size());
        for (std::size_t i = 0; i < n.size(); ++i)
            if (std::optional<T> v = item(n.item(i)))
                out.push_back(std::move(*v));
        return out;
    }
    template <class T> std::vector<T> number_list(const YNode& n, std::string_view what) {
        return list_of<T>(n, what, [&](const YNode& item) { return number<T>(item, what); });
    }
    // Calls `f(i, value)` for each entry whose key is known[i]; unknown keys are errors.
    template <class F>
    void fields_by_index(const YNode& n, std::string_view what,
                         std::initializer_list<std::string_view> known, F&& f) {
        if (!n.is_map()) {
            diags.error(at(n), std::string(what) + " must be a mapping");
            return;
        }
        for (std::size_t i = 0; i < n.size(); ++i) {
            std::string_view key = n.key(i).scalar();
            std::size_t index = 0;
            for (std::string_view k : known) {
                // Compared here, not by a call to memcmp: keys are short, and most differ in
                // length or in their first byte.
                if (key.size() == k.size() && std::equal(k.begin(), k.end(), key.begin(),
                                                         [](char a, char b) { return a == b; }))
                    break;
                ++index;
            }
            if (index == known.size()) {
                std::string list;
                for (std::string_view k : known)
                    list += (list.empty() ? "" : ", ") + std::string(k);
                diags.error(at(n.key(i)),
                            "unknown key '" + std::string(key) + "' in " + std::string(what),
                            "known keys: " + list);
                continue;
            }
            f(index, n.value(i));
        }
    }
    // Calls `f(key, value)` for each entry; unknown keys are errors.
    template <class F>
    void fields(const YNode& n, std::string_view what,
                std::initializer_list<std::string_view> known, F&& f) {
        fields_by_index(n, what, known,
                        [&](std::size_t i, const YNode& v) { f(known.begin()[i], v); });
    }

    // The storage format CANN keys static kernels by: one of GE's names.
    std::string tensor_format(const YNode& v) {
        std::string f = str(v, "format").value_or("");
        if (!f.empty() && !kernel::ge_format(f))
            diags.error(at(v), "format '" + f + "' is not one of GE's formats",
                        "e.g. ND, NCHW, NHWC, NC1HWC0, FRACTAL_Z, FRACTAL_NZ (graph-format.md in "
                        "/usr/share/doc/skforge/)");
        return f;
    }

    Tensor tensor(const YNode& n, bool needs_shape) {
        Tensor t;
        t.where = at(n);
        if (n.is_scalar() && !needs_shape) {
            t.name = std::string(n.scalar());
            return t;
        }
        bool has_shape = false;
        enum { name, shape, dtype, format, view_shape };
        fields_by_index(n, "a tensor", {"name", "shape", "dtype", "format", "view_shape"},
                        [&](std::size_t k, const YNode& v) {
                            if (k == name)
                                t.name = str(v, "tensor name").value_or("");
                            else if (k == shape)
                                t.shape = number_list<std::int64_t>(v, "shape"), has_shape = true;
                            else if (k == dtype)
                                t.dtype = str(v, "dtype").value_or("");
                            else if (k == format)
                                t.format = tensor_format(v);
                            else
                                t.view_shape = number_list<std::int64_t>(v, "view_shape");
                        });
        if (t.name.empty())
            diags.error(t.where, "a tensor needs a name");
        if (needs_shape && (t.dtype.empty() || !has_shape))
            diags.error(t.where, "output '" + t.name + "' needs a shape and a dtype");
        return t;
    }
    std::vector<Tensor> tensors(const YNode& n, bool needs_shape, std::string_view what) {
        return list_of<Tensor>(n, what, [&](const YNode& item) {
            return std::optional<Tensor>(tensor(item, needs_shape));
        });
    }

    // A kernel's paths, in the graph's words, and the field each one sets.
    static constexpr std::string_view k_kernel_keys[] = {"json_path", "bin_path", "source_path"};
    static constexpr std::string KernelRef::*k_kernel_fields[] = {
        &KernelRef::json_path, &KernelRef::bin_path, &KernelRef::source_path};
    // Sets path `which` (an index into k_kernel_keys) of `k`.
    void kernel_field(KernelRef& k, std::size_t which, const YNode& v) {
        k.*k_kernel_fields[which] = str(v, k_kernel_keys[which]).value_or("");
    }

    void engine(Op& o, const YNode& v) {
        auto e = str(v, "engine").value_or("aicore");
        for (Engine cand : {Engine::aicore, Engine::tbe, Engine::aicpu, Engine::simt, Engine::hccl})
            if (engine_name(cand) == e) {
                o.engine = cand;
                return;
            }
        diags.error(at(v), "engine '" + e + "' is unknown", "aicore, tbe, aicpu, simt or hccl");
    }

    void kind(Op& o, const YNode& v) {
        o.kind_where = at(v);
        auto k = str(v, "kind").value_or("kernel");
        for (OpKind cand : {OpKind::kernel, OpKind::aicpu_tiling, OpKind::prefetch})
            if (op_kind_name(cand) == k) {
                o.kind = cand;
                return;
            }
        diags.error(at(v), "kind '" + k + "' is unknown", "kernel, aicpu_tiling or prefetch");
    }

    // What each kind needs that the others must not have; the rest is validate_graph's.
    void check_kind(Op& o) {
        if (o.kind == OpKind::prefetch) {
            if (!o.kernel.json_path.empty() || !o.kernel.bin_path.empty() ||
                !o.kernel.source_path.empty())
                diags.error(o.kernel.where,
                            "prefetch operator '" + o.name + "' runs no kernel, but one is given",
                            "remove its kernel paths: the runtime reads its inputs into the "
                            "cache itself");
        } else if (o.kernel.json_path.empty()) {
            diags.error(o.kernel.where, "operator '" + o.name + "' needs kernel.json_path",
                        "the compiled kernel's metadata JSON, relative to the graph file");
        }
        if (o.kind == OpKind::aicpu_tiling && o.tiling_for.empty())
            diags.error(o.kind_where, "aicpu_tiling operator '" + o.name + "' needs tiling_for",
                        "the name of the operator whose tiling it computes");
        if (o.kind != OpKind::aicpu_tiling && !o.tiling_for.empty())
            diags.error(o.tiling_for_where,
                        "tiling_for is only for operators of kind aicpu_tiling ('" + o.name +
                            "' is " + std::string(op_kind_name(o.kind)) + ")",
                        "add 'kind: aicpu_tiling' or remove tiling_for");
    }

    Op op(const YNode& n) {
        Op o;
        o.where = at(n);
        o.kernel.where = o.where;
        enum Key {
            name,
            type,
            kernel,
            json_path,
            bin_path,
            source_path,
            stream_id,
            task_type,
            engine_key,
            inputs,
            outputs,
            send_event_list,
            recv_event_list,
            scope,
            no_fusion,
            kind_key,
            tiling_for
        };
        fields_by_index(
            n, "an operator",
            {"name", "type", "kernel", "json_path", "bin_path", "source_path", "stream_id",
             "task_type", "engine", "inputs", "outputs", "send_event_list", "recv_event_list",
             "scope", "no_fusion", "kind", "tiling_for"},
            [&](std::size_t k, const YNode& v) {
                switch (static_cast<Key>(k)) {
                case name:
                    o.name = str(v, "name").value_or("");
                    break;
                case type:
                    o.type = str(v, "type").value_or("");
                    break;
                case kernel:
                    o.kernel.where = at(v);
                    fields_by_index(
                        v, "kernel", {k_kernel_keys[0], k_kernel_keys[1], k_kernel_keys[2]},
                        [&](std::size_t kk, const YNode& vv) { kernel_field(o.kernel, kk, vv); });
                    break;
                case json_path:
                case bin_path:
                case source_path:
                    o.kernel.where = at(v);
                    kernel_field(o.kernel, k - json_path, v);
                    break;
                case stream_id:
                    o.stream_id = number<std::uint32_t>(v, "stream_id").value_or(0);
                    break;
                case task_type: {
                    auto t = str(v, "task_type").value_or("normal");
                    if (t == "dynamic")
                        o.task_type = TaskType::dynamic;
                    else if (t != "normal")
                        diags.error(at(v), "task_type must be normal or dynamic");
                    break;
                }
                case engine_key:
                    engine(o, v);
                    break;
                case inputs:
                    o.inputs = tensors(v, false, "inputs");
                    break;
                case outputs:
                    o.outputs = tensors(v, true, "outputs");
                    break;
                case send_event_list:
                    o.send_events = number_list<std::int64_t>(v, "send_event_list");
                    break;
                case recv_event_list:
                    o.recv_events = number_list<std::int64_t>(v, "recv_event_list");
                    break;
                case scope:
                    o.scope = v.is_null() ? "" : str(v, "scope").value_or("");
                    break;
                case no_fusion:
                    o.no_fusion = boolean(v, "no_fusion").value_or(false);
                    break;
                case kind_key:
                    kind(o, v);
                    break;
                case tiling_for:
                    o.tiling_for_where = at(v);
                    o.tiling_for = str(v, "tiling_for").value_or("");
                    break;
                }
            });
        if (!o.scope.empty() && (scope_runs.empty() || scope_runs.back().name != o.scope))
            scope_runs.push_back({o.scope, "", o.where});
        if (o.name.empty())
            diags.error(o.where, "an operator needs a name");
        if (o.kind == OpKind::prefetch && o.type.empty())
            o.type = "Prefetch"; // our choice: the vendor's task is a CMO prefetch
        if (o.type.empty())
            diags.error(o.where, "operator '" + o.name + "' needs a type (its OpType)");
        check_kind(o);
        return o;
    }

    void options(Graph& g, const YNode& n) {
        fields(n, "super_kernel_optimize_options",
               {"preload_code", "split_mode", "stream_fusion", "early_start", "constant_codegen",
                "auto_op_parallel", "debug_sync_all", "debug_op_exec_trace",
                "debug_cross_core_sync_check", "debug_per_op_max_core_num",
                "dcci_before_kernel_start", "dcci_after_kernel_end", "dcci_disable_on_kernel",
                "ubuf_lock_ignore_kernel"},
               [&](std::string_view k, const YNode& v) {
                   std::vector<std::string> list;
                   if (v.is_sequence())
                       for (std::size_t i = 0; i < v.size(); ++i)
                           list.emplace_back(v.item(i).scalar());
                   auto text = check_graph_option(std::string(k), std::string(v.scalar()),
                                                  v.is_sequence() ? &list : nullptr, at(v), diags);
                   if (text)
                       g.options[std::string(k)] = *text;
               });
    }

    void scopes(Graph& g, const YNode& n) {
        if (!n.is_map()) {
            diags.error(at(n), "scopes must be a mapping of scope name to options");
            return;
        }
        for (std::size_t i = 0; i < n.size(); ++i) {
            Scope s{std::string(n.key(i).scalar()), "", at(n.key(i))};
            YNode v = n.value(i);
            if (v.is_scalar())
                s.options = std::string(v.scalar());
            else if (v.is_map())
                fields(v, "scope '" + s.name + "'", {"options"},
                       [&](std::string_view, const YNode& o) {
                           s.options = str(o, "options").value_or("");
                       });
            else if (!v.is_null())
                diags.error(at(v), "scope '" + s.name + "' must map to an options string");
            if (g.find_scope(s.name))
                diags.error(s.where, "scope '" + s.name + "' is declared twice");
            else
                g.scopes.push_back(std::move(s));
        }
    }
};

} // namespace

namespace {

using support::on_threads;

unsigned reader_threads() {
    return std::min(8u, support::cores());
}

// Every Location holds the file name. Copies made on one thread count references in a control
// block of that thread's own (one that holds the graph's), so threads do not contend for one
// cache line.
std::shared_ptr<const std::string> thread_file_ref(const std::shared_ptr<const std::string>& f) {
    auto holder = std::make_shared<std::shared_ptr<const std::string>>(f);
    return {holder, holder->get()};
}

// What the reader threads found, joined in thread order (their operators' order).
void join_reports(std::vector<Diagnostics>& found, std::vector<std::vector<Scope>>& runs,
                  Diagnostics& diags, std::vector<Scope>& scope_runs) {
    for (std::size_t t = 0; t < found.size(); ++t) {
        diags.append(found[t]);
        std::move(runs[t].begin(), runs[t].end(), std::back_inserter(scope_runs));
    }
}

// Reads the operators on every core: each is independent, and each thread reports into its own
// Diagnostics, merged afterwards in operator order, so the result does not depend on the
// number of threads.
void read_ops(Graph& g, const YNode& list, Diagnostics& diags, std::vector<Scope>& scope_runs) {
    std::size_t n = list.size();
    g.ops.resize(n);
    unsigned threads = n < 4096 ? 1u : reader_threads();
    std::vector<Diagnostics> found(threads);
    std::vector<std::vector<Scope>> runs(threads);
    on_threads(threads, [&](unsigned t) {
        Reader r{thread_file_ref(g.file_ref), found[t]};
        for (std::size_t i = n * t / threads; i < n * (t + 1) / threads; ++i)
            g.ops[i] = r.op(list.item(i));
        runs[t] = std::move(r.scope_runs);
    });
    scope_runs.clear(); // of an earlier `ops`, if the key was repeated
    join_reports(found, runs, diags, scope_runs);
}

// The operators of a split document (YamlDoc::split), parsed and read piece by piece on every
// core; each thread reuses one tree for its pieces, so the whole list is never in memory as
// YAML. Each thread takes consecutive pieces, and its operators and reports are joined in
// order. False when a piece does not parse as it would in the whole document.
bool read_split_ops(Graph& g, const YamlDoc::Split& split, Diagnostics& diags,
                    std::vector<Scope>& scope_runs) {
    std::size_t pieces = split.pieces.size();
    unsigned threads = static_cast<unsigned>(std::min<std::size_t>(reader_threads(), pieces));
    auto first_piece = [&](unsigned t) { return pieces * t / threads; };
    // How many operators each thread reads, from the split's count of item lines.
    std::vector<std::size_t> first_op(threads + 1, 0);
    for (unsigned t = 0; t < threads; ++t) {
        first_op[t + 1] = first_op[t];
        for (std::size_t p = first_piece(t); p < first_piece(t + 1); ++p)
            first_op[t + 1] += split.pieces[p].items;
    }
    // The first thread's operators become the graph's: room for all of them from the start.
    std::vector<std::vector<Op>> ops(threads);
    ops[0].reserve(first_op[threads]);
    for (unsigned t = 1; t < threads; ++t)
        ops[t].reserve(first_op[t + 1] - first_op[t]);
    for (auto& o : ops)
        support::advise_huge_pages(o.data(), o.capacity() * sizeof(Op));
    Op* joined = ops[0].data();
    std::vector<Diagnostics> found(threads);
    std::vector<std::vector<Scope>> runs(threads);
    std::atomic<bool> failed{false};
    on_threads(threads, [&](unsigned t) {
        Reader r{thread_file_ref(g.file_ref), found[t]};
        YamlDoc doc;
        for (std::size_t p = first_piece(t); p < first_piece(t + 1); ++p) {
            if (failed.load(std::memory_order_relaxed) || !YamlDoc::parse_piece(split, p, doc)) {
                failed = true;
                return;
            }
            YNode list = doc.root();
            for (std::size_t i = 0; i < list.size(); ++i)
                ops[t].push_back(r.op(list.item(i)));
        }
        runs[t] = std::move(r.scope_runs);
        // Where this thread's operators will be moved to, made ready while the others read.
        if (t > 0 && ops[t].size() == first_op[t + 1] - first_op[t])
            support::prefault(joined + first_op[t], ops[t].size() * sizeof(Op));
    });
    if (failed)
        return false;
    std::size_t total = 0;
    for (const auto& o : ops)
        total += o.size();
    g.ops = std::move(ops[0]);
    g.ops.reserve(total);
    for (unsigned t = 1; t < threads; ++t)
        std::move(ops[t].begin(), ops[t].end(), std::back_inserter(g.ops));
    join_reports(found, runs, diags, scope_runs);
    return true;
}

} // namespace

Graph parse_graph_text(const std::string& text, const std::string& file, Diagnostics& diags,
                       std::size_t piece_bytes) {
    return parse_graph_text(support::share_text(text), file, diags, piece_bytes);
}

Graph parse_graph_text(support::SharedText text, const std::string& file, Diagnostics& diags,
                       std::size_t piece_bytes) {
    Graph g;
    g.file = file;
    g.file_ref = std::make_shared<const std::string>(file);
    g.dir = support::parent_directory(file);
    // A large graph is parsed on every core when its operators are a block list of a shape
    // the fast parser reads piece by piece; anything else is parsed whole.
    std::optional<YamlDoc::Split> split;
    if (piece_bytes > 0 && text->size() > piece_bytes)
        split = YamlDoc::split(text, "ops", piece_bytes);
    Diagnostics split_diags;
    std::vector<Scope> scope_runs;
    if (split && !read_split_ops(g, *split, split_diags, scope_runs)) {
        split.reset();
        g.ops.clear();
        scope_runs.clear();
    }
    std::optional<YamlDoc> doc;
    if (!split) {
        try {
            doc = YamlDoc::parse(std::move(text));
        } catch (const YamlError& e) {
            diags.error({g.file_ref, e.line, e.column},
                        std::string("YAML syntax error: ") + e.what());
            return g;
        }
    }
    Reader r{g.file_ref, diags};
    YNode root = split ? split->rest.root() : doc->root();
    if (!root.is_map()) {
        diags.error({g.file_ref, 1, 1}, "the graph must be a YAML mapping with an 'ops' list");
        return g;
    }
    r.fields(root, "the graph",
             {"name", "npu_arch", "soc_version", "super_kernel_optimize",
              "super_kernel_optimize_options", "inputs", "scopes", "ops"},
             [&](std::string_view k, const YNode& v) {
                 if (k == "name") {
                     g.name = r.str(v, "name").value_or("");
                     g.name_where = r.at(v);
                 } else if (k == "npu_arch") {
                     g.npu_arch = r.str(v, "npu_arch").value_or("");
                 } else if (k == "soc_version") {
                     g.soc_version = r.str(v, "soc_version").value_or("");
                     g.soc_version_where = r.at(v);
                 } else if (k == "super_kernel_optimize")
                     g.super_kernel_optimize = r.boolean(v, "super_kernel_optimize").value_or(true);
                 else if (k == "super_kernel_optimize_options")
                     r.options(g, v);
                 else if (k == "inputs")
                     g.inputs = r.tensors(v, true, "inputs");
                 else if (k == "scopes")
                     r.scopes(g, v);
                 else if (split && v.line() == static_cast<int>(split->key_line))
                     diags.append(split_diags); // read above, piece by piece
                 else if (!v.is_sequence())
                     diags.error(r.at(v), "ops must be a list of operators");
                 else
                     read_ops(g, v, diags, scope_runs);
             });
    if (!root.find("ops"))
        diags.error({g.file_ref, 1, 1}, "the graph has no 'ops' list");
    if (g.name.empty()) {
        std::string stem = support::base_name(file);
        g.name = stem.substr(0, stem.find('.'));
    }
    // Scopes used by operators but not declared get empty options.
    std::set<std::string> declared;
    for (const auto& s : g.scopes)
        declared.insert(s.name);
    for (auto& run : scope_runs)
        if (declared.insert(run.name).second)
            g.scopes.push_back(std::move(run));
    return g;
}

namespace {

// Loads each distinct metadata file once and checks each distinct binary once.
void load_kernels(Graph& g, Diagnostics& diags) {
    std::unordered_map<std::string, int> index;
    std::unordered_map<std::string_view, int> by_written_path; // skips resolve_path() for repeats
    std::unordered_map<std::string, std::string> binary_digest;
    std::array<std::pair<const std::string*, int>, 4> mru{}; // recently used json_paths
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        auto& op = g.ops[i];
        support::prefetch_ahead(g.ops, i);
        if (op.kernel.json_path.empty())
            continue;
        if (op.kernel.bin_path.empty()) {
            // Graphs use a handful of kernels: the last few paths seen spare most lookups.
            auto recent = std::find_if(mru.begin(), mru.end(), [&](const auto& e) {
                return e.first != nullptr && *e.first == op.kernel.json_path;
            });
            if (recent != mru.end()) {
                op.kernel_index = recent->second;
                continue;
            }
            if (auto known = by_written_path.find(op.kernel.json_path);
                known != by_written_path.end()) {
                op.kernel_index = known->second;
                std::rotate(mru.begin(), mru.end() - 1, mru.end());
                mru.front() = {&op.kernel.json_path, known->second};
                continue;
            }
        }
        std::string path = resolve_path(g, op.kernel.json_path);
        auto [it, fresh] = index.emplace(path, static_cast<int>(g.kernels.size()));
        by_written_path.emplace(op.kernel.json_path, it->second);
        op.kernel_index = it->second;
        if (fresh) {
            LoadedKernel k{path, {}, false};
            try {
                std::vector<kernel::MetaProblem> problems;
                k.meta = kernel::parse_kernel_meta(
                    support::read_file(path, {support::k_max_json_bytes}), problems);
                for (const auto& p : problems)
                    diags.error(op.kernel.where,
                                "kernel metadata '" + op.kernel.json_path + "': " + p.message);
            } catch (const support::Error& e) {
                diags.error(op.kernel.where,
                            std::string("cannot read kernel metadata: ") + e.what(),
                            "json_path is relative to the graph file");
            }
            g.kernels.push_back(std::move(k));
        }
        if (op.kernel.bin_path.empty())
            continue;
        std::string bin = resolve_path(g, op.kernel.bin_path);
        auto& kernel = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        auto found = binary_digest.find(bin);
        if (found == binary_digest.end()) {
            std::string digest;
            try {
                auto file = support::sha256_file(bin, support::k_max_read_bytes);
                kernel.binary_size = file.size;
                digest = file.sha256;
            } catch (const support::Error& e) {
                diags.error(op.kernel.where, std::string("cannot read kernel binary: ") + e.what());
            }
            found = binary_digest.emplace(bin, digest).first;
        }
        if (found->second.empty())
            continue;
        if (kernel.meta.sha256.empty())
            diags.warning(op.kernel.where,
                          "kernel metadata '" + op.kernel.json_path + "' has no sha256",
                          "add the binary's SHA-256 so a mismatched binary is caught");
        else if (kernel.meta.sha256 != found->second)
            diags.error(op.kernel.where,
                        "kernel binary '" + op.kernel.bin_path +
                            "' does not match the sha256 in '" + op.kernel.json_path + "'",
                        "rebuild the kernel or fix its metadata");
        else
            kernel.binary_checked = true;
    }
}

} // namespace

std::string resolve_path(const Graph& g, const std::string& p) {
    return p.empty() || p.front() == '/' ? p : g.dir + "/" + p;
}

Graph load_graph(const std::string& path, Diagnostics& diags) {
    support::SharedText text;
    try {
        text = support::read_file_shared(path);
    } catch (const support::Error& e) {
        diags.error({path, 0, 0}, e.what());
        return Graph{};
    }
    Graph g = parse_graph_text(std::move(text), path, diags);
    load_kernels(g, diags);
    return g;
}

} // namespace skforge::graph
