// SPDX-License-Identifier: Apache-2.0
#include "skforge/graph/diagnostics.hpp"

namespace skforge::graph {

void Diagnostics::error(const Location& where, std::string message, std::string hint) {
    m_items.push_back({Severity::error, where, std::move(message), std::move(hint)});
    ++m_errors;
}

void Diagnostics::warning(const Location& where, std::string message, std::string hint) {
    m_items.push_back({Severity::warning, where, std::move(message), std::move(hint)});
}

void Diagnostics::append(const Diagnostics& other) {
    m_items.insert(m_items.end(), other.m_items.begin(), other.m_items.end());
    m_errors += other.m_errors;
}

const std::string& Location::file_name() const {
    static const std::string k_none;
    return file ? *file : k_none;
}

std::string format_diagnostic(const Diagnostic& d) {
    std::string out = d.where.file_name();
    if (d.where.line > 0)
        out += ":" + std::to_string(d.where.line) + ":" + std::to_string(d.where.column);
    out += d.severity == Severity::error ? ": error: " : ": warning: ";
    out += d.message;
    if (!d.hint.empty())
        out += " (" + d.hint + ")";
    return out;
}

std::string Diagnostics::format() const {
    std::string out;
    for (const auto& d : m_items)
        out += format_diagnostic(d) + "\n";
    return out;
}

} // namespace skforge::graph
