#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# skforge_kernel: installs, upgrades and removes skforge static-kernel packages (.run) on a host
# through skinstall. It never executes the .run: skinstall reads and verifies it, and decides
# what to do; with check mode the module asks skinstall's --dry-run, so a check run answers from
# the same rules as the real one.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: skforge_kernel
short_description: Install, upgrade or remove a skforge static-kernel package
description:
  - Places a skforge C(.run) package under
    C(<install_path>/opp/static_kernel/ai_core/<name>/) with C(skinstall), or removes it.
  - The C(.run) is copied from the controller (unless O(remote_src)) and read by C(skinstall),
    which checks its size, digests and signature before it writes anything. The package's own
    scripts are never run.
  - Reports C(changed) as skinstall does: false when the same package is already installed.
  - Supports check mode (through C(skinstall --dry-run)) and diff mode (installed version before
    and after).
options:
  src:
    description:
      - The C(.run) file. A path on the controller, copied to the host first, or a path on the
        host with O(remote_src=true).
      - Required for O(state=present) and O(state=latest).
    type: path
  remote_src:
    description: O(src) is already on the host.
    type: bool
    default: false
  name:
    description:
      - The package name (the directory under C(ai_core/)). With O(src) it must match the
        package's own name, which is read from its manifest. Required for O(state=absent)
        without O(src).
    type: str
  state:
    description:
      - C(present) installs exactly O(src)'s version (an upgrade when an older one is installed;
        a newer installed one is replaced only with O(allow_downgrade)).
      - C(latest) installs O(src) or upgrades to it, and leaves a newer installed version alone.
      - C(absent) uninstalls the package (unchanged when it is not installed).
    type: str
    choices: [present, latest, absent]
    default: present
  install_path:
    description:
      - The toolkit root packages are installed under (C(skinstall --install-path)), e.g.
        C(/usr/local/Ascend/ascend-toolkit/latest).
    type: path
    required: true
  trusted_keys:
    description: Public keys (PEM paths on the host) a signed package must be signed by.
    type: list
    elements: path
    default: []
  require_signature:
    description: Refuse a package not signed by one of O(trusted_keys).
    type: bool
    default: false
  allow_downgrade:
    description: With O(state=present), let an older O(src) replace a newer installed version.
    type: bool
    default: false
  force:
    description: With O(state=absent), remove changed files and damaged packages too.
    type: bool
    default: false
  log_file:
    description:
      - Also append skinstall's history line to this file, e.g. CANN's
        C(/var/log/ascend_seclog/ascend_install.log).
    type: path
  lock_timeout:
    description: Seconds to wait for another skinstall's lock before failing (default wait).
    type: float
  skinstall:
    description: The skinstall executable (default found on the host's PATH).
    type: path
author: skforge
"""

EXAMPLES = r"""
- name: Roll out the decoder kernels
  skforge.kernels.skforge_kernel:
    src: dist/decoder_dav-2201.run
    state: latest
    install_path: /usr/local/Ascend/ascend-toolkit/latest
    trusted_keys: [/etc/skforge/release.pub.pem]
    require_signature: true

- name: Remove them
  skforge.kernels.skforge_kernel:
    name: decoder_dav-2201
    state: absent
    install_path: /usr/local/Ascend/ascend-toolkit/latest
"""

RETURN = r"""
name:
  description: The package name.
  returned: always
  type: str
version:
  description: The version installed after the task (empty after state=absent).
  returned: always
  type: str
old_version:
  description: The version installed before the task (empty when none).
  returned: always
  type: str
action:
  description: >-
    What skinstall did (or, in check mode, would do): installed, upgraded, downgraded,
    already-installed, uninstalled, removed, kept-newer, not-installed.
  returned: always
  type: str
skinstall:
  description: skinstall's JSON result for the package.
  returned: when skinstall ran
  type: dict
"""

import json
import re

from ansible.module_utils.basic import AnsibleModule

# The rule skinstall and skc pack apply to every package name (check_package_name in
# lib/package/src/path_rules.cpp): one directory name under ai_core/. Checked before anything
# runs, so a name such as 'victim/../other' never reaches the tree.
NAME_RULE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]{0,254}\Z")
RESERVED_NAMES = ("config", "config.ini", "uninstall.sh", "version.info", "log",
                  "static_kernel.lock")


def name_problem(name):
    """Why `name` is not a package name, or None."""
    if not NAME_RULE.match(name):
        return ("'%s' is not a package name: a package name, like a manifest's, is one directory "
                "name under ai_core/ of 1 to 255 letters, digits and '._+-', starting with a "
                "letter, digit or '_'" % name)
    if name in RESERVED_NAMES:
        return "'%s' is not a package name: it is reserved for the install tree's own files" % name
    return None


class Skinstall:
    """Runs skinstall with the options every command shares and parses its --json output."""

    def __init__(self, module):
        self.module = module
        p = module.params
        self.exe = p["skinstall"] or module.get_bin_path("skinstall", required=True)
        self.common = ["--install-path", p["install_path"]]
        if p["lock_timeout"] is not None:
            self.common += ["--lock-timeout", str(p["lock_timeout"])]

    def run(self, command, args, extra=(), dry_run=False, log=True):
        cmd = [self.exe, command] + list(args) + self.common + list(extra) + ["--json"]
        if dry_run:
            cmd.append("--dry-run")
        if log and not dry_run and self.module.params["log_file"]:
            cmd += ["--log-file", self.module.params["log_file"]]
        rc, out, err = self.module.run_command(cmd)
        if rc != 0:
            self.module.fail_json(
                msg="skinstall %s failed: %s" % (command, (err or out).strip()),
                rc=rc, cmd=cmd, stdout=out, stderr=err)
        try:
            return json.loads(out)
        except ValueError:
            self.module.fail_json(msg="skinstall %s printed no JSON" % command, cmd=cmd,
                                  stdout=out, stderr=err)

    def installed(self):
        """{name: version} of the intact installed packages ({} when nothing was installed)."""
        listed = self.run("list", [], log=False)
        return {p["name"]: p.get("version", "") for p in listed}

    def policy(self):
        p = self.module.params
        extra = []
        for key in p["trusted_keys"]:
            extra += ["--trusted-key", key]
        if p["require_signature"]:
            extra.append("--require-signature")
        return extra


def result_for(r, check_mode):
    return {"name": r["name"], "version": r["version"], "old_version": r["old_version"],
            "action": r["action"], "changed": bool(r["changed"]), "skinstall": r,
            "check_mode": check_mode}


def diff_for(name, before, after):
    line = lambda v: "%s %s\n" % (name, v) if v else ""
    return {"before": line(before), "after": line(after),
            "before_header": "installed", "after_header": "installed"}


def ensure_present(module, sk):
    p = module.params
    extra = sk.policy()
    # What upgrading would do, decided by skinstall without changing anything. Asked with
    # --allow-downgrade so that a newer installed version is reported, not refused.
    plan = sk.run("upgrade", [p["src"]], extra + ["--allow-downgrade"], dry_run=True)[0]
    if p["name"] and p["name"] != plan["name"]:
        module.fail_json(msg="%s holds package '%s', not '%s'" % (p["src"], plan["name"],
                                                                   p["name"]))
    if plan["action"] == "downgraded" and p["state"] == "latest":
        return dict(result_for(plan, module.check_mode), changed=False, action="kept-newer",
                    version=plan["old_version"])
    if plan["action"] == "downgraded" and not p["allow_downgrade"]:
        module.fail_json(msg="%s %s is older than the installed %s; set allow_downgrade: true "
                         "to replace it" % (plan["name"], plan["version"], plan["old_version"]))
    if module.check_mode or not plan["changed"]:
        return result_for(plan, module.check_mode)
    done = sk.run("upgrade", [p["src"]], extra + (["--allow-downgrade"]
                                                   if p["allow_downgrade"] else []))[0]
    return result_for(done, False)


def ensure_absent(module, sk):
    p = module.params
    name = p["name"]
    if not name:
        name = sk.run("upgrade", [p["src"]], sk.policy() + ["--allow-downgrade"],
                      dry_run=True)[0]["name"]
    if name not in sk.installed() and not p["force"]:
        return {"name": name, "version": "", "old_version": "", "action": "not-installed",
                "changed": False}
    extra = ["--force"] if p["force"] else []
    r = sk.run("uninstall", [name], extra, dry_run=module.check_mode)[0]
    res = result_for(r, module.check_mode)
    res["version"] = ""
    return res


def main():
    module = AnsibleModule(
        argument_spec=dict(
            src=dict(type="path"),
            remote_src=dict(type="bool", default=False),
            name=dict(type="str"),
            state=dict(type="str", default="present", choices=["present", "latest", "absent"]),
            install_path=dict(type="path", required=True),
            trusted_keys=dict(type="list", elements="path", default=[], no_log=False),
            require_signature=dict(type="bool", default=False),
            allow_downgrade=dict(type="bool", default=False),
            force=dict(type="bool", default=False),
            log_file=dict(type="path"),
            lock_timeout=dict(type="float"),
            skinstall=dict(type="path"),
        ),
        required_if=[("state", "present", ["src"]), ("state", "latest", ["src"]),
                     ("state", "absent", ["name", "src"], True)],
        supports_check_mode=True,
    )
    if module.params["name"] is not None:
        why = name_problem(module.params["name"])
        if why:
            module.fail_json(msg=why)
    sk = Skinstall(module)
    if module.params["state"] == "absent":
        res = ensure_absent(module, sk)
    else:
        res = ensure_present(module, sk)
    if module._diff:
        after = res["version"] if module.params["state"] != "absent" else ""
        if not res["changed"]:
            after = res["old_version"] or res["version"]
        before = res["old_version"] if res["changed"] else after
        res["diff"] = diff_for(res["name"], before, after)
    module.exit_json(**res)


if __name__ == "__main__":
    main()
