#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# skc inspect reads packages without running any of them.
load helpers

json_field() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval("d"+sys.argv[1]))' "$1"; }

@test "inspect prints what the package is" {
    pack_tree p
    run "$SKC" inspect p.run
    [ "$status" -eq 0 ]
    [[ "$output" == *"Name:            p"* ]]
    [[ "$output" == *"Version:         1.2.3"* ]]
    [[ "$output" == *"NPU arch:        dav-2201"* ]]
    [[ "$output" == *"Payload SHA-256: $(header_value p.run PAYLOAD_SHA256)"* ]]
    [[ "$output" == *"Signer key id:   (unsigned)"* ]]
}

@test "inspect --json --list gives every documented field" {
    pack_tree p
    "$SKC" inspect p.run --json --list >out.json
    [ "$(json_field '["name"]' <out.json)" = p ]
    [ "$(json_field '["file_size"]' <out.json)" = "$(wc -c <p.run)" ]
    [ "$(json_field '["compression"]' <out.json)" = gzip ]
    [ "$(json_field '["stub_canonical"]' <out.json)" = True ]
    [ "$(json_field '["signer_key_id"]' <out.json)" = None ]
    [ "$(json_field '["ok"]' <out.json)" = True ]
    sha=$(sha256sum tree/tool.sh | cut -d' ' -f1)
    cat >check.py <<'PY'
import json, sys
d = json.load(open("out.json"))
f = {e["path"]: e for e in d["files"]}
assert f["tool.sh"]["sha256"] == sys.argv[1], f["tool.sh"]
assert f["tool.sh"]["mode"] == "0755"
assert f["ascend910b"]["type"] == "directory"
assert len(d["files"]) == d["file_count"]
PY
    python3 check.py "$sha"
}

@test "inspect never runs the stub" {
    pack_tree p
    # A stub that would leave a mark if it ran; its length is kept so offsets still match.
    python3 - <<'PY'
data = open('p.run', 'rb').read()
old = b'skf_user_umask=$(umask)\n'
new = b'touch RAN;:$(umask)    \n'
assert len(old) == len(new)
open('p.run', 'wb').write(data.replace(old, new, 1))
PY
    run "$SKC" inspect p.run --verify
    [ ! -e RAN ]
    [ "$status" -eq 1 ]
    [[ "$output" == *"MODIFIED"* ]]
}

@test "inspect --verify checks every entry of a good package" {
    pack_tree p
    run "$SKC" inspect p.run --verify
    [ "$status" -eq 0 ]
    [[ "$output" == *"Verify payload_digest: ok"* ]]
    [[ "$output" == *"Verify entries:  ok"* ]]
    [[ "$output" == *"Verify signature: unsigned"* ]]
}

@test "signature: a good key verifies" {
    "$SKC" keygen -o k >/dev/null
    pack_tree s --sign-key k.pem
    run "$SKC" inspect s.run --trusted-key k.pub.pem
    [ "$status" -eq 0 ]
    [[ "$output" == *"Verify signature: verified"* ]]
    [[ "$output" == *"Signer key id:   $(openssl pkey -pubin -in k.pub.pem -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)"* ]]
    run sh s.run --check
    [ "$status" -eq 0 ]
    run sh s.run --info
    [[ "$output" == *"Signed:          yes"* ]]
}

@test "signature: the wrong key is not trusted" {
    "$SKC" keygen -o k >/dev/null
    "$SKC" keygen -o other >/dev/null
    pack_tree s --sign-key k.pem
    run "$SKC" inspect s.run --trusted-key other.pub.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"signed by an untrusted key"* ]]
    run "$SKC" inspect s.run --trusted-key other.pub.pem --trusted-key k.pub.pem
    [ "$status" -eq 0 ]
}

@test "signature: a tampered stub fails" {
    "$SKC" keygen -o k >/dev/null
    pack_tree s --sign-key k.pem
    flip_byte s.run 20
    run "$SKC" inspect s.run --trusted-key k.pub.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"Verify signature: INVALID"* ]]
    [[ "$output" == *"Stub:            MODIFIED"* ]]
}

@test "signature: a tampered payload fails" {
    "$SKC" keygen -o k >/dev/null
    pack_tree s --sign-key k.pem
    flip_byte s.run $(($(header_value s.run PAYLOAD_OFFSET) + 100))
    run "$SKC" inspect s.run --trusted-key k.pub.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"payload SHA-256 mismatch"* ]]
}

@test "signature: a tampered trailer fails" {
    "$SKC" keygen -o k >/dev/null
    pack_tree s --sign-key k.pem
    flip_byte s.run $(($(wc -c <s.run) - 10))
    run "$SKC" inspect s.run --trusted-key k.pub.pem --json
    [ "$status" -eq 1 ]
    [[ "$output" == *'"signature": "INVALID"'* || "$output" == *"malformed signature trailer"* ]]
}

@test "signature: a missing signature fails when a key is required" {
    "$SKC" keygen -o k >/dev/null
    pack_tree u
    run "$SKC" inspect u.run --trusted-key k.pub.pem
    [ "$status" -eq 1 ]
    [[ "$output" == *"Verify signature: unsigned"* ]]
}

@test "signature: a stripped trailer is a size mismatch" {
    "$SKC" keygen -o k >/dev/null
    pack_tree s --sign-key k.pem
    head -c $(($(wc -c <s.run) - $(header_value s.run TRAILER_SIZE))) s.run >stripped.run
    run "$SKC" inspect stripped.run --verify
    [ "$status" -eq 1 ]
    [[ "$output" == *"truncated"* ]]
    run sh stripped.run --check
    [ "$status" -eq 2 ]
}

@test "inspect refuses files that are not skforge packages" {
    echo 'hello' >x.run
    run "$SKC" inspect x.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"x.run: not a skforge .run package"* ]]
    run "$SKC" inspect missing.run
    [ "$status" -eq 1 ]
    [[ "$output" == *"missing.run"*"No such file or directory"* ]]
    run "$SKC" inspect
    [ "$status" -eq 2 ]
}

@test "inspect --verify reports truncation and appended bytes" {
    pack_tree p
    head -c 9000 p.run >t.run
    run "$SKC" inspect t.run --verify
    [ "$status" -eq 1 ]
    [[ "$output" == *"truncated"* ]]
    cp p.run a.run && echo x >>a.run
    run "$SKC" inspect a.run --verify
    [ "$status" -eq 1 ]
    [[ "$output" == *"unexpected bytes after the declared end"* ]]
}
