// SPDX-License-Identifier: Apache-2.0
#include "skforge/install/holders.hpp"

#include "skforge/install/safe_fs.hpp"
#include "skforge/package/path_rules.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/fault.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace skforge::install {

using support::Error;
using support::ErrorKind;

namespace {

constexpr const char* k_holds_header =
    "# skforge: who holds each static-kernel package (installer.md, \"Lifecycle\")\n";

template <class T> std::optional<T> number(std::string_view s) {
    T v{};
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

std::optional<Holder> parse_holder(std::string_view s) {
    auto colon = s.find(':');
    if (colon == std::string_view::npos)
        return std::nullopt;
    auto pid = number<long>(s.substr(0, colon));
    auto start = number<std::uint64_t>(s.substr(colon + 1));
    if (!pid || !start || *pid <= 0)
        return std::nullopt;
    return Holder{*pid, *start};
}

} // namespace

std::string holder_text(const Holder& h) {
    return std::to_string(h.pid) + ":" + std::to_string(h.start);
}

// /proc/<pid>/stat: the command name (field 2) is in parentheses and may hold spaces or ')', so
// the fields are counted after the last ')': state is field 3, starttime field 22.
std::optional<std::uint64_t> process_start_time(long pid) {
    if (pid <= 0)
        return std::nullopt;
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!in || !std::getline(in, line))
        return std::nullopt;
    auto paren = line.rfind(')');
    if (paren == std::string::npos)
        return std::nullopt;
    std::istringstream fields(line.substr(paren + 1));
    std::string field;
    for (int n = 3; fields >> field; ++n) {
        if (n == 3 && (field == "Z" || field == "X" || field == "x"))
            return std::nullopt; // exited, not yet reaped: its kernels are no longer in use
        if (n == 22)
            return number<std::uint64_t>(field);
    }
    return std::nullopt;
}

namespace {

// The parent of running process `pid` (field 4 of /proc/<pid>/stat); 0 when it is gone.
long parent_of(long pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!in || !std::getline(in, line) || line.rfind(')') == std::string::npos)
        return 0;
    std::istringstream fields(line.substr(line.rfind(')') + 1));
    std::string state, ppid;
    fields >> state >> ppid;
    return number<long>(ppid).value_or(0);
}

} // namespace

std::vector<Holder> this_process_and_ancestors() {
    std::vector<Holder> out;
    for (long pid = ::getpid(); pid > 1 && out.size() < 256; pid = parent_of(pid))
        if (auto start = process_start_time(pid))
            out.push_back({pid, *start});
    return out;
}

bool holder_alive(const Holder& h) {
    auto start = process_start_time(h.pid);
    return start && *start == h.start;
}

std::optional<Holder> parse_holder_option(const std::string& text, bool must_run) {
    if (text == "0")
        return std::nullopt;
    if (auto h = parse_holder(text))
        return h;
    auto pid = number<long>(text);
    if (!pid || *pid <= 0)
        throw Error("--holder '" + text + "': give a process id (PID or PID:START), or 0",
                    ErrorKind::usage);
    auto start = process_start_time(*pid);
    if (start)
        return Holder{*pid, *start};
    if (must_run)
        throw Error("--holder " + text +
                        ": no such running process (a package is held by a "
                        "live process)",
                    ErrorKind::usage);
    return Holder{*pid, 0}; // gone: holds nothing, releases nothing
}

HoldRecords parse_holds(std::string_view text) {
    HoldRecords out;
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string name, kind, h;
        if (!(words >> name >> kind) || name.starts_with('#') ||
            package::check_package_name(name) || (kind != "held" && kind != "persistent"))
            continue;
        HoldRecord r;
        r.persistent = kind == "persistent";
        while (words >> h)
            if (auto holder = parse_holder(h))
                r.holders.push_back(*holder);
        out[name] = std::move(r);
    }
    return out;
}

std::string render_holds(const HoldRecords& records) {
    std::string out = k_holds_header;
    for (const auto& [name, r] : records) {
        out += name + (r.persistent ? " persistent" : " held");
        for (const auto& h : r.holders)
            out += " " + holder_text(h);
        out += "\n";
    }
    return out;
}

std::vector<Holder> live_holders(const std::optional<HoldRecord>& record) {
    std::vector<Holder> out;
    if (record)
        for (const auto& h : record->holders)
            if (holder_alive(h))
                out.push_back(h);
    return out;
}

std::optional<HoldRecord> hold_after_install(std::optional<HoldRecord> old, bool installed,
                                             const std::optional<Holder>& holder) {
    HoldRecord r;
    // A package installed before holders existed (or by CANN's installer) has no line: persistent.
    r.persistent = !holder || (installed && (!old || old->persistent));
    if (installed)
        r.holders = live_holders(old);
    if (holder && std::find(r.holders.begin(), r.holders.end(), *holder) == r.holders.end())
        r.holders.push_back(*holder);
    if (r.persistent && r.holders.empty())
        return std::nullopt;
    return r;
}

bool collectable(const std::optional<HoldRecord>& record) {
    return record && !record->persistent && live_holders(record).empty();
}

std::string holders_list(const std::vector<Holder>& holders) {
    std::string out;
    for (const auto& h : holders)
        out += (out.empty() ? "pid " : ", pid ") + std::to_string(h.pid) + " (started " +
               std::to_string(h.start) + ")";
    return out;
}

HoldRecords read_holds(const InstallTree& tree) {
    auto config = open_dir_beneath(tree.ai_core(), k_config_dir);
    if (!config)
        return {};
    auto text = read_file_at(*config, k_holders_file, 16u << 20);
    return text ? parse_holds(*text) : HoldRecords{};
}

std::optional<HoldRecord> hold_of(const HoldRecords& records, const std::string& name) {
    auto it = records.find(name);
    if (it == records.end())
        return std::nullopt;
    return it->second;
}

void write_hold(const InstallTree& tree, HoldRecords& records, const std::string& name,
                const std::optional<HoldRecord>& record) {
    std::string before = records.empty() ? std::string() : render_holds(records);
    if (record)
        records[name] = *record;
    else
        records.erase(name);
    // A line stays while its package's directory is there (a held install writes its line just
    // before the package is committed; an uninstall's line goes once the directory is gone).
    std::erase_if(records, [&](const auto& kv) {
        auto st = stat_at(tree.ai_core(), kv.first);
        return !st || !S_ISDIR(st->st_mode);
    });
    if (record)
        records[name] = *record;
    std::string after = records.empty() ? std::string() : render_holds(records);
    if (after.empty() && before.empty())
        return; // nothing recorded before or after: no file to write or remove
    auto config = tree.config_dir();
    if (after == before && stat_at(config, k_holders_file))
        return;
    if (after.empty()) {
        unlink_at(config, k_holders_file);
        sync_dir(config);
    } else {
        write_file_at(config, k_holders_file, after, tree.modes().file(0644));
    }
    support::fault_point("holders written");
}

void prune_holds(const InstallTree& tree) {
    auto records = read_holds(tree);
    if (!records.empty())
        write_hold(tree, records, "", std::nullopt);
}

} // namespace skforge::install
