#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Run the vendor's SuperKernel generator on kernel_info inputs, here, without CANN: either
graph-autofusion's (hicann/graph-autofusion super_kernel/, which imports cannmirror/asc-devkit's
asc_op_compile_base) or asc-devkit's own copy (asc_op_compile_base/asc_op_compiler/super_kernel*.py,
entered through ascendc_super_kernel.ascendc_super_kernel_plus, the one the graph engine builds).

    run_vendor.py --oracle ga --ga GA_DIR --ad AD_DIR JOBS.json
    run_vendor.py --oracle ad --ad AD_DIR JOBS.json

GA_DIR holds super_kernel/, AD_DIR tools/build/asc_op_compile_base (trees unpacked from the
vendor's repositories, outside the project). JOBS.json is a list of {"kernel_info": PATH,
"kernel_name": NAME, "out": DIR, "soc": SOC, "dynamic": BOOL}. The vendor is imported once;
each job runs in a forked child (the vendor keeps global state), which writes DIR/result.json:
{"source", "json", "log", "tools"} (paths of what the vendor wrote) or {"error", "trace"} when
the vendor refused the input. Our stand-ins replace the SoC platform library
(platform_standin.py) and the compilers (bin/: they record their command lines in
DIR/tools.log)."""
import glob
import importlib.util
import json
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def install_standins(ga_dir, ad_dir):
    """Our platform library and compilers in place of CANN's; graph-autofusion's package on the
    path when ga_dir is given (asc-devkit's copy needs only ad_dir)."""
    spec = importlib.util.spec_from_file_location(
        "asc_op_compile_base.c_api.asc_platform", os.path.join(HERE, "platform_standin.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["asc_op_compile_base.c_api.asc_platform"] = module
    sys.path.insert(0, os.path.join(ad_dir, "tools", "build"))
    if ga_dir:
        sys.path.insert(0, os.path.join(ga_dir, "super_kernel", "src"))
    os.environ["PATH"] = os.path.join(HERE, "bin") + os.pathsep + os.environ.get("PATH", "")
    os.environ.pop("ASCEND_HOME_PATH", None)


def generator(oracle):
    """The function the chosen oracle is entered through: compile(kernel_info, kernel_name)."""
    if oracle == "ad":
        from asc_op_compile_base.asc_op_compiler.ascendc_super_kernel import \
            ascendc_super_kernel_plus
        return ascendc_super_kernel_plus
    from superkernel import super_kernel
    return super_kernel.compile


def run_job(job, oracle):
    from asc_op_compile_base.common.buildcfg.buildcfg import build_config
    from asc_op_compile_base.asc_op_compiler.global_storage import global_var_storage
    from asc_op_compile_base.common.platform.platform_info import set_current_compile_soc_info, \
        get_soc_spec
    from asc_op_compile_base.common.ccec import current_build_config
    from asc_op_compile_base.common.buildcfg.buildcfg_mapping import \
        kernel_meta_parent_dir, op_debug_config, tbe_debug_level
    from asc_op_compile_base.common.context.op_context import OpContext
    compile_sk = generator(oracle)
    out = os.path.abspath(job["out"])
    os.makedirs(out, exist_ok=True)
    os.environ["SKFORGE_ORACLE_TOOL_LOG"] = os.path.join(out, "tools.log")
    with open(job["kernel_info"], encoding="utf-8") as f:
        kernel_info = json.load(f)
    os.chdir(out)
    name = job["kernel_name"]
    try:
        with build_config():
            # What the vendor's ST does before each compile (tests/st/scenarios/test_smoke.py).
            global_var_storage.set_variable("ascendc_compile_debug_config", True)
            set_current_compile_soc_info(job.get("soc", "Ascend910_9391"))
            # asc-devkit's copy asks its global storage which SoC it compiles for (is_c310,
            # the supported-SoC check); the op compiler sets it for each compile.
            global_var_storage.set_variable("ascendc_short_soc_version",
                                            get_soc_spec("SHORT_SOC_VERSION"))
            current_build_config()[kernel_meta_parent_dir] = out
            current_build_config()[op_debug_config] = ["dump_cce"]
            current_build_config()[tbe_debug_level] = 0
            # The JSON post-processing reads the op context (get_context()), which the op
            # compiler always has open when it calls the generator.
            with OpContext("dynamic" if job.get("dynamic") else "static"):
                compile_sk(kernel_info, name)
        # <name><tag>_kernel.cpp and <name><tag>.log, the tag the vendor's pid (of the process
        # that imported it, on some lines): one of each in a fresh directory.
        meta = os.path.join(out, "kernel_meta")
        source = glob.glob(os.path.join(meta, f"{name}*_kernel.cpp"))
        logs = [p for p in glob.glob(os.path.join(meta, f"{name}_*.log"))]
        result = {"source": source[0] if source else "", "json": os.path.join(meta, f"{name}.json"),
                  "log": logs[0] if logs else "", "tools": os.path.join(out, "tools.log")}
    except BaseException as err:  # the vendor raises through ascendc_raise_python_err
        text = "".join(traceback.format_exception_only(type(err), err)).strip()
        result = {"error": text, "trace": traceback.format_exc()}
    with open(os.path.join(out, "result.json"), "w", encoding="utf-8") as f:
        json.dump(result, f)


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle", choices=("ga", "ad"), default="ga")
    ap.add_argument("--ga")
    ap.add_argument("--ad", required=True)
    ap.add_argument("jobs")
    args = ap.parse_args()
    if args.oracle == "ga" and not args.ga:
        sys.exit("run_vendor.py: --oracle ga needs --ga GA_DIR")
    install_standins(os.path.abspath(args.ga) if args.oracle == "ga" else None,
                     os.path.abspath(args.ad))
    with open(args.jobs, encoding="utf-8") as f:
        jobs = json.load(f)
    generator(args.oracle)  # imported once, before the children fork
    for job in jobs:
        for stale in glob.glob(os.path.join(job["out"], "result.json")):
            os.unlink(stale)
        pid = os.fork()
        if pid == 0:
            try:
                run_job(job, args.oracle)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
