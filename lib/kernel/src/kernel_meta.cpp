#include "skforge/kernel/kernel_meta.hpp"

#include "skforge/support/hex.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <numeric>

namespace skforge::kernel {

using nlohmann::json;

namespace {
constexpr std::array<std::pair<KernelType, std::string_view>, 6> k_type_names = {{
    {KernelType::aiv_only, "KERNEL_TYPE_AIV_ONLY"},
    {KernelType::aic_only, "KERNEL_TYPE_AIC_ONLY"},
    {KernelType::mix_aiv_1_0, "KERNEL_TYPE_MIX_AIV_1_0"},
    {KernelType::mix_aic_1_0, "KERNEL_TYPE_MIX_AIC_1_0"},
    {KernelType::mix_aic_1_1, "KERNEL_TYPE_MIX_AIC_1_1"},
    {KernelType::mix_aic_1_2, "KERNEL_TYPE_MIX_AIC_1_2"},
}};
} // namespace

std::string_view kernel_type_name(KernelType type) {
    for (const auto& [t, n] : k_type_names)
        if (t == type)
            return n;
    return "KERNEL_TYPE_UNKNOWN";
}

std::optional<KernelType> parse_kernel_type(std::string_view text) {
    for (const auto& [t, n] : k_type_names)
        if (n == text)
            return t;
    return std::nullopt;
}

bool is_vector_only(KernelType type) {
    return type == KernelType::aiv_only || type == KernelType::mix_aiv_1_0;
}

bool is_cube_only(KernelType type) {
    return type == KernelType::aic_only || type == KernelType::mix_aic_1_0;
}

const std::vector<Magic>& magic_table() {
    static const std::vector<Magic> table = {
        {"RT_DEV_BINARY_MAGIC_PLAIN", 0xabceed50, false},
        {"RT_DEV_BINARY_MAGIC_PLAIN_AICPU", 0xabceed51, true},
        {"RT_DEV_BINARY_MAGIC_PLAIN_AIVEC", 0xabceed52, false},
        {"RT_DEV_BINARY_MAGIC_ELF", 0x43554245, false},
        {"RT_DEV_BINARY_MAGIC_ELF_AICPU", 0x41415243, true},
        {"RT_DEV_BINARY_MAGIC_ELF_AIVEC", 0x41415246, false},
        {"RT_DEV_BINARY_MAGIC_ELF_AICUBE", 0x41494343, false},
        {k_host_magic_name, k_host_magic, false},
    };
    return table;
}

const Magic* find_magic(std::string_view name) {
    for (const auto& m : magic_table())
        if (m.name == name)
            return &m;
    return nullptr;
}

std::uint64_t Workspace::total() const {
    return std::accumulate(size.begin(), size.end(), std::uint64_t{0});
}

namespace {

template <class T>
void read(const json& doc, const char* key, T& out, std::vector<MetaProblem>& problems) {
    auto it = doc.find(key);
    if (it == doc.end())
        return;
    try {
        out = it->get<T>();
    } catch (const json::exception&) {
        problems.push_back({key, std::string("'") + key + "' has the wrong type"});
    }
}

void read_workspace(const json& doc, Workspace& ws, std::vector<MetaProblem>& problems) {
    auto it = doc.find("workspace");
    if (it == doc.end())
        return;
    if (!it->is_object()) {
        problems.push_back({"workspace", "'workspace' must be an object {num, size[], type[]}"});
        return;
    }
    read(*it, "size", ws.size, problems);
    read(*it, "type", ws.type, problems);
    std::uint64_t num = ws.size.size();
    read(*it, "num", num, problems);
    if (num != ws.size.size())
        problems.push_back({"workspace", "'workspace.num' is " + std::to_string(num) +
                                             " but 'size' has " + std::to_string(ws.size.size()) +
                                             " entries"});
}

// supportSuperKernel and friends appear as 0/1 or as booleans.
bool read_flag(const json& doc, const char* key, std::vector<MetaProblem>& problems) {
    auto it = doc.find(key);
    if (it == doc.end())
        return false;
    if (it->is_boolean())
        return it->get<bool>();
    if (it->is_number_integer())
        return it->get<std::int64_t>() != 0;
    problems.push_back({key, std::string("'") + key + "' must be 0, 1, true or false"});
    return false;
}

// `deterministic` is "true", "false" or "ignore"; a boolean is taken for its text.
std::string read_deterministic(const json& doc, std::vector<MetaProblem>& problems) {
    auto it = doc.find("deterministic");
    if (it == doc.end())
        return "";
    if (it->is_boolean())
        return it->get<bool>() ? "true" : "false";
    if (it->is_string() && (*it == "true" || *it == "false" || *it == "ignore"))
        return it->get<std::string>();
    problems.push_back(
        {"deterministic", "'deterministic' must be \"true\", \"false\" or \"ignore\""});
    return "";
}

} // namespace

KernelMeta parse_kernel_meta(std::string_view json_text, std::vector<MetaProblem>& problems) {
    KernelMeta m;
    json doc = json::parse(json_text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        problems.push_back({"", "not a JSON object"});
        return m;
    }
    read(doc, "kernelName", m.kernel_name, problems);
    read(doc, "blockDim", m.block_dim, problems);
    read(doc, "magic", m.magic_name, problems);
    read(doc, "opParaSize", m.op_para_size, problems);
    read(doc, "binFileName", m.bin_file_name, problems);
    read(doc, "binFileSuffix", m.bin_file_suffix, problems);
    read(doc, "sha256", m.sha256, problems);
    read(doc, "sub_operator_kernel_type", m.kernel_type_text, problems);
    read(doc, "coreType", m.core_type_text, problems);
    m.deterministic = read_deterministic(doc, problems);
    read(doc, "split_mode", m.split_mode, problems);
    read_workspace(doc, m.workspace, problems);
    m.support_super_kernel = read_flag(doc, "supportSuperKernel", problems);
    m.sync_all = read_flag(doc, "sub_op_with_sync_all", problems);
    if (m.kernel_name.empty())
        problems.push_back({"kernelName", "'kernelName' is missing"});
    if (const Magic* magic = find_magic(m.magic_name)) {
        m.magic = magic->value;
        m.aicpu = magic->aicpu;
    } else {
        problems.push_back({"magic", "unknown magic '" + m.magic_name + "'"});
    }
    m.kernel_type = parse_kernel_type(m.kernel_type_text);
    if (!m.sha256.empty() && !support::is_lower_hex(m.sha256, 64))
        problems.push_back({"sha256", "'sha256' must be 64 lower-case hex digits"});
    if (m.block_dim == 0)
        problems.push_back({"blockDim", "'blockDim' must be at least 1"});
    return m;
}

} // namespace skforge::kernel
