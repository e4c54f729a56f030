# SPDX-License-Identifier: Apache-2.0
"""The vendor's own system-test scenarios (graph-autofusion super_kernel/tests/st), as cases our
runner can feed to the vendor's generator: read from the vendor's tree on this machine, never
copied into the project.

A case is a dict: name, options (super_kernel_options), kernel_name, dynamic (bool), ops (a
list of {json, stream_id, send_event_list, recv_event_list, task_type}), expected_dir and
golden_options (the -D options the ST looks for on the bisheng line). `json` is a path to the
sub-kernel JSON the ST hands the vendor: master keeps them under st/json_for_test_smoke/;
8.5.0-beta.1 compiles them from real operators at test time, so for those we write our own
(kernel_json_85) from what its expected outputs say of each sub-kernel."""
import ast
import json
import os

# The layout of each ST function's op_list (tests/st/scenarios/test_smoke.py): which fixture
# goes where, on which stream, with which events. Our reading of the vendor's test code.
_LAYOUTS = {
    "test_sk_1_stream_2_ops": lambda p: [(p["subkernel_inf"], 1, [], [], "normal"),
                                        (p["subkernel_pows"], 1, [], [], "normal")],
    "test_sk_1_stream_3_ops": lambda p: [(p["subkernel_inf"], 1, [], [], "normal"),
                                        (p["subkernel_pows"], 1, [], [], "normal"),
                                        (p["subkernel_inf"], 1, [], [], "normal")],
    "test_sk_2_stream_2_ops": lambda p: [
        (p["subkernel_inf"], 0, p["send_event_list"], [], p["task_type"]),
        (p["subkernel_pows"], 1, [], p["recv_event_list"], "normal")],
    "test_sk_2_stream_4_ops": lambda p: [
        (p["subkernel_inf" if i % 2 == 0 else "subkernel_pows"], p["stream_ids"][i],
         p["send_event_lists"][i], p["recv_event_lists"][i], "normal") for i in range(4)],
}
# Fixture -> the JSON file name the fixture's compile writes (SubkernelPath.name + ".json").
_FIXTURE_JSON = {"subkernel_is_inf_default": "is_inf", "subkernel_is_inf_split_mode1": "is_inf",
                 "subkernel_is_finite_default": "is_finite",
                 "subkernel_is_finite_split_mode1": "is_finite",
                 "subkernel_pows_default": "pows"}
_KERNEL_NAMES_MASTER = {"test_sk_1_stream_2_ops": "te_superkernel_1_stream_2_ops",
                        "test_sk_1_stream_3_ops": "te_superkernel_1_stream_3_ops",
                        "test_sk_2_stream_2_ops": "te_superkernel_2_stream_2_ops",
                        "test_sk_2_stream_4_ops": "te_superkernel_2_stream_4_ops"}
_KERNEL_NAMES_85 = {"test_sk_1_stream_2_ops": "te_superkernel_1",
                    "test_sk_1_stream_3_ops": "te_superkernel_2"}


def _parametrized(smoke_path):
    """(function name, [dict of parameter -> value]) for each parametrized test."""
    tree = ast.parse(open(smoke_path, encoding="utf-8").read())
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and getattr(deco.func, "attr", "") == "parametrize":
                names = [n.strip() for n in ast.literal_eval(deco.args[0]).split(",")]
                rows = ast.literal_eval(deco.args[1])
                yield node.name, [dict(zip(names, row)) for row in rows]


def _case(st_dir, func, params, json_dir, kernel_names):
    expected = params["golden_codegen_path"]
    ops = []
    for fixture, stream, send, recv, task in _LAYOUTS[func](params):
        name = _FIXTURE_JSON[fixture]
        ops.append({"json": os.path.join(json_dir, expected, name + ".json") if json_dir else name,
                    "fixture": fixture, "stream_id": stream, "send_event_list": list(send),
                    "recv_event_list": list(recv), "task_type": task})
    return {"name": expected, "options": params["compile_options"],
            "kernel_name": kernel_names[func], "dynamic": params.get("task_type") == "dynamic",
            "ops": ops, "expected_dir": os.path.join(st_dir, "data", expected),
            "golden_options": params["golden_options"]}


def st_cases(ga_dir):
    """Every ST scenario of the graph-autofusion tree at ga_dir (master or 8.5.0-beta.1)."""
    st_dir = os.path.join(ga_dir, "super_kernel", "tests", "st")
    json_dir = os.path.join(st_dir, "json_for_test_smoke")
    master = os.path.isdir(json_dir)
    names = _KERNEL_NAMES_MASTER if master else _KERNEL_NAMES_85
    cases = []
    for func, rows in _parametrized(os.path.join(st_dir, "scenarios", "test_smoke.py")):
        cases += [_case(st_dir, func, row, json_dir if master else None, names) for row in rows]
    if not master:
        cases += _inactive_85(st_dir, {c["name"] for c in cases})
    return cases


def _inactive_85(st_dir, active):
    """8.5.0-beta.1 has expected outputs for two scenarios its test_smoke.py does not run
    (split_mode_1 is commented out, strict_scope_check has no test): their inputs as the
    expected outputs show them (split-mode=1 on is_inf + is_finite; is_inf + is_finite)."""
    extra = {"test_sk_1_stream_2_ops_split_mode_1": "compile-options=-g:split-mode=1:",
             "test_sk_1_stream_2_ops_strict_scope_check": "compile-options=-g:"}
    out = []
    for name, options in extra.items():
        if name in active or not os.path.isdir(os.path.join(st_dir, "data", name)):
            continue
        ops = [{"json": n, "fixture": n, "stream_id": 1, "send_event_list": [],
                "recv_event_list": [], "task_type": "normal"} for n in ("is_inf", "is_finite")]
        out.append({"name": name, "options": options, "kernel_name": "te_superkernel_1",
                    "dynamic": False, "ops": ops, "golden_options": [], "inactive": True,
                    "expected_dir": os.path.join(st_dir, "data", name)})
    return out


# What 8.5.0-beta.1's fixtures compile: the parameter names and the kernel type the op compiler
# writes for each (our reading of its expected JSON: param_offset steps of 3 and 4).
_PARAMS_85 = {"is_inf": ["x_in__", "y_out_", "workspace"],
              "is_finite": ["x_in__", "y_out_", "workspace"],
              "pows": ["x1_in__", "x2_in__", "y_out_", "workspace"]}


def kernel_json_85(case, index, obj_path):
    """The sub-kernel JSON 8.5.0-beta.1's op compiler would write for op `index` of a case,
    from the expected compiled JSON's kernel list (func_name, split_mode, blockDim, type)."""
    expected = json.load(open(os.path.join(case["expected_dir"], "expect_compiled_json.json")))
    entries = [e for v in expected["SuperkernelInfo"]["kernelList"].values() for e in v]
    entry = entries[index]
    name = case["ops"][index]["json"]
    kernel = entry["func_name"]
    return {"binFileName": name, "binFileSuffix": ".o", "blockDim": entry["blockDim"],
            "coreType": "VectorCore", "core_type": "AIV", "intercoreSync": 0,
            "kernelName": kernel, "magic": "RT_DEV_BINARY_MAGIC_ELF_AIVEC",
            "memoryStamping": [], "opParaSize": 32, "parameters": [None] * 3,
            "sha256": "0" * 64, "supportSuperKernel": 1,
            "sub_operator_params": _PARAMS_85[name],
            "sub_operator_kernel_type": entry["sub_operator_kernel_type"],
            "sub_operator_kernel_name": {"AiCore": {"func_name": kernel + "_middle",
                                                    "obj_files": obj_path}},
            "sub_operator_early_start_set_flag": entry["sub_operator_early_start_set_flag"],
            "sub_operator_early_start_wait_flag": entry["sub_operator_early_start_wait_flag"],
            "split_mode": entry["split_mode"]}
