# SPDX-License-Identifier: Apache-2.0
"""skforge: Python access to packages built by skforge (see skforge.runtime)."""
