#include "skforge/graph/graph.hpp"

#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/sha256.hpp"

#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <yaml-cpp/yaml.h>

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

const Scope* Graph::find_scope(const std::string& scope_name) const {
    for (const auto& s : scopes)
        if (s.name == scope_name)
            return &s;
    return nullptr;
}

namespace {

// Walks the YAML tree, reporting every problem with its position.
struct Reader {
    const std::string& file;
    Diagnostics& diags;

    Location at(const YAML::Node& n) const {
        auto m = n.Mark();
        return {file, m.line + 1, m.column + 1};
    }
    std::optional<std::string> str(const YAML::Node& n, const std::string& what) {
        if (!n.IsScalar()) {
            diags.error(at(n), what + " must be a string");
            return std::nullopt;
        }
        return n.Scalar();
    }
    template <class T> std::optional<T> number(const YAML::Node& n, const std::string& what) {
        T v{};
        if (!n.IsScalar() || !YAML::convert<T>::decode(n, v)) {
            diags.error(at(n), what + " must be an integer");
            return std::nullopt;
        }
        return v;
    }
    std::optional<bool> boolean(const YAML::Node& n, const std::string& what) {
        bool v = false;
        if (n.IsScalar() && YAML::convert<bool>::decode(n, v))
            return v;
        if (auto i = n.IsScalar() ? number<int>(n, what) : std::nullopt; i && (*i == 0 || *i == 1))
            return *i == 1;
        diags.error(at(n), what + " must be true or false");
        return std::nullopt;
    }
    template <class T> std::vector<T> number_list(const YAML::Node& n, const std::string& what) {
        std::vector<T> out;
        if (n.IsNull())
            return out;
        if (!n.IsSequence()) {
            diags.error(at(n), what + " must be a list");
            return out;
        }
        for (const auto& item : n)
            if (auto v = number<T>(item, what + " item"))
                out.push_back(*v);
        return out;
    }
    // Calls `f(key, value)` for each entry; unknown keys are errors.
    template <class F>
    void fields(const YAML::Node& n, const std::string& what,
                std::initializer_list<const char*> known, F&& f) {
        if (!n.IsMap()) {
            diags.error(at(n), what + " must be a mapping");
            return;
        }
        for (const auto& kv : n) {
            std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
            bool ok = false;
            for (const char* k : known)
                ok = ok || key == k;
            if (!ok) {
                std::string list;
                for (const char* k : known)
                    list += (list.empty() ? "" : ", ") + std::string(k);
                diags.error(at(kv.first), "unknown key '" + key + "' in " + what,
                            "known keys: " + list);
                continue;
            }
            f(key, kv.second);
        }
    }

    Tensor tensor(const YAML::Node& n, bool needs_shape) {
        Tensor t;
        t.where = at(n);
        if (n.IsScalar() && !needs_shape) {
            t.name = n.Scalar();
            return t;
        }
        fields(n, "a tensor", {"name", "shape", "dtype"},
               [&](const std::string& k, const YAML::Node& v) {
                   if (k == "name")
                       t.name = str(v, "tensor name").value_or("");
                   else if (k == "shape")
                       t.shape = number_list<std::int64_t>(v, "shape");
                   else
                       t.dtype = str(v, "dtype").value_or("");
               });
        if (t.name.empty())
            diags.error(t.where, "a tensor needs a name");
        if (needs_shape && (t.dtype.empty() || !n["shape"]))
            diags.error(t.where, "output '" + t.name + "' needs a shape and a dtype");
        return t;
    }
    std::vector<Tensor> tensors(const YAML::Node& n, bool needs_shape, const std::string& what) {
        std::vector<Tensor> out;
        if (n.IsNull())
            return out;
        if (!n.IsSequence()) {
            diags.error(at(n), what + " must be a list");
            return out;
        }
        for (const auto& item : n)
            out.push_back(tensor(item, needs_shape));
        return out;
    }

    void kernel_field(KernelRef& k, const std::string& key, const YAML::Node& v) {
        if (key == "json_path")
            k.json_path = str(v, "json_path").value_or("");
        else if (key == "bin_path")
            k.bin_path = str(v, "bin_path").value_or("");
        else
            k.source_path = str(v, "source_path").value_or("");
    }

    Op op(const YAML::Node& n) {
        Op o;
        o.where = at(n);
        o.kernel.where = o.where;
        fields(n, "an operator",
               {"name", "type", "kernel", "json_path", "bin_path", "source_path", "stream_id",
                "task_type", "engine", "inputs", "outputs", "send_event_list", "recv_event_list",
                "scope", "no_fusion"},
               [&](const std::string& k, const YAML::Node& v) {
                   if (k == "name")
                       o.name = str(v, "name").value_or("");
                   else if (k == "type")
                       o.type = str(v, "type").value_or("");
                   else if (k == "kernel") {
                       o.kernel.where = at(v);
                       fields(v, "kernel", {"json_path", "bin_path", "source_path"},
                              [&](const std::string& kk, const YAML::Node& vv) {
                                  kernel_field(o.kernel, kk, vv);
                              });
                   } else if (k == "json_path" || k == "bin_path" || k == "source_path") {
                       o.kernel.where = at(v);
                       kernel_field(o.kernel, k, v);
                   } else if (k == "stream_id")
                       o.stream_id = number<std::uint32_t>(v, "stream_id").value_or(0);
                   else if (k == "task_type") {
                       auto t = str(v, "task_type").value_or("normal");
                       if (t == "dynamic")
                           o.task_type = TaskType::dynamic;
                       else if (t != "normal")
                           diags.error(at(v), "task_type must be normal or dynamic");
                   } else if (k == "engine") {
                       auto e = str(v, "engine").value_or("aicore");
                       bool found = false;
                       for (Engine cand : {Engine::aicore, Engine::tbe, Engine::aicpu, Engine::simt,
                                           Engine::hccl})
                           if (engine_name(cand) == e) {
                               o.engine = cand;
                               found = true;
                           }
                       if (!found)
                           diags.error(at(v), "engine '" + e + "' is unknown",
                                       "aicore, tbe, aicpu, simt or hccl");
                   } else if (k == "inputs")
                       o.inputs = tensors(v, false, "inputs");
                   else if (k == "outputs")
                       o.outputs = tensors(v, true, "outputs");
                   else if (k == "send_event_list")
                       o.send_events = number_list<std::int64_t>(v, "send_event_list");
                   else if (k == "recv_event_list")
                       o.recv_events = number_list<std::int64_t>(v, "recv_event_list");
                   else if (k == "scope")
                       o.scope = v.IsNull() ? "" : str(v, "scope").value_or("");
                   else
                       o.no_fusion = boolean(v, "no_fusion").value_or(false);
               });
        if (o.name.empty())
            diags.error(o.where, "an operator needs a name");
        if (o.type.empty())
            diags.error(o.where, "operator '" + o.name + "' needs a type (its OpType)");
        if (o.kernel.json_path.empty())
            diags.error(o.kernel.where, "operator '" + o.name + "' needs kernel.json_path",
                        "the compiled kernel's metadata JSON, relative to the graph file");
        return o;
    }

    void options(Graph& g, const YAML::Node& n) {
        fields(n, "super_kernel_optimize_options",
               {"preload_code", "split_mode", "stream_fusion", "early_start", "constant_codegen",
                "auto_op_parallel", "debug_sync_all", "debug_op_exec_trace",
                "debug_cross_core_sync_check", "debug_per_op_max_core_num",
                "dcci_before_kernel_start", "dcci_after_kernel_end", "dcci_disable_on_kernel",
                "ubuf_lock_ignore_kernel"},
               [&](const std::string& k, const YAML::Node& v) {
                   std::vector<std::string> list;
                   if (v.IsSequence())
                       for (const auto& item : v)
                           list.push_back(item.IsScalar() ? item.Scalar() : "");
                   auto text = check_graph_option(k, v.IsScalar() ? v.Scalar() : "",
                                                  v.IsSequence() ? &list : nullptr, at(v), diags);
                   if (text)
                       g.options[k] = *text;
               });
    }

    void scopes(Graph& g, const YAML::Node& n) {
        if (!n.IsMap()) {
            diags.error(at(n), "scopes must be a mapping of scope name to options");
            return;
        }
        for (const auto& kv : n) {
            Scope s{kv.first.Scalar(), "", at(kv.first)};
            if (kv.second.IsScalar())
                s.options = kv.second.Scalar();
            else if (kv.second.IsMap())
                fields(kv.second, "scope '" + s.name + "'", {"options"},
                       [&](const std::string&, const YAML::Node& v) {
                           s.options = str(v, "options").value_or("");
                       });
            else if (!kv.second.IsNull())
                diags.error(at(kv.second), "scope '" + s.name + "' must map to an options string");
            if (g.find_scope(s.name))
                diags.error(s.where, "scope '" + s.name + "' is declared twice");
            else
                g.scopes.push_back(std::move(s));
        }
    }
};

} // namespace

Graph parse_graph_text(const std::string& text, const std::string& file, Diagnostics& diags) {
    Graph g;
    g.file = file;
    g.dir = support::parent_directory(file);
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        diags.error({file, e.mark.line + 1, e.mark.column + 1}, "YAML syntax error: " + e.msg);
        return g;
    }
    Reader r{file, diags};
    if (!root.IsMap()) {
        diags.error({file, 1, 1}, "the graph must be a YAML mapping with an 'ops' list");
        return g;
    }
    try {
        r.fields(root, "the graph",
                 {"name", "npu_arch", "soc_version", "super_kernel_optimize",
                  "super_kernel_optimize_options", "inputs", "scopes", "ops"},
                 [&](const std::string& k, const YAML::Node& v) {
                     if (k == "name")
                         g.name = r.str(v, "name").value_or("");
                     else if (k == "npu_arch")
                         g.npu_arch = r.str(v, "npu_arch").value_or("");
                     else if (k == "soc_version")
                         g.soc_version = r.str(v, "soc_version").value_or("");
                     else if (k == "super_kernel_optimize")
                         g.super_kernel_optimize =
                             r.boolean(v, "super_kernel_optimize").value_or(true);
                     else if (k == "super_kernel_optimize_options")
                         r.options(g, v);
                     else if (k == "inputs")
                         g.inputs = r.tensors(v, true, "inputs");
                     else if (k == "scopes")
                         r.scopes(g, v);
                     else if (!v.IsSequence())
                         diags.error(r.at(v), "ops must be a list of operators");
                     else {
                         g.ops.reserve(v.size());
                         for (const auto& item : v)
                             g.ops.push_back(r.op(item));
                     }
                 });
    } catch (const YAML::Exception& e) {
        diags.error({file, e.mark.line + 1, e.mark.column + 1},
                    std::string("malformed graph: ") + e.what());
    }
    if (!root["ops"])
        diags.error({file, 1, 1}, "the graph has no 'ops' list");
    if (g.name.empty()) {
        std::string stem = support::base_name(file);
        g.name = stem.substr(0, stem.find('.'));
    }
    // Scopes used by operators but not declared get empty options.
    std::set<std::string> declared;
    for (const auto& s : g.scopes)
        declared.insert(s.name);
    for (const auto& op : g.ops)
        if (!op.scope.empty() && declared.insert(op.scope).second)
            g.scopes.push_back({op.scope, "", op.where});
    return g;
}

namespace {

std::string resolve(const Graph& g, const std::string& p) {
    return p.empty() || p.front() == '/' ? p : g.dir + "/" + p;
}

// Loads each distinct metadata file once and checks each distinct binary once.
void load_kernels(Graph& g, Diagnostics& diags) {
    std::unordered_map<std::string, int> index;
    std::unordered_map<std::string, std::string> binary_digest;
    for (auto& op : g.ops) {
        if (op.kernel.json_path.empty())
            continue;
        std::string path = resolve(g, op.kernel.json_path);
        auto [it, fresh] = index.emplace(path, static_cast<int>(g.kernels.size()));
        op.kernel_index = it->second;
        if (fresh) {
            LoadedKernel k{path, {}, false};
            try {
                std::vector<kernel::MetaProblem> problems;
                k.meta = kernel::parse_kernel_meta(support::read_file(path), problems);
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
        std::string bin = resolve(g, op.kernel.bin_path);
        auto& kernel = g.kernels[static_cast<std::size_t>(op.kernel_index)];
        auto found = binary_digest.find(bin);
        if (found == binary_digest.end()) {
            std::string digest;
            try {
                digest = support::sha256_hex(support::read_file(bin));
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

Graph load_graph(const std::string& path, Diagnostics& diags) {
    std::string text;
    try {
        text = support::read_file(path);
    } catch (const support::Error& e) {
        diags.error({path, 0, 0}, e.what());
        return Graph{};
    }
    Graph g = parse_graph_text(text, path, diags);
    load_kernels(g, diags);
    return g;
}

} // namespace skforge::graph
