#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
load helpers

@test "keygen writes a 0600 private key and a public key and prints the key id" {
    run "$SKC" keygen -o release
    [ "$status" -eq 0 ]
    [[ "$output" == *"key id "* ]]
    [ "$(stat -c %a release.pem)" = 600 ]
    [ "$(stat -c %a release.pub.pem)" = 644 ]
    grep -q 'BEGIN PRIVATE KEY' release.pem
    grep -q 'BEGIN PUBLIC KEY' release.pub.pem
    openssl pkey -in release.pem -noout -text | grep -qi ED25519
}

@test "keygen refuses to overwrite an existing key" {
    "$SKC" keygen -o k >/dev/null
    cp k.pem before.pem
    run "$SKC" keygen -o k
    [ "$status" -eq 1 ]
    [[ "$output" == *"refusing to overwrite existing key file 'k.pem'"* ]]
    cmp k.pem before.pem
}

@test "keygen without -o is a usage error" {
    run "$SKC" keygen
    [ "$status" -eq 2 ]
    [[ "$output" == *"output"* ]]
}
