#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes skforge's man pages and bash completions from the Markdown references.

One source: share/doc/cli.md gives skc(1), skinstall(8), skrun(1) and the three completion
scripts; share/doc/run-format.md gives skforge-run(5). cli.md's shape: text common to every
tool, then per tool a section `# TOOL` (the first fenced block is `TOOL --help`, then prose) and
per command a section `## TOOL COMMAND` (the first fenced block is `TOOL COMMAND --help`, then
prose). A section whose first block is only a synopsis (no `Usage:` line) works as well.

  docgen.py man --cli cli.md --tool skc --out skc.1.gz
  docgen.py man --format-doc run-format.md --out skforge-run.5.gz
  docgen.py completion --cli cli.md --tool skc --out skc
  docgen.py gzip IN OUT

Output files are written whole (temporary name, then rename) and are reproducible: gzip
members carry no name and mtime 0.
"""
import argparse
import gzip
import os
import re
import sys
from dataclasses import dataclass, field

# Manual section and NAME line of each page (our choice: skinstall changes system directories,
# so it is an administration command, section 8).
PAGES = {
    "skc": ("1", "check, plan, compile and pack Ascend static-kernel packages"),
    "skinstall": ("8", "install, upgrade, verify and remove skforge .run kernel packages"),
    "skrun": ("1", "run an installed skforge host-target package, fused and op-by-op"),
    "skforge-op-compiler": ("1", "CANN's op_compiler answered from a store of verified packages"),
    "skforge-run": ("5", "the skforge .run self-extracting kernel package format"),
}
FENCE = "```"
OPTION = re.compile(r"(?<![\w-])(--?[A-Za-z][A-Za-z0-9-]*)")
CHOICES = re.compile(r"(--[A-Za-z][A-Za-z0-9-]*)[ =]([\w.+-]+(?:\|[\w.+-]+)+)")


# ---------------------------------------------------------------------------------------------
# Markdown model


@dataclass
class Section:
    """One heading and what follows it up to the next heading of the same or a higher level."""

    level: int
    title: str
    help: list = field(default_factory=list)  # the first fenced block, when it opens the section
    body: list = field(default_factory=list)  # the Markdown after it, fences included
    children: list = field(default_factory=list)


def strip_comments(text):
    """Removes HTML comments, which Markdown renders as nothing."""
    return re.sub(r"<!--.*?-->\n?", "", text, flags=re.S)


def parse_sections(text):
    """The document as a root Section (level 0) holding `#` sections holding `##` sections."""
    root = Section(0, "")
    stack = [root]
    in_fence = False
    for line in strip_comments(text).split("\n"):
        heading = None if in_fence else re.match(r"^(#{1,6}) +(.*?)\s*$", line)
        if heading:
            level = len(heading.group(1))
            while stack[-1].level >= level:
                stack.pop()
            section = Section(level, heading.group(2))
            stack[-1].children.append(section)
            stack.append(section)
            continue
        if line.startswith(FENCE):
            in_fence = not in_fence
        stack[-1].body.append(line)
    for section in walk(root):
        split_help(section)
    return root


def walk(section):
    """Every section below and including `section`, in document order."""
    yield section
    for child in section.children:
        yield from walk(child)


def split_help(section):
    """Moves a fenced block that opens the section (before any prose) into section.help."""
    lines = section.body
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None or not lines[start].startswith(FENCE):
        return
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(FENCE)), None)
    if end is None:
        return
    section.help = lines[start + 1 : end]
    section.body = lines[end + 1 :]


def first_word(title):
    """`skc command reference` -> skc; backticks ignored."""
    words = title.replace("`", "").split()
    return words[0] if words else ""


def tool_section(root, tool):
    """The `# TOOL ...` section, or None."""
    return next((s for s in root.children if first_word(s.title) == tool), None)


def commands(section, tool):
    """[(command name, Section)] for the `## TOOL COMMAND` sections of a tool."""
    out = []
    for child in section.children:
        words = child.title.replace("`", "").split()
        if len(words) >= 2 and words[0] == tool:
            out.append((" ".join(words[1:]), child))
    return out


def usage_lines(help_lines):
    """The synopsis in a help block: `Usage:` lines and their continuations, else the lines
    up to the first blank line (a block that is only a synopsis)."""
    out = []
    for line in help_lines:
        if line.startswith("Usage:"):
            out.append(line[len("Usage:") :].strip())
        elif out and line.startswith(" ") and line.strip() and not re.match(r"^\s+-", line):
            out[-1] += " " + line.strip()
        elif out:
            break
    if out:
        return out
    for line in help_lines:
        if not line.strip():
            break
        if out and line.startswith(" "):
            out[-1] += " " + line.strip()
        else:
            out.append(line.strip())
    return out


# ---------------------------------------------------------------------------------------------
# roff


# Characters the docs use that every groff device, ASCII included, can draw by these names.
GLYPHS = {"\u2014": "\\(em", "\u2013": "\\(en", "\u2192": "\\(->", "\u2190": "\\(<-",
          "\u2026": "...", "\u2018": "\\(oq", "\u2019": "\\(cq", "\u201c": "\\(lq",
          "\u201d": "\\(rq", "\u00d7": "\\(mu", "\u2264": "\\(<=", "\u2265": "\\(>=",
          "\u2260": "\\(!="}


def roff_chars(text):
    """Escapes text for roff: backslash, minus, and other non-ASCII as \\[uXXXX]."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\e")
        elif ch == "-":
            out.append("\\-")
        elif ch in GLYPHS:
            out.append(GLYPHS[ch])
        elif ord(ch) > 126:
            out.append("\\[u%04X]" % ord(ch))
        else:
            out.append(ch)
    return "".join(out)


def roff_line(text):
    """A text line that roff cannot mistake for a request."""
    return "\\&" + text if text.startswith((".", "'")) else text


def emphasis(text):
    """**bold**, *italic* and [text](target) outside code spans, already roff-escaped."""
    text = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"\1", text)
    text = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"\\fB\1\\fR", text)
    return re.sub(r"(?<![\w*])\*(\S(?:.*?\S)?)\*(?![\w*])", r"\\fI\1\\fR", text)


def inline(text):
    """Markdown prose (one paragraph joined into a line) as roff: code spans bold, emphasis,
    escapes."""
    out = []
    pos = 0
    for span in re.finditer(r"(`+)(.+?)\1", text):  # `code` or ``code with ` inside``
        out.append(emphasis(roff_chars(text[pos : span.start()])))
        out.append("\\fB" + roff_chars(span.group(2).strip()) + "\\fR")
        pos = span.end()
    out.append(emphasis(roff_chars(text[pos:])))
    return roff_line("".join(out).strip())


def verbatim(lines):
    """A fenced block, indented, neither filled nor adjusted."""
    out = [".PP", ".RS 2", ".nf"]
    out += [roff_line(roff_chars(line)) for line in lines]
    return out + [".fi", ".RE"]


def table_cells(line):
    """The cells of a `| a | b |` row; `\\|` is a literal bar."""
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [c.strip().replace("\\|", "|") for c in cells]


def table(rows):
    """A Markdown table as a tagged list: first cell the tag, the others (with their header
    names when there are more than two columns) the paragraph."""
    header = table_cells(rows[0])
    out = []
    for row in rows[2:]:
        cells = table_cells(row)
        rest = cells[1:]
        if len(rest) > 1:
            rest = [f"{h}: {c}" for h, c in zip(header[1:], rest)]
        out += [".TP", inline(cells[0]), inline("; ".join(rest))]
    return out


LIST_ITEM = re.compile(r"^(\s*)([-*]|\d+\.) +(.*)$")


def body(lines, sub_heading=".SS"):
    """Markdown blocks as roff: paragraphs, lists, tables, fenced blocks, headings."""
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith(FENCE):
            end = first(lines, i + 1, lambda l: l.startswith(FENCE))
            out += verbatim(lines[i + 1 : end])
            i = end + 1
        elif line.startswith("|"):
            end = first(lines, i, lambda l: not l.startswith("|"))
            out += [".PP"] + table(lines[i:end])
            i = end
        elif LIST_ITEM.match(line):
            i = list_item(lines, i, out)
        else:
            start = i
            while i < len(lines) and lines[i].strip() and not block_start(lines[i]):
                i += 1
            out += [".PP", inline(" ".join(l.strip() for l in lines[start:i]))]
    return out


def first(lines, start, pred):
    """The index of the first line from start on that satisfies pred, else len(lines)."""
    return next((j for j in range(start, len(lines)) if pred(lines[j])), len(lines))


def block_start(line):
    """Whether a line starts a block other than a paragraph."""
    return line.startswith((FENCE, "|")) or bool(LIST_ITEM.match(line))


def list_item(lines, i, out):
    """Renders the list item at lines[i] and its indented continuation lines; returns the
    index after them."""
    m = LIST_ITEM.match(lines[i])
    mark = "\\(bu" if m.group(2) in "-*" else m.group(2)
    text = [m.group(3)]
    i += 1
    end = first(lines, i, lambda l: not l.strip() or not l.startswith(" ") or LIST_ITEM.match(l))
    text += [l.strip() for l in lines[i:end]]
    i = end
    out += [f".IP {mark} 4", inline(" ".join(text))]
    return i


def section_text(section):
    """A section's opening fenced block (verbatim) and its Markdown."""
    return (verbatim(section.help) if section.help else []) + body(section.body)


def has_content(section):
    """Whether a section has any text of its own or below it."""
    text = section.help + [l for l in section.body if l.strip()]
    return bool(text) or any(map(has_content, section.children))


def title_header(name, version):
    """.TH and NAME; no date, so the page is the same on every build."""
    section, summary = PAGES[name]
    return [
        f'.TH {name.upper()} {section} "" "skforge {version}" "skforge manual"',
        ".nh",
        ".ad l",
        ".SH NAME",
        f"{roff_chars(name)} \\- {roff_chars(summary)}",
    ]


def see_also(name, docs):
    """Cross-references: the other pages and the installed Markdown references."""
    refs = [f"\\fB{n}\\fR({PAGES[n][0]})" for n in PAGES if n != name]
    text = ", ".join(refs) + "."
    return [".SH SEE ALSO", text, ".PP", inline(
        f"The references named above ({docs}) are installed with skforge in "
        "`share/doc/skforge` under its prefix (`/usr/share/doc/skforge` in the packages).")]


# ---------------------------------------------------------------------------------------------
# Pages


def tool_page(root, tool, version):
    """skc(1), skinstall(8) or skrun(1) from cli.md."""
    out = title_header(tool, version)
    section = tool_section(root, tool)
    if section is None:
        print(f"docgen: warning: cli.md has no '# {tool}' section; {tool}'s page says only where "
              "to look", file=sys.stderr)
        out += [".SH DESCRIPTION", inline(f"Run `{tool} --help`.")]
        return out + see_also(tool, "`cli.md`")
    cmds = commands(section, tool)
    synopsis = usage_lines(section.help) + [u for _, c in cmds for u in usage_lines(c.help)]
    out.append(".SH SYNOPSIS")
    for line in synopsis:
        out += [".PP", roff_line(roff_chars(line))]
    out.append(".SH DESCRIPTION")
    rest = trim_blank(after_usage(section.help))
    if rest:
        out += verbatim(rest)
    out += body(section.body)
    if cmds:
        out.append(".SH COMMANDS")
        for name, cmd in cmds:
            out.append(f'.SS "{roff_chars(tool + " " + name)}"')
            out += section_text(cmd)
            for sub in cmd.children:
                out += [f'.SS "{roff_chars(sub.title)}"'] + section_text(sub)
    common = [l for l in root.body if l.strip()]
    if common:
        out += [".SH COMMON TO ALL SKFORGE TOOLS"] + body(root.body)
    return out + see_also(tool, "`*.md`")


def after_usage(help_lines):
    """A help block without its opening `Usage:` paragraph (shown under SYNOPSIS)."""
    if not help_lines or not help_lines[0].startswith("Usage:"):
        return help_lines
    blank = next((i for i, line in enumerate(help_lines) if not line.strip()), len(help_lines))
    return help_lines[blank:]


def trim_blank(lines):
    """Lines without leading and trailing blank lines."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def format_page(root, version):
    """skforge-run(5) from run-format.md: `##` as sections, deeper headings as subsections."""
    out = title_header("skforge-run", version)
    top = root.children[0] if root.children else root
    out += [".SH DESCRIPTION"] + section_text(top)
    for section in top.children:
        if not has_content(section):
            continue
        out.append(f'.SH "{roff_chars(section.title.replace("`", "").upper())}"')
        out += section_text(section)
        for sub in walk(section):
            if sub is not section:
                out += [f'.SS "{roff_chars(sub.title.replace("`", ""))}"'] + section_text(sub)
    return out + see_also("skforge-run", "`run-format.md`, `installer.md`")


# ---------------------------------------------------------------------------------------------
# Completion


def option_names(help_lines):
    """Every option a help block names: in its synopsis and in its option lines (the part
    before the description column)."""
    names = []
    for line in usage_lines(help_lines):
        names += OPTION.findall(line)
    for line in help_lines:
        if re.match(r"^\s+-", line):
            names += OPTION.findall(re.split(r"\s{2,}", line.strip(), maxsplit=1)[0])
    return sorted(set(names))


def option_choices(help_lines):
    """{option: ([values], takes a file too)} from synopsis forms like `--format text|json`;
    an upper-case alternative (`random|DIR`) is a placeholder for a path."""
    out = {}
    for line in help_lines:
        for opt, alternatives in CHOICES.findall(line):
            values = alternatives.split("|")
            words = [v for v in values if not v.isupper()]
            out[opt] = (words, len(words) != len(values))
    return out


def shell_words(words):
    """A single-quoted shell word list."""
    return "'" + " ".join(words) + "'"


def completion(root, tool):
    """A bash completion script: commands, each command's options, values of options that
    list them; anything else falls back to file names (complete -o default)."""
    section = tool_section(root, tool)
    if section is None:
        print(f"docgen: warning: cli.md has no '# {tool}' section; completing file names only",
              file=sys.stderr)
        section = Section(1, tool)
    cmds = commands(section, tool)
    func = "_skforge_" + tool.replace("-", "_")
    lines = [
        f"# bash completion for {tool}: generated from share/doc/cli.md by packaging/docgen.py.",
        f"{func}() {{",
        "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd=''",
        "    COMPREPLY=()",
    ]
    if cmds:
        has_help = any(f"{tool} help " in line for s in walk(root) for line in s.body)
        lines += complete_command(cmds, has_help)
    lines += complete_options(section, cmds) + complete_values(section, cmds)
    lines += [
        '    [[ $cur == -* ]] && mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")',
        "    return 0",
        "}",
        f"complete -o default -F {func} {tool}",
    ]
    return lines


def complete_command(cmds, has_help):
    """Finds the command (the first word that is not an option) and completes it; `TOOL help`
    takes a command name too when the tool has it."""
    help_case = " || [[ $cmd == help && $COMP_CWORD -eq 2 ]]" if has_help else ""
    return [
        f"    local commands={shell_words(name for name, _ in cmds)} i",
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        "        case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac",
        "    done",
        f"    if [[ -z $cmd && $cur != -* ]]{help_case}; then",
        '        mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")',
        "        return",
        "    fi",
    ]


def complete_options(section, cmds):
    """Sets opts to the options of the command (or of the tool itself)."""
    lines = ["    local opts", "    case $cmd in"]
    for name, sec in [("''", section)] + cmds:
        lines.append(f"        {name}) opts={shell_words(option_names(sec.help))} ;;")
    return lines + ["        *) return ;;", "    esac"]


def complete_values(section, cmds):
    """Completes the value after an option whose synopsis lists them (`--format text|json`)."""
    lines = ['    case "$cmd:$prev" in']
    for name, cmd in [("", section)] + cmds:
        for opt, (words, files) in sorted(option_choices(cmd.help).items()):
            generate = f'compgen -W {shell_words(words)} -- "$cur"'
            if files:
                generate += '; compgen -f -- "$cur"'
            lines += [f"        {name}:{opt})",
                      f"            mapfile -t COMPREPLY < <({generate})",
                      "            return ;;"]
    return lines + ["    esac"]


# ---------------------------------------------------------------------------------------------
# Output


def write_whole(path, data):
    """Writes bytes to path through a temporary name in the same directory."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def gzip_bytes(data):
    """gzip -9n: best compression, no file name, mtime 0 (reproducible)."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def emit(path, lines):
    """Writes text lines; gzip-compressed when the path ends in .gz."""
    data = ("\n".join(lines) + "\n").encode()
    write_whole(path, gzip_bytes(data) if path.endswith(".gz") else data)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    man = sub.add_parser("man", help="write a man page")
    man.add_argument("--cli", help="cli.md (tool pages)")
    man.add_argument("--tool", choices=["skc", "skinstall", "skrun", "skforge-op-compiler"])
    man.add_argument("--format-doc", help="run-format.md (skforge-run(5))")
    man.add_argument("--version", required=True)
    man.add_argument("--out", required=True)
    comp = sub.add_parser("completion", help="write a bash completion script")
    comp.add_argument("--cli", required=True)
    comp.add_argument("--tool", required=True, choices=["skc", "skinstall", "skrun"])
    comp.add_argument("--out", required=True)
    gz = sub.add_parser("gzip", help="gzip -9n a file")
    gz.add_argument("input")
    gz.add_argument("output")
    args = parser.parse_args(argv)
    if args.what == "gzip":
        with open(args.input, "rb") as f:
            write_whole(args.output, gzip_bytes(f.read()))
    elif args.what == "completion":
        emit(args.out, completion(parse_sections(read(args.cli)), args.tool))
    elif args.format_doc:
        emit(args.out, format_page(parse_sections(read(args.format_doc)), args.version))
    elif args.cli and args.tool:
        emit(args.out, tool_page(parse_sections(read(args.cli)), args.tool, args.version))
    else:
        parser.error("man needs --cli and --tool, or --format-doc")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
