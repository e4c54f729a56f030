# SPDX-License-Identifier: Apache-2.0
"""skforge: Python access to packages built by skforge: skforge.runtime runs them,
skforge.kernels installs them for this process and releases them at its exit."""
