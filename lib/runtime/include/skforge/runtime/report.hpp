// SPDX-License-Identifier: Apache-2.0
#pragma once

// What `skrun` reports of a package's runs: the timings of each mode, the comparison of every
// output fused against op-by-op, as a JSON document and as the lines a user reads.
#include "skforge/runtime/data.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace skforge::runtime {

/// One mode's runs: launches per run, and the median and fastest of the timed runs.
struct Timing {
    std::uint64_t launches = 0;
    double median_ms = 0, min_ms = 0;
};

/// Every tensor both modes write compared after the first run and after the last.
struct Comparison {
    std::size_t compared = 0;
    std::vector<Difference> first, last; ///< differences after the first run, the last run
    std::size_t differing = 0;           ///< tensors that differ in either
};

/// A difference and the run (from 1) after which it was seen.
struct RunDifference {
    Difference d;
    unsigned run = 1;
};

/// The first run's differences, then the last run's (run `last_run`) in tensors the first
/// showed none in.
std::vector<RunDifference> merged_differences(const Comparison& c, unsigned last_run);

/// What was run and how it went.
struct RunReport {
    std::string package, graph;
    std::string device; ///< as the runtime names it: host:<workers>, npu:<id>
    std::string inputs; ///< random, or the directory they were read from
    std::uint64_t seed = 1;
    std::size_t operators = 0, superkernels = 0;
    unsigned iterations = 0; ///< timed runs of each mode after its first
    Timing fused;
    std::optional<Timing> unfused;        ///< with --compare-unfused
    std::optional<Comparison> comparison; ///< with --compare-unfused
};

/// `skrun --json`'s document (share/doc/host-target.md).
nlohmann::json report_json(const RunReport& r);
/// `skrun`'s lines on standard output.
std::vector<std::string> report_text(const RunReport& r);
/// One line per differing tensor, for standard error (empty when every output is identical).
std::vector<std::string> report_differences(const RunReport& r);

} // namespace skforge::runtime
