#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keeps share/doc/cli.md and every --help of skc, skinstall, skrun and skforge-op-compiler the same
text.

cli.md holds, for each tool, a section `# TOOL` whose first fenced block is `TOOL --help`, and
for each command the tool lists a section `## TOOL COMMAND` whose first fenced block is
`TOOL COMMAND --help`, followed by prose. skrun has no commands: only `# skrun`.

  help-sync.py --check  --build build/dev     fails (exit 1) with a diff when they differ
  help-sync.py --update --build build/dev     rewrites the blocks from the tools' output

--update replaces only the fenced help blocks; it adds a section (with a placeholder line of
prose) for a command cli.md does not have yet, and warns about sections for commands a tool no
longer lists (they are left for a person to remove). Tools may also be given one by one with
--skc/--skinstall/--skrun.
"""
import argparse
import difflib
import os
import re
import subprocess
import sys

TOOLS = ("skc", "skinstall", "skrun", "skforge-op-compiler")
# Tools without commands: only `# TOOL`.
SINGLE = ("skrun", "skforge-op-compiler")
FENCE = "```"
PLACEHOLDER = "(Describe this command here; the block above is its --help, kept by scripts/help-sync.py.)"


def run_help(exe, args):
    env = dict(os.environ, COLUMNS="200", LC_ALL="C.UTF-8")
    r = subprocess.run([exe, *args, "--help"], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"help-sync: '{exe} {' '.join(args)} --help' exited {r.returncode}:\n{r.stderr}")
    return [line.rstrip() for line in r.stdout.rstrip("\n").split("\n")]


def commands_of(help_lines):
    """The command names a tool's top-level --help lists ('  name   what it does')."""
    names = []
    for line in help_lines:
        m = re.match(r"^  ([a-z][a-z0-9-]*)  +\S", line)
        if m:
            names.append(m.group(1))
    return names


def expected_sections(exes):
    """[(heading, help lines)] in document order: each tool, then each of its commands."""
    out = []
    for tool in TOOLS:
        top = run_help(exes[tool], [])
        out.append((f"# {tool}", top))
        if tool in SINGLE:
            continue
        for cmd in commands_of(top):
            out.append((f"## {tool} {cmd}", run_help(exes[tool], [cmd])))
    return out


class Doc:
    """cli.md as lines, with its headings (outside fences) and each section's first fence."""

    def __init__(self, text):
        self.lines = text.rstrip("\n").split("\n")

    def headings(self):
        found, fenced = [], False
        for i, line in enumerate(self.lines):
            if line.startswith(FENCE):
                fenced = not fenced
            elif not fenced and re.match(r"^#{1,2} ", line):
                found.append((i, line.rstrip()))
        return found

    def section_end(self, start):
        later = [i for i, _ in self.headings() if i > start]
        return later[0] if later else len(self.lines)

    def block(self, start):
        """(open, close) line indexes of the first fence of the section at `start`, or None."""
        end = self.section_end(start)
        for i in range(start + 1, end):
            if self.lines[i].startswith(FENCE):
                for j in range(i + 1, end):
                    if self.lines[j].startswith(FENCE):
                        return i, j
                return None
        return None

    def find(self, heading):
        for i, h in self.headings():
            if h == heading:
                return i
        return None


def tool_of(heading):
    return heading.lstrip("#").split()[0]


def check(doc, expected):
    problems = []
    known = {h for h, _ in expected}
    for heading, want in expected:
        at = doc.find(heading)
        if at is None:
            problems.append(f"cli.md has no section '{heading}'")
            continue
        blk = doc.block(at)
        have = [] if blk is None else [l.rstrip() for l in doc.lines[blk[0] + 1 : blk[1]]]
        if have != want:
            diff = difflib.unified_diff(have, want, f"cli.md '{heading}'",
                                        f"{heading.lstrip('# ')} --help", lineterm="")
            problems.append("\n".join(diff))
    for _, h in doc.headings():
        if tool_of(h) in TOOLS and h not in known:
            problems.append(f"cli.md has a section '{h}' for a command the tool does not list")
    return problems


def update(doc, expected):
    known = {h for h, _ in expected}
    previous = None
    for heading, want in expected:
        block = [FENCE] + want + [FENCE]
        at = doc.find(heading)
        if at is None:
            # Where the tools list it: right after the section before it (which exists by now),
            # else at the end.
            pos = doc.section_end(doc.find(previous)) if previous else len(doc.lines)
            previous = heading
            new = [heading, ""] + block + ["", PLACEHOLDER, ""]
            if pos > 0 and doc.lines[pos - 1].strip():
                new = [""] + new
            doc.lines[pos:pos] = new
            print(f"help-sync: added section '{heading}'", file=sys.stderr)
            continue
        previous = heading
        blk = doc.block(at)
        if blk is None:
            doc.lines[at + 1 : at + 1] = [""] + block
        else:
            doc.lines[blk[0] : blk[1] + 1] = block
    for _, h in doc.headings():
        if tool_of(h) in TOOLS and h not in known:
            print(f"help-sync: warning: section '{h}' is for a command the tool does not list; "
                  "remove it by hand", file=sys.stderr)


def find_tools(a):
    exes = {}
    for tool in TOOLS:
        given = getattr(a, tool.replace("-", "_"))
        if given:
            exes[tool] = given
            continue
        if not a.build:
            sys.exit(f"help-sync: give --build DIR or --{tool} PATH")
        cands = [os.path.join(a.build, "apps", tool, tool), os.path.join(a.build, tool)]
        if tool == "skforge-op-compiler":
            cands.insert(0, os.path.join(a.build, "apps", "op_compiler", tool))
        for cand in cands:
            if os.access(cand, os.X_OK):
                exes[tool] = cand
                break
        else:
            sys.exit(f"help-sync: no {tool} executable under {a.build}")
    return exes


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="fail with a diff when they differ")
    mode.add_argument("--update", action="store_true", help="rewrite cli.md's help blocks")
    p.add_argument("--build", help="a build directory holding apps/<tool>/<tool>")
    for tool in TOOLS:
        p.add_argument(f"--{tool}", help=f"the {tool} executable")
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--doc", default=os.path.join(here, "..", "share", "doc", "cli.md"))
    a = p.parse_args()
    expected = expected_sections(find_tools(a))
    with open(a.doc, encoding="utf-8") as f:
        doc = Doc(f.read())
    if a.check:
        problems = check(doc, expected)
        for pr in problems:
            print(pr, file=sys.stderr)
        if problems:
            print(f"help-sync: {a.doc} and the tools' --help differ; run "
                  "scripts/help-sync.py --update --build <build dir>", file=sys.stderr)
            return 1
        return 0
    update(doc, expected)
    while doc.lines and not doc.lines[-1].strip():
        doc.lines.pop()
    with open(a.doc, "w", encoding="utf-8") as f:
        f.write("\n".join(doc.lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
