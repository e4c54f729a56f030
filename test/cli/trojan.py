#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Rewrites a skforge .run the way an attacker without the signing key would: replaces one file of
the payload, fixes the manifest's size and SHA-256 for it (and the header's unpacked size), recompresses, and patches the header's
payload size and digest (and, with --fix-header-scripts, the header's script digests too), so the
package is internally consistent and its stub is still the one skforge renders for its header.

usage: trojan.py IN.run OUT.run PATH NEW_CONTENT_FILE [--fix-header-scripts] [--stale-manifest | --twice]

With PATH manifest.json, NEW_CONTENT_FILE replaces the manifest itself, byte for byte (a manifest
no JSON writer would write: a key twice, an escaped key). With --stale-manifest the manifest is
left as it was: only the payload's size and digest in the header are fixed (a package whose file
differs from its manifest, found only when the payload is read). With --twice PATH keeps its place
and content and NEW_CONTENT_FILE is added after the last entry under the same name (a payload that
holds PATH twice), the manifest left as it was.
"""
import copy, gzip, hashlib, io, json, re, sys, tarfile

src, dst, member, content_file = sys.argv[1:5]
fix_scripts = "--fix-header-scripts" in sys.argv[5:]
twice = "--twice" in sys.argv[5:]
stale = "--stale-manifest" in sys.argv[5:] or twice
data = open(src, "rb").read()
new = open(content_file, "rb").read()
head = data[:8192].decode("latin-1")
def field(key):
    return re.search(r"^SKF_%s=(.*)$" % key, head, re.M).group(1).strip().strip("'")
off, size = int(field("PAYLOAD_OFFSET")), int(field("PAYLOAD_SIZE"))
stub = data[:off].decode("latin-1")
tin = tarfile.open(fileobj=io.BytesIO(gzip.decompress(data[off:off + size])))
members = [(m, tin.extractfile(m).read() if m.isfile() else None) for m in tin.getmembers()]
digest = hashlib.sha256(new).hexdigest()
unpacked = int(field("UNPACKED_SIZE"))
out = io.BytesIO()
with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tout:
    for m, body in members + ([(copy.copy(tin.getmember(member)), new)] if twice else []):
        if m.name == member and not twice:
            body = new
        elif m.name == "manifest.json" and not stale:
            doc = json.loads(body)
            for f in doc["files"]:
                if f["path"] == member:
                    unpacked = int(field("UNPACKED_SIZE")) - f["size"] + len(new)
                    f["size"], f["sha256"] = len(new), digest
            body = (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode()
        if body is not None:
            m.size = len(body)
        tout.addfile(m, io.BytesIO(body) if body is not None else None)
payload = gzip.compress(out.getvalue(), mtime=0)
def patch(text, key, value):
    return re.sub(r"^(SKF_%s=)(.*)$" % key, lambda mo: mo.group(1) + value, text, count=1, flags=re.M)
stub = patch(stub, "PAYLOAD_SIZE", str(len(payload)).ljust(20))
stub = patch(stub, "PAYLOAD_SHA256", hashlib.sha256(payload).hexdigest())
stub = patch(stub, "UNPACKED_SIZE", str(unpacked).ljust(20))
key = {"install.sh": "INSTALL_SH_SHA256", "uninstall.sh": "UNINSTALL_SH_SHA256"}.get(member)
if fix_scripts and key:
    stub = patch(stub, key, digest)
assert len(stub.encode("latin-1")) == off
open(dst, "wb").write(stub.encode("latin-1") + payload)
