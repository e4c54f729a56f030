#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Differential harness against the vendor's SuperKernel generator (development only: CI cannot
reach the vendor's repositories). See share/doc/cann-conformance.md, "The vendor's generator as
the oracle".

  vendor-diff.py st   [--oracle ga|ad|both] --ga GA_DIR --ad AD_DIR [--work DIR] [-v]
      run the vendor's own ST scenarios (read from GA_DIR) through the generator with our
      stand-ins and compare with its expected sources byte for byte (and its expected JSON,
      sha256 aside).
  vendor-diff.py diff [--oracle ga|ad|both] [--ga GA_DIR] --ad AD_DIR --skc BUILD/apps/skc/skc
                      [--cann-version V] [--work DIR] [--seed N] [--count N] [--report J] [-v]
      generate SuperKernel inputs (dav-2201 and dav-3510), run `skc compile --sources-only
      --cann-version V` on each (V: the line of AD_DIR unless given), feed the generator the
      kernel_info skforge writes, and compare entry source (normalised) and JSON; -v also
      prints the generator's bisheng defines and include directories.

--oracle: graph-autofusion's generator (ga, the default; GA_DIR's super_kernel/ over AD_DIR's
asc_op_compile_base), asc-devkit's own copy (ad: AD_DIR's asc_op_compiler/super_kernel*.py
through ascendc_super_kernel_plus, the one the graph engine builds), or each in turn (both).
GA_DIR: a tree of hicann/graph-autofusion holding super_kernel/; AD_DIR: one of
cannmirror/asc-devkit holding tools/build/asc_op_compile_base (unpacked outside the project).
Exit 0 when every case agrees, 1 otherwise."""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "vendor_oracle"))
import cases as gen  # noqa: E402
import normalise  # noqa: E402
import objects  # noqa: E402
import vendor_st  # noqa: E402


def run_vendor(ga, ad, jobs, work, oracle="ga"):
    """Run the vendor's generator (`oracle`: graph-autofusion's, "ga", or asc-devkit's own copy,
    "ad") on every job ({kernel_info (a dict), kernel_name, out, dynamic, soc}) in one
    interpreter that forks per job; returns each job's result."""
    listed = []
    for job in jobs:
        os.makedirs(job["out"], exist_ok=True)
        path = os.path.join(job["out"], "kernel_info.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(job["kernel_info"], f, indent=2)
        listed.append(dict({k: v for k, v in job.items() if k != "kernel_info"},
                           kernel_info=path))
    jobs_path = os.path.join(work, "jobs.json")
    with open(jobs_path, "w", encoding="utf-8") as f:
        json.dump(listed, f, indent=2)
    cmd = [sys.executable, "-B", os.path.join(HERE, "vendor_oracle", "run_vendor.py"),
           "--oracle", oracle, "--ad", ad, jobs_path]
    if oracle == "ga":
        cmd[5:5] = ["--ga", ga]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    results = []
    for job in listed:
        path = os.path.join(job["out"], "result.json")
        results.append(json.load(open(path)) if os.path.exists(path) else
                       {"error": "no result: " + proc.stderr[-2000:]})
    return results


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def st_inputs(case, work, master):
    """The op_list the vendor's ST hands its generator, with our stand-in objects."""
    op_list = []
    for index, op in enumerate(case["ops"]):
        name = os.path.splitext(os.path.basename(op["json"]))[0]
        obj = os.path.join(work, "sub", f"{index}_{name}.o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        if master:
            json_path = op["json"]
            meta = json.load(open(json_path))
        else:
            meta = vendor_st.kernel_json_85(case, index, obj)
            json_path = os.path.join(work, "sub", f"{index}_{name}.json")
            json.dump(meta, open(json_path, "w"), indent=2)
        objects.sub_kernel_archive(obj, objects.members_of(meta), objects.TEXT_SIZE[name])
        entry = {"stream_id": op["stream_id"], "bin_path": obj, "json_path": json_path,
                 "send_event_list": op["send_event_list"], "recv_event_list": op["recv_event_list"],
                 "task_type": op["task_type"]}
        op_list.append(entry)
    return {"super_kernel_options": case["options"], "op_list": op_list}


def key_paths(value, prefix=""):
    """Every leaf of a JSON value as {"a.b[0].c": leaf}."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(key_paths(item, f"{prefix}.{key}" if prefix else key))
        return out or {prefix: {}}
    if isinstance(value, list):
        out = {}
        for i, item in enumerate(value):
            out.update(key_paths(item, f"{prefix}[{i}]"))
        return out or {prefix: []}
    return {prefix: value}


def json_differences(expected_path, got_path, ignore=("sha256",)):
    """The leaves (list indices as [*]) where two JSON files differ, sha256 aside."""
    expected = key_paths(json.load(open(expected_path)))
    got = key_paths(json.load(open(got_path)))
    out = set()
    for key in set(expected) | set(got):
        if key.split(".")[0] in ignore:
            continue
        if expected.get(key, "<absent>") != got.get(key, "<absent>"):
            out.add(re.sub(r"\[\d+\]", "[*]", key) +
                    (" (absent)" if key not in got else " (extra)" if key not in expected else ""))
    return sorted(out)


def shortened(items, most=4):
    """The first `most` of a list, and how many more."""
    return ", ".join(items[:most]) + (f" (+{len(items) - most} more)" if len(items) > most else "")


def bisheng_has(tools_log, source, wanted):
    for line in read(tools_log).splitlines():
        cmd = json.loads(line)
        if cmd[0] == "bisheng" and source in cmd:
            return [w for w in wanted if w not in " ".join(cmd)]
    return list(wanted) or ["(no bisheng call)"]


def cmd_st(args):
    work = args.work or tempfile.mkdtemp(prefix="vendor-st-")
    os.makedirs(work, exist_ok=True)
    status = 0
    for oracle in oracles(args):
        print(f"== oracle {ORACLE_NAMES[oracle]}")
        status |= st_one(args, oracle, os.path.join(work, oracle))
    return status


def st_one(args, oracle, work):
    """The ST scenarios of args.ga through one oracle, compared with the ST's expected files."""
    master = os.path.isdir(os.path.join(args.ga, "super_kernel", "tests", "st",
                                        "json_for_test_smoke"))
    os.makedirs(work, exist_ok=True)
    cases = vendor_st.st_cases(args.ga)
    jobs = []
    for case in cases:
        out = os.path.join(work, case["name"])
        jobs.append({"kernel_info": st_inputs(case, out, master), "kernel_name": case["kernel_name"],
                     "out": out, "dynamic": case["dynamic"], "soc": "Ascend910_9391"})
    agree = {"source": 0, "json": 0, "all": 0}
    for case, result in zip(cases, run_vendor(args.ga, args.ad, jobs, work, oracle)):
        expected = case["expected_dir"]
        if "error" in result:
            verdict = "vendor error: " + result["error"]
            if args.verbose:
                print(result.get("trace", ""))
        else:
            golden = os.path.join(expected, "expect_sk_code.cc")
            # 8.5.0-beta.1 keeps only the JSON of two scenarios: nothing to compare the source to.
            src_ok = read(result["source"]) == read(golden) if os.path.exists(golden) else None
            diffs = json_differences(os.path.join(expected, "expect_compiled_json.json"),
                                     result["json"])
            missing = bisheng_has(result["tools"], result["source"], case["golden_options"])
            agree["source"] += bool(src_ok)
            agree["json"] += not diffs
            verdict = "agrees" if src_ok and not diffs and not missing else \
                f"source {'same' if src_ok else 'DIFFERS' if src_ok is False else 'not kept'}" + \
                (f", json differs in {shortened(diffs)}" if diffs else ", json same") + \
                (f", bisheng lacks {missing}" if missing else "")
            if args.verbose and src_ok is False:
                subprocess.run(["diff", "-u", os.path.join(expected, "expect_sk_code.cc"),
                                result["source"]])
        agree["all"] += verdict == "agrees"
        print(f"{case['name']}: {verdict}" +
              (" (not run by the vendor's ST)" if case.get("inactive") else ""))
    print(f"{len(cases)} ST scenarios: source byte for byte {agree['source']}, JSON (sha256 "
          f"aside) {agree['json']}, both with the ST's compile options {agree['all']} "
          f"(work: {work})")
    return 0 if agree["all"] == len(cases) else 1


def release_of(ad):
    """The CANN line of an asc-devkit tree, as skc compile --cann-version names it: 8.5 unless
    its compile_op.py writes the kernel list's blockNum (asc-devkit 9.0.0 on); 9.1 when it no
    longer writes an operator's dump type into debugOptions (883c0f8b, on 9.1.0 and master)."""
    path = os.path.join(ad, "tools", "build", "asc_op_compile_base", "asc_op_compiler",
                        "compile_op.py")
    text = read(path)
    if 'sub_dfx_info["blockNum"]' not in text:
        return "8.5"
    return "9.0" if 'js["debugOptions"] = compile_info.dump_info' in text else "9.1"


def skforge_side(args, case_dir, case):
    """skc compile --sources-only on the case; (entry source, JSON, kernel_info) or an error."""
    # skc runs in the case's directory: a relative --skc is taken from where we were started.
    cmd = [os.path.abspath(args.skc), "compile", "graph.yaml", "--sources-only"]
    if args.cann_version:
        cmd += ["--cann-version", args.cann_version]
    proc = subprocess.run(cmd, cwd=case_dir, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[0]}
    arch, _, soc_dir = gen.target_of(case)
    sk = os.path.join(case_dir, "static_kernel_compile_outputs", f"g_{arch}_sources", soc_dir,
                      "SuperKernel")
    segments = sorted(os.listdir(os.path.join(sk, "cann"))) if os.path.isdir(
        os.path.join(sk, "cann")) else []
    if len(segments) != 1:
        return {"error": f"skforge cuts the scope into {len(segments)} SuperKernels"}
    seg = segments[0]
    info = os.path.join(sk, "cann", seg, "kernel_info.json")
    if not os.path.isfile(info):  # skc logs why it hands the vendor nothing
        return {"error": "skc wrote no kernel_info for the vendor's compiler"}
    kernel_info = json.load(open(info))
    # Paths skc writes relative (sub-kernel JSON copies) are beside the kernel_info, as
    # skforge's driver resolves them.
    for op in kernel_info.get("op_list", []):
        for key in ("bin_path", "json_path"):
            if isinstance(op.get(key), str) and not os.path.isabs(op[key]):
                op[key] = os.path.join(os.path.dirname(os.path.abspath(info)), op[key])
    return {"source": os.path.join(sk, seg + ".cpp"), "json": os.path.join(sk, seg + ".json"),
            "kernel_info": kernel_info, "segment": seg}


# Keys of the SuperKernel JSON whose values differ by design (share/doc/cann-conformance.md,
# "SuperKernel JSON"): skforge's own plan data, the digest of a binary --sources-only does not
# build, and the workspace, which in skforge also holds the arena and its flag slots.
JSON_BY_DESIGN = ("skforge", "sha256", "workspace")


def vendor_reason(result):
    """The vendor's own words for a refusal ([message:...] of ascendc_raise_python_err), with
    the paths and lists it quotes cut."""
    found = re.search(r"\[message:(?:ERROR: )?(.*?)(?:\]|$)", result.get("trace", ""), re.S)
    text = found.group(1) if found else result["error"]
    return re.sub(r"(: )?(oplist|op_list)?: \[\{.*", "", text.split("\n")[0])[:200]


def compare(ours, vendor):
    """The differences between skforge's and the vendor's outputs for one case, as text."""
    if "error" in ours or "error" in vendor:
        if "error" in ours and "error" in vendor:
            return []  # both refuse
        who = "skforge refuses: " + ours["error"] if "error" in ours else \
            "vendor refuses: " + vendor_reason(vendor)
        return [who]
    out = []
    a, ha = normalise.normalise(read(ours["source"]))
    b, hb = normalise.normalise(read(vendor["source"]))
    if ha != hb:
        out.append(f"lock helpers: skforge {ha}, vendor {hb}")
    if a != b:
        diff = list(difflib.unified_diff(normalise.pretty(b), normalise.pretty(a), "vendor",
                                         "skforge", n=1, lineterm=""))
        out.append("source:\n" + "\n".join(diff[2:40]))
    diffs = json_differences(vendor["json"], ours["json"], JSON_BY_DESIGN)
    if diffs:
        out.append("json: " + ", ".join(diffs))
    return out


ORACLE_NAMES = {"ga": "graph-autofusion super_kernel/",
                "ad": "asc-devkit asc_op_compiler/super_kernel*.py"}


def oracles(args):
    return ["ga", "ad"] if args.oracle == "both" else [args.oracle]


def bisheng_options(result):
    """The vendor's first bisheng line as (defines, include directories below the toolkit's
    asc/ directory): what the graph engine compiles the entry with."""
    if "error" in result or not os.path.exists(result.get("tools", "")):
        return None
    for line in read(result["tools"]).splitlines():
        cmd = json.loads(line)
        if cmd[0] == "bisheng" and any(a.endswith("_kernel.cpp") for a in cmd):
            defines = [a for a in cmd if a.startswith("-D") and "auto_gen_" not in a and
                       "_tilingkey" not in a]
            incs = [re.sub(r"^-I.*?/(x86_64|aarch64)-linux/", "", a) for a in cmd
                    if a.startswith("-I")]
            return {"defines": defines, "includes": incs}
    return None


def cmd_diff(args):
    work = args.work or tempfile.mkdtemp(prefix="vendor-diff-")
    os.makedirs(work, exist_ok=True)
    cases = gen.generated_cases(args.seed, args.count)
    ours, jobs = [], []
    for case in cases:
        case_dir = gen.write_case(case, work)
        side = skforge_side(args, case_dir, case)
        ours.append(side)
        jobs.append({"kernel_info": side.get("kernel_info") or own_kernel_info(case_dir, case),
                     # the vendor's kernel is named as skc names the segment it hands over
                     "kernel_name": "g_" + side.get("segment", "sk"), "case_dir": case_dir,
                     "soc": gen.target_of(case)[1], "dynamic": False})
    status, report = 0, {}
    for oracle in oracles(args):
        print(f"== oracle {ORACLE_NAMES[oracle]}")
        for job in jobs:
            job["out"] = os.path.join(job["case_dir"], "vendor-" + oracle)
        results = run_vendor(args.ga, args.ad, [{k: v for k, v in j.items() if k != "case_dir"}
                                                for j in jobs], work, oracle)
        report[oracle] = diff_report(args, cases, ours, results)
        status |= report[oracle]["agree"] != len(cases)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return status


def diff_report(args, cases, ours, results):
    """Print each case's verdict against one oracle and the tally; return them."""
    agree, summary, verdicts = 0, {}, {}
    for case, side, vendor in zip(cases, ours, results):
        diffs = compare(side, vendor)
        agree += not diffs
        verdicts[case["name"]] = [d.splitlines()[0][:200] for d in diffs]
        status = "agree" if not diffs else "differ"
        print(f"{case['name']}: {status}  ops={[op['type'][12:] for op in case['ops']]} "
              f"streams={[op['stream'] for op in case['ops']]} options={case['options']}"
              + (f" arch={case['arch']}" if case.get("arch") else ""))
        for d in diffs:
            key = re.sub(r"\bk\d+__kernel0\b", "k<i>__kernel0", d.splitlines()[0])[:160]
            summary[key] = summary.get(key, 0) + 1
            if args.verbose:
                print("    " + d.replace("\n", "\n    "))
        if args.verbose and bisheng_options(vendor):
            print(f"    vendor bisheng: {bisheng_options(vendor)}")
    by_name = sum(1 for v in verdicts.values() if v == ["json: binFileName"])
    print(f"{agree}/{len(cases)} cases agree (source normalised, JSON without "
          f"{', '.join(JSON_BY_DESIGN)}), {by_name} more but for binFileName (by design), "
          f"{len(cases) - agree - by_name} differ otherwise")
    for key, count in sorted(summary.items(), key=lambda kv: -kv[1]):
        print(f"  {count:3d}  {key}")
    return {"agree": agree, "agree_but_bin_file_name": by_name, "cases": len(cases),
            "verdicts": verdicts, "summary": summary}


def own_kernel_info(case_dir, case):
    """The kernel_info for a case skforge refuses, written as GE would, so the vendor's verdict
    on the same input is known."""
    ops = []
    text = read(os.path.join(case_dir, "graph.yaml"))
    for i, op in enumerate(case["ops"]):
        send = re.search(r"name: op%d,.*?send_event_list: \[([^\]]*)\]" % i, text)
        ops.append({"bin_path": os.path.join(case_dir, "kernels", f"k{i}.o"),
                    "json_path": os.path.join(case_dir, "kernels", f"k{i}.json"),
                    "stream_id": op["stream"], "task_type": "normal",
                    "send_event_list": [int(e) for e in send.group(1).split(",")] if send else [],
                    "recv_event_list": op.get("recv", [])})
    return {"op_list": ops,
            "super_kernel_options": ":".join(f"{k}={v}" for k, v in case["options"].items())}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("st", "diff"):
        p = sub.add_parser(name)
        p.add_argument("--oracle", choices=("ga", "ad", "both"), default="ga",
                       help="whose generator: graph-autofusion's (ga), asc-devkit's own copy "
                            "(ad), or each in turn (both)")
        p.add_argument("--ga", required=(name == "st"))
        p.add_argument("--ad", required=True)
        p.add_argument("--work")
        p.add_argument("-v", "--verbose", action="store_true")
        if name == "diff":
            p.add_argument("--skc", required=True)
            p.add_argument("--cann-version")
            p.add_argument("--seed", type=int, default=1)
            p.add_argument("--count", type=int, default=60)
            p.add_argument("--report", help="write each oracle's verdicts as JSON here")
    args = ap.parse_args()
    if args.oracle in ("ga", "both") and not args.ga:
        ap.error(f"--oracle {args.oracle} needs --ga GA_DIR")
    args.ga = os.path.abspath(args.ga) if args.ga else None
    args.ad = os.path.abspath(args.ad)
    if args.cmd == "diff" and not args.cann_version:
        args.cann_version = release_of(args.ad)  # skforge follows the line being compared
        print(f"skc compile --cann-version {args.cann_version} (the line of {args.ad})")
    return cmd_st(args) if args.cmd == "st" else cmd_diff(args)


if __name__ == "__main__":
    sys.exit(main())
