// SPDX-License-Identifier: Apache-2.0
// The vendor's SuperKernel input as a graph: the `kernel_info` CANN's graph engine hands
// graph-autofusion's superkernel.super_kernel.compile (share/doc/graph-format.md, "A vendor
// kernel_info as the graph"): one scope over every op_list entry, in order, with the
// super_kernel_options as the scope's options.
#include "skforge/graph/graph.hpp"

#include "skforge/support/file.hpp"

#include <nlohmann/json.hpp>

namespace skforge::graph {

using nlohmann::json;

namespace {

// The vendor's keys of an op_list entry (graph-autofusion super_kernel_sub_op_infos.py
// SubOperatorInfos.__init__, super_kernel_op_infos.py get_sub_op_streamid).
constexpr const char* k_entry_keys[] = {"bin_path",  "json_path",       "stream_id",
                                        "task_type", "send_event_list", "recv_event_list"};

struct InfoReader {
    Graph& g;
    Diagnostics& diags;

    void error(const std::string& where, const std::string& what, const std::string& hint) {
        diags.error({g.file_ref, 0, 0}, "kernel_info " + where + ": " + what, hint);
    }

    std::vector<std::int64_t> events(const json& entry, const char* key, const std::string& at) {
        std::vector<std::int64_t> out;
        auto it = entry.find(key);
        if (it == entry.end())
            return out; // the vendor's .get(key, [])
        if (!it->is_array()) {
            error(at + "." + key, "is not a list", "give a list of integer event ids");
            return out;
        }
        for (const auto& e : *it) {
            if (!e.is_number_integer()) {
                error(at + "." + key, "holds " + e.dump() + ", not an integer event id",
                      "event ids are integers");
                continue;
            }
            out.push_back(e.get<std::int64_t>());
        }
        return out;
    }

    std::string path(const json& entry, const char* key, const std::string& at) {
        auto it = entry.find(key);
        if (it == entry.end() || !it->is_string() || it->get<std::string>().empty()) {
            error(at + "." + key, "is missing or not a path", "give the sub-kernel's file");
            return {};
        }
        return it->get<std::string>();
    }

    void op(const json& entry, std::size_t i) {
        const std::string at = "op_list[" + std::to_string(i) + "]";
        if (!entry.is_object()) {
            error(at, "is not an object", "each entry names one compiled sub-kernel");
            return;
        }
        for (const auto& item : entry.items()) {
            const std::string& key = item.key(); // a structured binding: clang 14 cannot capture it
            if (std::find_if(std::begin(k_entry_keys), std::end(k_entry_keys),
                             [&](const char* k) { return key == k; }) == std::end(k_entry_keys))
                diags.warning({g.file_ref, 0, 0}, "kernel_info " + at + "." + key +
                                                      " is not read by the vendor's "
                                                      "compiler and is ignored");
        }
        if (!entry.contains("json_path")) {
            // The vendor's SuperOperatorInfos skips such an entry.
            diags.warning({g.file_ref, 0, 0}, "kernel_info " + at +
                                                  " has no json_path and is skipped, as the "
                                                  "vendor's compiler skips it");
            return;
        }
        Op op;
        op.name = "op" + std::to_string(i);
        op.where = {g.file_ref, 0, 0};
        op.kernel.where = op.where;
        op.kernel.json_path = path(entry, "json_path", at);
        op.kernel.bin_path = path(entry, "bin_path", at);
        op.scope = "superkernel";
        if (auto s = entry.find("stream_id"); s != entry.end()) {
            // The vendor takes an absent stream_id as -1; skforge streams are numbered from 0.
            if (!s->is_number_integer() || s->get<std::int64_t>() < -1 ||
                s->get<std::int64_t>() > std::numeric_limits<std::int32_t>::max())
                error(at + ".stream_id", "is " + s->dump() + ", not a stream id",
                      "give an integer of at least -1");
            else
                op.stream_id = static_cast<std::uint32_t>(std::max<std::int64_t>(0, *s));
        }
        if (auto t = entry.find("task_type"); t != entry.end()) {
            // STR_TO_SUPER_TASK_TYPE (asc-devkit super_kernel_constants.py): normal, dynamic.
            if (*t == "dynamic")
                op.task_type = TaskType::dynamic;
            else if (*t != "normal")
                error(at + ".task_type", "is " + t->dump(), "give \"normal\" or \"dynamic\"");
        }
        op.send_events = events(entry, "send_event_list", at);
        op.recv_events = events(entry, "recv_event_list", at);
        g.ops.push_back(std::move(op));
    }
};

// The file's stem, as a graph name.
std::string stem_of(const std::string& file) {
    auto slash = file.find_last_of('/');
    std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
    auto dot = base.rfind('.');
    return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

} // namespace

bool is_kernel_info(std::string_view text) {
    auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || text[first] != '{')
        return false;
    auto doc = json::parse(text.begin(), text.end(), nullptr, false);
    return doc.is_object() && doc.contains("op_list");
}

Graph parse_kernel_info(std::string_view text, const std::string& file, Diagnostics& diags) {
    Graph g;
    g.file = file;
    g.file_ref = std::make_shared<const std::string>(file);
    g.dir = support::parent_directory(file);
    g.name = stem_of(file);
    g.name_where = {g.file_ref, 0, 0};
    g.npu_arch = "dav-2201"; // our choice: the vendor's input names no architecture
    g.from_kernel_info = true;
    InfoReader r{g, diags};
    auto doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (!doc.is_object() || !doc.contains("op_list")) {
        r.error("", "is not a JSON object with an op_list", "give the vendor's kernel_info");
        return g;
    }
    for (const auto& [key, value] : doc.items())
        if (key != "op_list" && key != "super_kernel_options")
            diags.warning({g.file_ref, 0, 0}, "kernel_info key '" + key +
                                                  "' is not read by the vendor's compiler and "
                                                  "is ignored");
    const auto& list = doc["op_list"];
    if (!list.is_array() || list.empty()) {
        r.error("op_list", "is not a list of sub-kernels", "list at least one sub-kernel");
        return g;
    }
    std::string options;
    if (auto o = doc.find("super_kernel_options"); o != doc.end()) {
        if (!o->is_string())
            r.error("super_kernel_options", "is not a string",
                    "write the options as key=value:key=value");
        else
            options = o->get<std::string>();
    }
    g.scopes.push_back({"superkernel", options, {g.file_ref, 0, 0}});
    for (std::size_t i = 0; i < list.size(); ++i)
        r.op(list[i], i);
    return g;
}

void name_kernel_info_ops(Graph& g) {
    // The OpType the op compiler recorded (sub_operator_op_type), else the kernel's name.
    for (auto& op : g.ops) {
        if (op.kernel_index < 0)
            continue;
        const auto& meta = g.kernels[static_cast<std::size_t>(op.kernel_index)].meta;
        op.type = !meta.op_type.empty() ? meta.op_type : meta.kernel_name;
        if (op.type.empty())
            op.type = "SubKernel";
    }
}

} // namespace skforge::graph
