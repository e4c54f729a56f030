# SPDX-License-Identifier: Apache-2.0
"""Our stand-in for asc_op_compile_base.c_api.asc_platform (the ctypes wrapper over CANN's
libasc_platform.so), so that the vendor's SuperKernel generator runs without CANN.

It offers the six functions the vendor's c_api package imports, with the signatures of the
wrapper (cannmirror/asc-devkit tools/build/asc_op_compile_base/c_api/asc_platform.py), over a
small table of the SoC facts the generator asks for. The values are written from skforge's own
SoC table (lib/kernel/src/soc.cpp) and the vendor's names for them; nothing is copied."""

# SoC -> facts. Keys are the names the generator passes to get_soc_spec().
_C220 = {"AICORE_TYPE": "AiCore", "cube_vector_combine": "split", "Compiler_arch": "false",
         "CORE_NUM": "24", "ai_core_cnt": "24", "vector_core_cnt": "48", "cube_core_cnt": "24",
         "UB_SIZE": "196608", "L1_SIZE": "524288", "L2_SIZE": "201326592",
         "ubblock_size": "32"}
_SOCS = {
    "Ascend910_9391": dict(_C220, SHORT_SOC_VERSION="Ascend910_93"),
    "Ascend910_9392": dict(_C220, SHORT_SOC_VERSION="Ascend910_93"),
    "Ascend910_9381": dict(_C220, SHORT_SOC_VERSION="Ascend910_93"),
    "Ascend910B1": dict(_C220, SHORT_SOC_VERSION="Ascend910B"),
    "Ascend910B2": dict(_C220, SHORT_SOC_VERSION="Ascend910B"),
    "Ascend910B3": dict(_C220, SHORT_SOC_VERSION="Ascend910B", CORE_NUM="20", ai_core_cnt="20",
                        vector_core_cnt="40", cube_core_cnt="20"),
    "Ascend910B4": dict(_C220, SHORT_SOC_VERSION="Ascend910B", CORE_NUM="20", ai_core_cnt="20",
                        vector_core_cnt="40", cube_core_cnt="20"),
    "Ascend950PR_9599": dict(_C220, SHORT_SOC_VERSION="Ascend950", CORE_NUM="32",
                             ai_core_cnt="32", vector_core_cnt="64", cube_core_cnt="32"),
    # The vendor's package imports set this SoC while it loads (platform_info at import time).
    "Ascend310B1": {"SHORT_SOC_VERSION": "Ascend310B", "AICORE_TYPE": "AiCore",
                    "cube_vector_combine": "fuse", "Compiler_arch": "false", "CORE_NUM": "1",
                    "ai_core_cnt": "1", "vector_core_cnt": "1", "ubblock_size": "32"},
}

_state = {"soc": None, "core_type": "AiCore", "aicore_num": ""}


def _text(value):
    return value.decode() if isinstance(value, bytes) else (value or "")


def _init_soc_spec(soc_version, core_type, aicore_num=None, l1_fusion_flag=None):
    soc = _text(soc_version)
    if soc not in _SOCS:
        return "error"
    _state.update(soc=soc, core_type=_text(core_type) or "AiCore", aicore_num=_text(aicore_num))
    return "success"


def _te_update_version(soc_version, core_type, aicore_num, l1_fusion):
    if _text(soc_version):
        return _init_soc_spec(soc_version, core_type or _state["core_type"], aicore_num)
    return "success"


def _get_soc_spec(spec):
    if _state["soc"] is None:
        return ""
    facts = dict(_SOCS[_state["soc"]], SOC_VERSION=_state["soc"], FULL_SOC_VERSION=_state["soc"])
    facts["AICORE_TYPE"] = _state["core_type"]
    if _state["aicore_num"]:
        facts["CORE_NUM"] = facts["ai_core_cnt"] = _state["aicore_num"]
    return facts.get(_text(spec), "")


def _set_soc_spec(spec):
    return _init_soc_spec(spec, _state["core_type"]) if _text(spec) in _SOCS else "success"


def _set_platform_info_res(device_id, res):
    return True


def _set_core_num_by_core_type(core_type):
    _state["core_type"] = _text(core_type) or _state["core_type"]
    return True
