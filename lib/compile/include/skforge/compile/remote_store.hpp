// SPDX-License-Identifier: Apache-2.0
#pragma once

// The remote tier of the op_compiler front end's store (share/doc/op-compiler.md): plain files
// over HTTP, GET/PUT/HEAD, the protocol of ccache's http backend and bazel-remote, so a fleet
// compiles each operator set once. <url>/<key[0:2]>/<key>.run and <key>.json ({"sha256", "size"}),
// the JSON put last so that a reader never takes a half-uploaded package.
#include "skforge/support/log.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace skforge::compile {

/// Whether this build can reach a remote store (libcurl was found when it was configured).
bool remote_store_supported();

/// A remote store at an http:// or https:// URL. Every package fetched is checked (size and
/// SHA-256 against the entry's JSON, its structure as a skforge .run) before it is used. The
/// first failure to reach the server warns once and turns the store off for the process: the
/// local tiers carry on.
class RemoteStore {
  public:
    /// A store at `url` (no trailing slash needed); throws an Error naming it when the URL is
    /// not http(s) or this build has no HTTP client.
    RemoteStore(std::string url, support::Log& log);
    ~RemoteStore();
    RemoteStore(const RemoteStore&) = delete;
    RemoteStore& operator=(const RemoteStore&) = delete;

    /// The URL, as given.
    const std::string& url() const { return m_url; }

    /// True when the entry for `key` was downloaded to `dest` and checked. A missing entry is
    /// false; a damaged, truncated or foreign one is false with a warning naming its URL.
    bool fetch(const std::string& key, const std::string& dest);

    /// Uploads the package at `run_path` under `key` unless the server has it (HEAD).
    void insert(const std::string& key, const std::string& run_path);

    /// The op map: <url>/ops/<k[0:2]>/<k> holds the key of a stored package that holds the
    /// kernels of the op JSON whose own request key is `k` (op_store.hpp). The key it names, or
    /// nullopt (no line, a line that is not a key, the server down); the package it names is
    /// checked when it is fetched, as every entry is.
    std::optional<std::string> op_owner(const std::string& op_key);

    /// Puts a line naming `key` under each of `op_keys` (after the package itself was put).
    void record_ops(const std::vector<std::string>& op_keys, const std::string& key);

  private:
    struct Client;
    std::string m_url;
    support::Log& m_log;
    std::unique_ptr<Client> m_client;
    bool m_down = false;

    std::string entry_url(const std::string& key, const char* suffix) const;
    void went_down(const std::string& why);
};

} // namespace skforge::compile
