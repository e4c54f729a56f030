# SPDX-License-Identifier: Apache-2.0
# Controller side of skforge_kernel: copies `src` from the controller to the host's temporary
# directory (unless remote_src), then runs the module there. The file is only copied; the
# module hands it to skinstall, which verifies it before anything is written.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible.errors import AnsibleAction, AnsibleActionFail, AnsibleError
from ansible.module_utils._text import to_text
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):

    TRANSFERS_FILES = True

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars or {})
        del tmp
        args = self._task.args.copy()
        try:
            src = args.get("src")
            if src and not boolean(args.get("remote_src", False), strict=False):
                try:
                    local = self._loader.get_real_file(
                        self._find_needle("files", os.path.expanduser(src)), decrypt=False)
                except AnsibleError as e:
                    raise AnsibleActionFail(to_text(e))
                remote = self._connection._shell.join_path(self._connection._shell.tmpdir,
                                                           os.path.basename(local))
                self._transfer_file(local, remote)
                self._fixup_perms2((self._connection._shell.tmpdir, remote))
                args["src"] = remote
                args["remote_src"] = True
            result.update(self._execute_module(module_name="skforge.kernels.skforge_kernel",
                                               module_args=args, task_vars=task_vars))
        except AnsibleAction as e:
            result.update(e.result)
        finally:
            self._remove_tmp_path(self._connection._shell.tmpdir)
        return result
