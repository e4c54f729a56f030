#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The Ansible collection (packaging/ansible) run for real against localhost with Debian's
# ansible-core, as an operator's playbook would: the skforge_kernel module's changed/check/diff
# answers and the rollout role's verify and rollback.

load helpers

setup_file() {
    command -v ansible-playbook >/dev/null || {
        echo "ansible-playbook is missing (scripts/bootstrap.sh installs ansible-core)" >&2
        return 1
    }
}

# kern_run VERSION [FILE]: package "kern" at VERSION (a different payload per version).
kern_run() {
    [ -d "tree-$1" ] || { make_tree "tree-$1" && echo "$1" >"tree-$1/release.txt"; }
    "$SKC" pack "tree-$1" -o "${2:-kern-$1.run}" --name kern --package-version "$1" --npu-arch dav-2201 \
        --soc Ascend910B1 -q
}

# play PLAYBOOK [ansible-playbook options]: runs it on localhost; its output is in $W/out.txt,
# the exit status in $status (run it through `run`).
play() {
    local book=$1
    shift
    mkdir -p "$W/root" # the toolkit root exists, as on a host with CANN installed
    HOME="$W" ANSIBLE_COLLECTIONS_PATH="$SKFORGE_SOURCE_DIR/packaging/ansible" \
        ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 \
        ANSIBLE_LOCAL_TEMP="$W/ansible-local" ANSIBLE_REMOTE_TEMP="$W/ansible-remote" \
        ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3 ANSIBLE_DEPRECATION_WARNINGS=0 \
        ansible-playbook -i localhost, -c local "$book" \
        -e "root=$W/root skinstall=$SKINSTALL result=$W/result.json" "$@" >"$W/out.txt" 2>&1
}

# result KEY: a field of the module's result in the last module_play.
result() {
    python3 - "$W/result.json" "$1" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
v = r.get(sys.argv[2], "")
print(json.dumps(v) if isinstance(v, (dict, list)) else str(v).lower() if isinstance(v, bool) else v)
EOF
}

# module_play ARG...: a playbook calling the module with the given YAML arguments; it saves the
# module's result (also in check mode) for `result`, and fails when the module failed.
module_play() {
    {
        echo "- hosts: localhost"
        echo "  gather_facts: false"
        echo "  tasks:"
        echo "    - skforge.kernels.skforge_kernel:"
        echo "        install_path: '{{ root }}'"
        echo "        skinstall: '{{ skinstall }}'"
        for a in "$@"; do echo "        $a"; done
        echo "      register: r"
        echo "      ignore_errors: true"
        echo "    - ansible.builtin.copy: {content: '{{ r | to_json }}', dest: '{{ result }}'}"
        echo "      check_mode: false"
        echo "      diff: false"
        echo "    - ansible.builtin.fail: {msg: the module failed}"
        echo "      when: r is failed"
    } >task.yml
}

installed_version() {
    "$SKINSTALL" info kern --install-path "$W/root" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])'
}

@test "module: install, a second run changes nothing, upgrade, downgrade refused, absent" {
    kern_run 1.0.0 && kern_run 2.0.0
    module_play "src: $W/kern-1.0.0.run" "state: present"
    run play task.yml
    [ "$status" -eq 0 ]
    [ "$(result changed)" = true ]
    [ "$(result action)" = installed ]
    [ "$(installed_version)" = 1.0.0 ]
    run play task.yml
    [ "$status" -eq 0 ]
    [ "$(result changed)" = false ]
    [ "$(result action)" = already-installed ]

    module_play "src: $W/kern-2.0.0.run" "state: latest"
    run play task.yml
    [ "$status" -eq 0 ]
    [ "$(result changed)" = true ]
    [ "$(result action)" = upgraded ]
    [ "$(result old_version)" = 1.0.0 ]
    [ "$(installed_version)" = 2.0.0 ]

    # latest never goes back; present refuses to unless allowed.
    before=$(state_digest root)
    module_play "src: $W/kern-1.0.0.run" "state: latest"
    run play task.yml
    [ "$status" -eq 0 ]
    [ "$(result changed)" = false ]
    [ "$(result action)" = kept-newer ]
    module_play "src: $W/kern-1.0.0.run" "state: present"
    run play task.yml
    [ "$status" -ne 0 ]
    [[ "$(result msg)" == *"older than the installed 2.0.0"*"allow_downgrade"* ]]
    [ "$(state_digest root)" = "$before" ]
    module_play "src: $W/kern-1.0.0.run" "state: present" "allow_downgrade: true"
    run play task.yml
    [ "$status" -eq 0 ]
    [ "$(result action)" = downgraded ]
    [ "$(installed_version)" = 1.0.0 ]

    module_play "name: kern" "state: absent"
    run play task.yml
    [ "$status" -eq 0 ]
    [ "$(result changed)" = true ]
    [ "$(result action)" = uninstalled ]
    [ ! -e root/opp/static_kernel/ai_core/kern ]
    run play task.yml
    [ "$status" -eq 0 ]
    [ "$(result changed)" = false ]
    [ "$(result action)" = not-installed ]
}

@test "module: check mode answers like the real run and changes nothing; diff shows versions" {
    kern_run 1.0.0 && kern_run 2.0.0
    module_play "src: $W/kern-1.0.0.run"
    run play task.yml --check
    [ "$status" -eq 0 ]
    [ "$(result changed)" = true ]
    [ ! -e root/opp/static_kernel/ai_core/kern ]
    run play task.yml
    [ "$status" -eq 0 ]
    before=$(state_digest root)

    module_play "src: $W/kern-2.0.0.run" "state: latest"
    run play task.yml --check --diff
    [ "$status" -eq 0 ]
    [ "$(result changed)" = true ]
    [ "$(result action)" = upgraded ]
    diff=$(result diff)
    [[ "$diff" == *'"before": "kern 1.0.0\n"'* ]]
    [[ "$diff" == *'"after": "kern 2.0.0\n"'* ]]
    [ "$(state_digest root)" = "$before" ]

    module_play "name: kern" "state: absent"
    run play task.yml --check
    [ "$status" -eq 0 ]
    [ "$(result changed)" = true ]
    [ "$(state_digest root)" = "$before" ]
}

@test "module: a package under another name, a damaged .run and an unsigned one are refused" {
    kern_run 1.0.0
    module_play "src: $W/kern-1.0.0.run" "name: other"
    run play task.yml
    [ "$status" -ne 0 ]
    [[ "$(result msg)" == *"holds package 'kern', not 'other'"* ]]
    [ ! -e root/opp/static_kernel/ai_core/kern ]

    cp kern-1.0.0.run bad.run
    flip_byte bad.run $(($(stat -c %s bad.run) - 100))
    module_play "src: $W/bad.run"
    run play task.yml
    [ "$status" -ne 0 ]
    [[ "$(result msg)" == *"skinstall upgrade failed"*"bad.run"* ]]
    [ ! -e root/opp/static_kernel/ai_core/kern ]

    "$SKC" keygen -o site
    module_play "src: $W/kern-1.0.0.run" "trusted_keys: ['$W/site.pub.pem']" \
        "require_signature: true"
    run play task.yml
    [ "$status" -ne 0 ]
    [[ "$(result msg)" == *"not signed"* ]]
    [ ! -e root/opp/static_kernel/ai_core/kern ]
}

@test "module: a name that is not a package name is refused before skinstall runs (issue 26)" {
    kern_run 1.0.0
    mkdir -p root
    "$SKINSTALL" install kern-1.0.0.run --install-path "$W/root" -q
    before=$(tree_digest root)
    for name in "victim/../kern" ".." "kern/"; do
        module_play "name: '$name'" "state: absent" "force: true"
        run play task.yml
        [ "$status" -ne 0 ]
        [[ "$(result msg)" == *"'$name' is not a package name"*"letters, digits and '._+-'"* ]]
        [ "$(tree_digest root)" = "$before" ]
    done
    [ "$(installed_version)" = 1.0.0 ]
}

# rollout VERSION [extra -e]: the collection's playbook, one batch, on localhost.
rollout() {
    local v=$1
    shift
    play "$SKFORGE_SOURCE_DIR/packaging/ansible/ansible_collections/skforge/kernels/playbooks/rollout.yml" \
        -e "hosts_name=localhost skforge_run=$W/kern-$v.run skforge_install_path=$W/root" \
        -e "skforge_keep_dir=$W/keep skforge_skinstall=$SKINSTALL" "$@"
}

@test "role: rolls out, upgrades, and rolls a failing upgrade back to the previous version" {
    kern_run 1.0.0 && kern_run 2.0.0 && kern_run 3.0.0
    run rollout 1.0.0
    [ "$status" -eq 0 ]
    [ "$(installed_version)" = 1.0.0 ]
    [ -f keep/kern/1.0.0.run ]
    run rollout 2.0.0
    [ "$status" -eq 0 ]
    [ "$(installed_version)" = 2.0.0 ]
    # The same rollout again changes nothing anywhere.
    run rollout 2.0.0
    [ "$status" -eq 0 ]
    grep -q 'localhost .*changed=0 .*failed=0' out.txt
    good=$("$SKINSTALL" files kern --install-path "$W/root")

    # 3.0.0 installs but its smoke test fails: the host goes back to 2.0.0 and the play fails.
    run rollout 3.0.0 -e skforge_smoke_test=false
    [ "$status" -ne 0 ]
    grep -q 'rolled back' out.txt
    [ "$(installed_version)" = 2.0.0 ]
    "$SKINSTALL" verify kern --install-path "$W/root"
    "$SKINSTALL" history --install-path "$W/root" | grep -q 'downgraded.*3.0.0.*2.0.0\|3.0.0.*2.0.0'
    [ "$("$SKINSTALL" files kern --install-path "$W/root")" = "$good" ]
}

@test "role: a failing first install leaves the host without the package" {
    kern_run 1.0.0
    run rollout 1.0.0 -e skforge_smoke_test=false
    [ "$status" -ne 0 ]
    grep -q 'rolled back to no kern' out.txt
    [ ! -e root/opp/static_kernel/ai_core/kern ]
    run "$SKINSTALL" list --install-path "$W/root" --json
    [ "$output" = "[]" ]
}
