#!/usr/bin/env python3
"""Product code stays small enough to read: no function over 100 lines, no file over 500.

Usage: check_sizes.py ROOT [--list]. Product code is cli/, runtime/, spank-plugin/ and python/
(C++; not tests, bench or examples). A function's lines run from the first line of its signature
to its closing brace, lambdas inside it included (Universal Ctags' count, give or take the lines
of a constructor's initializer list). Exits 1 naming each function or file over its limit that
the allowance below does not list; --list prints every function over 50 lines.
"""
import pathlib
import re
import sys

DIRS = ("cli", "runtime", "spank-plugin", "python")
SUFFIXES = {".cpp", ".hpp", ".h", ".c", ".cc", ".in"}
MAX_FUNCTION = 100
MAX_FILE = 500

# Over the limit and known: none left (the last, the hang watch's tick, was split into its stages);
# nothing may join.
ALLOWED: set = set()

HEAD_FUNCTION = re.compile(
    r"\)\s*(?:(?:const|noexcept|override|final|mutable|volatile|&&|&)\s*|->\s*[\w:<>,\s\*&]+)*$")
HEAD_SCOPE = re.compile(r"\b(?:namespace|class|struct|union|enum|extern)\b")


def blank(text):
    """The text with comments, string and character literals and preprocessor lines blanked
    (newlines kept), so that braces and parentheses in them do not count."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and not (text[i] == "\n" and text[i - 1] != "\\"):
                out.append("\n" if text[i] == "\n" else " ")
                i += 1
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.extend("\n" if ch == "\n" else " " for ch in text[i:end])
            i = end
        elif c == "R" and text.startswith('"', i + 1) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            close = ")" + m.group(1) + '"'
            end = text.find(close, i + m.end())
            end = n if end < 0 else end + len(close)
            out.append('""')
            out.extend("\n" if ch == "\n" else " " for ch in text[i + 2:end])
            i = end
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and text[i + 1: i + 2].isalnum():
                out.append(" ")  # a digit separator: 1'000'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * max(0, min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of each function body at namespace or class scope."""
    code = blank(text)
    found = []
    stack = []  # (kind, name, start line)
    head_start = 0
    line = 1
    line_of = []
    for ch in code:
        line_of.append(line)
        if ch == "\n":
            line += 1
    for i, ch in enumerate(code):
        if ch in ";":
            head_start = i + 1
        elif ch == "{":
            head = code[head_start:i]
            in_function = any(kind == "function" for kind, _, _ in stack)
            stripped = head.strip()
            if in_function:
                stack.append(("block", "", 0))
            elif HEAD_SCOPE.search(stripped) and "(" not in stripped:
                stack.append(("scope", "", 0))
            elif HEAD_FUNCTION.search(stripped) and "=" not in stripped.split("(")[0]:
                first = head_start + (len(head) - len(head.lstrip()))
                name_match = re.search(r"([\w:~]+(?:operator\s*\S+?)?)\s*\(", stripped)
                name = name_match.group(1) if name_match else "?"
                stack.append(("function", name, line_of[first] if first < len(line_of) else 0))
            else:
                stack.append(("block", "", 0))
            head_start = i + 1
        elif ch == "}":
            if stack:
                kind, name, start = stack.pop()
                if kind == "function":
                    found.append((name, start, line_of[i]))
            head_start = i + 1
    return found


def main():
    root = pathlib.Path(sys.argv[1])
    listing = "--list" in sys.argv
    problems = []
    for d in DIRS:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            text = path.read_text(errors="replace")
            lines = text.count("\n")
            if lines > MAX_FILE and rel not in ALLOWED:
                problems.append(f"{rel}: {lines} lines; expected at most {MAX_FILE} per file")
            for name, first, last in functions(text):
                length = last - first + 1
                if listing and length > 50:
                    print(f"{length} {rel}:{first} {name}")
                if length > MAX_FUNCTION and f"{rel}:{name}" not in ALLOWED:
                    problems.append(f"{rel}:{first}: {name} is {length} lines; expected at most "
                                    f"{MAX_FUNCTION} per function")
    for p in problems:
        print(f"sizes: {p}", file=sys.stderr)
    if not problems and not listing:
        print(f"no product function over {MAX_FUNCTION} lines, no file over {MAX_FILE}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
