// SPDX-License-Identifier: Apache-2.0
#include "skforge/runtime/report.hpp"

#include "skforge/support/format.hpp"

#include <algorithm>

namespace skforge::runtime {

namespace {

nlohmann::json timing_json(const Timing& t) {
    return {{"launches", t.launches}, {"median_ms", t.median_ms}, {"min_ms", t.min_ms}};
}

nlohmann::json difference_json(const Difference& d, unsigned run) {
    return {{"tensor", d.tensor},
            {"run", run},
            {"first_byte", d.first_byte},
            {"differing_bytes", d.differing_bytes}};
}

nlohmann::json differences_json(const std::vector<Difference>& list, unsigned run) {
    nlohmann::json diffs = nlohmann::json::array();
    for (const auto& d : list)
        diffs.push_back(difference_json(d, run));
    return diffs;
}

double speedup(const RunReport& r) {
    return r.fused.median_ms > 0 ? r.unfused->median_ms / r.fused.median_ms : 0.0;
}

std::string timing_line(const char* mode, const Timing& t, unsigned iterations) {
    return support::format("  %-10s %4llu launches per run, %9.3f ms per run (median of %u, min "
                           "%.3f)",
                           mode, static_cast<unsigned long long>(t.launches), t.median_ms,
                           iterations, t.min_ms);
}

} // namespace

std::vector<RunDifference> merged_differences(const Comparison& c, unsigned last_run) {
    std::vector<RunDifference> out;
    for (const auto& d : c.first)
        out.push_back({d, 1});
    for (const auto& d : c.last)
        if (std::none_of(c.first.begin(), c.first.end(),
                         [&](const Difference& f) { return f.tensor == d.tensor; }))
            out.push_back({d, last_run});
    return out;
}

nlohmann::json report_json(const RunReport& r) {
    nlohmann::json j = {{"package", r.package},
                        {"graph", r.graph},
                        {"device", r.device},
                        {"operators", r.operators},
                        {"superkernels", r.superkernels},
                        {"iterations", r.iterations},
                        {"fused", timing_json(r.fused)}};
    if (r.device.starts_with("host:"))
        j["workers"] = std::stoul(r.device.substr(5));
    if (r.unfused && r.comparison) {
        const Comparison& cmp = *r.comparison;
        j["unfused"] = timing_json(*r.unfused);
        j["speedup"] = speedup(r);
        j["compared"] = cmp.compared;
        j["identical"] = cmp.differing == 0;
        nlohmann::json diffs = nlohmann::json::array();
        for (const auto& d : merged_differences(cmp, r.iterations + 1))
            diffs.push_back(difference_json(d.d, d.run));
        j["differences"] = diffs;
        j["first_run_differences"] = differences_json(cmp.first, 1);
        j["last_run_differences"] = differences_json(cmp.last, r.iterations + 1);
    }
    return j;
}

std::vector<std::string> report_text(const RunReport& r) {
    std::string dev = r.device;
    if (dev.starts_with("host:"))
        dev = dev.substr(5) + " workers";
    std::vector<std::string> lines;
    lines.push_back(support::format(
        "%s: graph %s, %zu operators, %zu SuperKernels, %s, inputs %s", r.package.c_str(),
        r.graph.c_str(), r.operators, r.superkernels, dev.c_str(),
        r.inputs == "random" ? ("random (seed " + std::to_string(r.seed) + ")").c_str()
                             : r.inputs.c_str()));
    lines.push_back(timing_line("fused:", r.fused, r.iterations));
    if (!r.unfused || !r.comparison)
        return lines;
    const Comparison& cmp = *r.comparison;
    lines.push_back(timing_line("op-by-op:", *r.unfused, r.iterations));
    lines.push_back(support::format("  speedup:   %.2fx fused", speedup(r)));
    if (cmp.differing == 0)
        lines.push_back(
            support::format("  compare:   %zu tensor%s bitwise identical (first and last run)",
                            cmp.compared, cmp.compared == 1 ? "" : "s"));
    else
        lines.push_back(
            support::format("  compare:   %zu of %zu tensors DIFFER", cmp.differing, cmp.compared));
    return lines;
}

std::vector<std::string> report_differences(const RunReport& r) {
    std::vector<std::string> lines;
    if (!r.comparison)
        return lines;
    for (const auto& d : merged_differences(*r.comparison, r.iterations + 1))
        lines.push_back(support::format(
            "skrun: %s differs fused vs op-by-op after run %u: %llu bytes, first at byte %llu",
            d.d.tensor.c_str(), d.run, static_cast<unsigned long long>(d.d.differing_bytes),
            static_cast<unsigned long long>(d.d.first_byte)));
    return lines;
}

} // namespace skforge::runtime
