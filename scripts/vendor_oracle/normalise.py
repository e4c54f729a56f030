# SPDX-License-Identifier: Apache-2.0
"""Normalise a SuperKernel entry source so that skforge's and the vendor's can be compared:
what differs only in layout, comments or spelling that compiles the same is taken out.

- comments, preprocessor `#if 1` wrapper and blank space: dropped (tokens are compared);
- `if (true) { X }` is X; an `if ASCEND_IS_AIx { }` or `if (...) { }` with nothing inside is
  dropped;
- the definitions of the lock helpers (NotifyFunc, WaitFunc and skforge's LockBlockIdx) are
  compared by name only: both sides must define the same ones (their bodies are pinned by the
  unit tests, written from the vendor's generator);
- `AscendC::` before the vendor's sync identifiers is optional (both resolve to the same);
- a `#endif` followed by `#if` of the same condition it closed (the vendor closes
  `#if TILING_KEY_VAR == 0UL` after one kernel-type record and opens it again for the next,
  skforge keeps the records in one block) is dropped: the preprocessor gives the same text."""
import re

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z_0-9]*|0[xX][0-9a-fA-F]+|\d+[A-Za-z]*|::|->|<<|>>|"
                    r"&&|\|\||[<>=!]=|\S")
_HELPERS = ("NotifyFunc", "WaitFunc", "LockBlockIdx")


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def _strip_preprocessor_wrapper(text):
    lines = [l for l in text.splitlines() if l.strip() not in ("#if 1",)]
    # the `#endif` that closed `#if 1` is the file's last one
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip() == "#endif" and any(l.strip() == "#if 1" for l in text.splitlines()):
            del lines[i]
            break
    return "\n".join(lines)


def _fold_reopened_ifs(text):
    """Drop `#endif` + `#if C` where C is the condition of the `#if` that `#endif` closes."""
    out, stack = [], []
    for line in text.splitlines():
        s = " ".join(line.split())
        if s.startswith("#if"):
            if out and out[-1][0] == "#endif" and out[-1][1] == s:
                out.pop()  # the #endif closed the same condition: keep the block open
                stack.append(s)
                continue
            stack.append(s)
        elif s == "#endif":
            out.append(("#endif", stack.pop() if stack else None, line))
            continue
        elif not s:
            continue
        out.append((None, None, line))
    return "\n".join(entry[2] for entry in out)


def _block_end(tokens, open_index):
    depth = 0
    for i in range(open_index, len(tokens)):
        depth += {"{": 1, "}": -1}.get(tokens[i], 0)
        if depth == 0:
            return i
    return len(tokens) - 1


def _drop_helpers(tokens):
    """Remove template<...> helper definitions; return (tokens, sorted helper names)."""
    out, names, i = [], set(), 0
    while i < len(tokens):
        if tokens[i] == "template":
            j = i
            while j < len(tokens) and tokens[j] != "{" and tokens[j] != ";":
                j += 1
            name = next((t for t in tokens[i:j] if t in _HELPERS), None)
            if name and j < len(tokens) and tokens[j] == "{":
                names.add(name)
                i = _block_end(tokens, j) + 1
                continue
        out.append(tokens[i])
        i += 1
    return out, sorted(names - {"LockBlockIdx"})


def _unwrap_if_true(tokens):
    changed = True
    while changed:
        changed = False
        for i in range(len(tokens) - 4):
            if tokens[i:i + 5] == ["if", "(", "true", ")", "{"]:
                end = _block_end(tokens, i + 4)
                tokens = tokens[:i] + tokens[i + 5:end] + tokens[end + 1:]
                changed = True
                break
    return tokens


def _drop_empty_ifs(tokens):
    changed = True
    while changed:
        changed = False
        for i, tok in enumerate(tokens):
            if tok != "if":
                continue
            j = i + 1
            if j < len(tokens) and tokens[j] in ("ASCEND_IS_AIC", "ASCEND_IS_AIV"):
                j += 1
            elif j < len(tokens) and tokens[j] == "(":
                depth = 0
                while j < len(tokens):
                    depth += {"(": 1, ")": -1}.get(tokens[j], 0)
                    j += 1
                    if depth == 0:
                        break
            else:
                continue
            if tokens[j:j + 2] == ["{", "}"] and (j + 2 >= len(tokens) or tokens[j + 2] != "else"):
                tokens = tokens[:i] + tokens[j + 2:]
                changed = True
                break
    return tokens


def normalise(text):
    """(tokens of the source, helper names it defines)."""
    text = _fold_reopened_ifs(_strip_preprocessor_wrapper(_strip_comments(text)))
    tokens = _TOKEN.findall(text)
    tokens, helpers = _drop_helpers(tokens)
    tokens = [t for i, t in enumerate(tokens)
              if not (t == "AscendC" and i + 1 < len(tokens) and tokens[i + 1] == "::")]
    tokens = [t for i, t in enumerate(tokens) if not (t == "::" and i > 0 and
              tokens[i - 1] in ("(", ",", ";", "{", "}", "=") )]
    tokens = _drop_empty_ifs(_unwrap_if_true(tokens))
    return tokens, helpers


def pretty(tokens):
    """Tokens as lines (one statement or brace a line), for a readable diff."""
    lines, line = [], []
    for tok in tokens:
        line.append(tok)
        if tok in (";", "{", "}"):
            lines.append(" ".join(line))
            line = []
    if line:
        lines.append(" ".join(line))
    return lines
