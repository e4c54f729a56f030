// SPDX-License-Identifier: Apache-2.0
#include "skforge/compile/remote_store.hpp"

#include "skforge/compile/cache_store.hpp"
#include "skforge/support/error.hpp"
#include "skforge/support/file.hpp"
#include "skforge/support/hex.hpp"
#include "skforge/support/json.hpp"
#include "skforge/support/sha256.hpp"

#include <cstdio>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef SKFORGE_HAVE_CURL
#include <curl/curl.h>
#endif

namespace skforge::compile {
using support::Error;

namespace {
// An entry's JSON is small; a larger answer is not one.
constexpr std::size_t k_max_entry_json = 1 << 16;
} // namespace

#ifdef SKFORGE_HAVE_CURL

bool remote_store_supported() {
    return true;
}

// One libcurl easy handle for the store's requests (connections are reused between them).
struct RemoteStore::Client {
    CURL* curl = nullptr;
    Client() {
        static const bool k_init = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
        curl = k_init ? curl_easy_init() : nullptr;
        if (curl == nullptr)
            throw Error("cannot start an HTTP client (libcurl)");
    }
    ~Client() { curl_easy_cleanup(curl); }

    // What a request got: the HTTP status, or 0 with `error` when the server was not reached.
    struct Answer {
        long status = 0;
        std::string error;
    };

    // Common settings: short connect timeout, give up on a stalled transfer, no signals.
    void reset(const std::string& url) {
        curl_easy_reset(curl);
        curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, 30L);
        curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
        // A body nobody asked for (an error page, a PUT's answer) goes nowhere, not to stdout.
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Client::discard);
    }

    static std::size_t discard(char*, std::size_t size, std::size_t n, void*) { return size * n; }

    Answer perform() {
        Answer a;
        CURLcode rc = curl_easy_perform(curl);
        if (rc != CURLE_OK) {
            a.error = curl_easy_strerror(rc);
            return a;
        }
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &a.status);
        return a;
    }

    static std::size_t to_string(char* data, std::size_t size, std::size_t n, void* out) {
        auto* s = static_cast<std::string*>(out);
        if (s->size() + size * n > k_max_entry_json)
            return 0; // too large: the transfer fails
        s->append(data, size * n);
        return size * n;
    }

    Answer get_text(const std::string& url, std::string& body) {
        reset(url);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &Client::to_string);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &body);
        return perform();
    }

    Answer get_file(const std::string& url, std::FILE* out, curl_off_t max_bytes) {
        reset(url);
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &std::fwrite);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
        curl_easy_setopt(curl, CURLOPT_MAXFILESIZE_LARGE, max_bytes);
        return perform();
    }

    Answer head(const std::string& url) {
        reset(url);
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
        return perform();
    }

    Answer put(const std::string& url, std::FILE* in, curl_off_t size) {
        reset(url);
        curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(curl, CURLOPT_READDATA, in);
        curl_easy_setopt(curl, CURLOPT_INFILESIZE_LARGE, size);
        return perform();
    }
};

#else

bool remote_store_supported() {
    return false;
}

struct RemoteStore::Client {};

#endif

RemoteStore::RemoteStore(std::string url, support::Log& log) : m_url(std::move(url)), m_log(log) {
    while (m_url.ends_with('/'))
        m_url.pop_back();
    if (!m_url.starts_with("http://") && !m_url.starts_with("https://"))
        throw Error("remote store '" + m_url + "': not an http:// or https:// URL");
#ifdef SKFORGE_HAVE_CURL
    m_client = std::make_unique<Client>();
#else
    throw Error("remote store '" + m_url + "': this skforge was built without libcurl");
#endif
}

RemoteStore::~RemoteStore() = default;

std::string RemoteStore::entry_url(const std::string& key, const char* suffix) const {
    return m_url + "/" + key.substr(0, 2) + "/" + key + suffix;
}

void RemoteStore::went_down(const std::string& why) {
    m_down = true;
    m_log.warn("remote store " + m_url + " not reached (" + why +
               "); carrying on with the local stores");
}

#ifdef SKFORGE_HAVE_CURL

bool RemoteStore::fetch(const std::string& key, const std::string& dest) {
    if (m_down)
        return false;
    std::string body;
    auto meta_url = entry_url(key, ".json");
    auto a = m_client->get_text(meta_url, body);
    if (!a.error.empty()) {
        went_down(a.error);
        return false;
    }
    if (a.status != 200)
        return false; // 404: not stored (any other status: not usable either)
    CacheEntry expected;
    expected.key = key;
    try {
        auto j = support::parse_json(body);
        expected.sha256 = j.at("sha256").get<std::string>();
        expected.size = j.at("size").get<std::uint64_t>();
    } catch (const std::exception& e) {
        m_log.warn("remote entry " + meta_url + " is not an entry's JSON (" + e.what() +
                   "); compiling again");
        return false;
    }
    auto run_url = entry_url(key, ".run");
    std::FILE* out = std::fopen(dest.c_str(), "wb");
    if (out == nullptr)
        throw Error("cannot write '" + dest + "'");
    a = m_client->get_file(run_url, out, static_cast<curl_off_t>(expected.size));
    std::fclose(out);
    try {
        if (!a.error.empty() || a.status != 200)
            throw Error(a.error.empty() ? "HTTP status " + std::to_string(a.status) : a.error);
        auto fd = support::open_read(dest);
        check_run(fd.get(), dest, expected);
        return true;
    } catch (const std::exception& e) {
        ::unlink(dest.c_str());
        m_log.warn("remote entry " + run_url + " refused: " + e.what() + "; compiling again");
        return false;
    }
}

void RemoteStore::insert(const std::string& key, const std::string& run_path) {
    if (m_down)
        return;
    auto meta_url = entry_url(key, ".json");
    auto a = m_client->head(meta_url);
    if (!a.error.empty())
        return went_down(a.error);
    if (a.status == 200)
        return;
    auto digest = support::sha256_file(run_path, UINT64_MAX);
    std::string meta =
        support::dump_json({{"key", key}, {"sha256", digest.sha256}, {"size", digest.size}}) + "\n";
    auto upload = [&](const std::string& url, std::FILE* in, std::uint64_t size) {
        auto r = m_client->put(url, in, static_cast<curl_off_t>(size));
        std::fclose(in);
        if (!r.error.empty())
            return went_down(r.error), false;
        if (r.status < 200 || r.status >= 300) {
            m_log.warn("remote store refused " + url + ": HTTP status " + std::to_string(r.status));
            return false;
        }
        return true;
    };
    std::FILE* run = std::fopen(run_path.c_str(), "rb");
    if (run == nullptr)
        throw Error("cannot read '" + run_path + "'");
    if (!upload(entry_url(key, ".run"), run, digest.size))
        return;
    std::FILE* json = fmemopen(meta.data(), meta.size(), "rb");
    if (json != nullptr && upload(meta_url, json, meta.size()))
        m_log.info("stored in the remote store " + m_url);
}

std::optional<std::string> RemoteStore::op_owner(const std::string& op_key) {
    if (m_down)
        return std::nullopt;
    std::string body;
    auto a = m_client->get_text(m_url + "/ops/" + op_key.substr(0, 2) + "/" + op_key, body);
    if (!a.error.empty()) {
        went_down(a.error);
        return std::nullopt;
    }
    if (a.status != 200 || body.size() != 65 || body.back() != '\n' ||
        !support::is_lower_hex(body.substr(0, 64), 64))
        return std::nullopt; // 404, or not a line the front end writes: a miss
    return body.substr(0, 64);
}

void RemoteStore::record_ops(const std::vector<std::string>& op_keys, const std::string& key) {
    std::string line = key + "\n";
    for (const auto& k : op_keys) {
        if (m_down)
            return;
        std::string url = m_url + "/ops/" + k.substr(0, 2) + "/" + k;
        std::FILE* in = fmemopen(line.data(), line.size(), "rb");
        if (in == nullptr)
            return;
        auto r = m_client->put(url, in, static_cast<curl_off_t>(line.size()));
        std::fclose(in);
        if (!r.error.empty())
            return went_down(r.error);
        if (r.status < 200 || r.status >= 300) {
            m_log.warn("remote store refused " + url + ": HTTP status " + std::to_string(r.status));
            return;
        }
    }
}

#else

bool RemoteStore::fetch(const std::string&, const std::string&) {
    return false;
}
void RemoteStore::insert(const std::string&, const std::string&) {}
std::optional<std::string> RemoteStore::op_owner(const std::string&) {
    return std::nullopt;
}
void RemoteStore::record_ops(const std::vector<std::string>&, const std::string&) {}

#endif

} // namespace skforge::compile
