#!/usr/bin/env python3
"""Runs the commands the README shows, as shown.

Usage: readme_commands.py README.md SYMTRACE_PROGRAM SOURCE_ROOT

Every line of a ```sh block that starts with `symtrace` is run with SYMTRACE_PROGRAM (the
README says the program is on PATH after `meson install`) in a scratch directory, and so is
`tools/quickstart`, which builds the program and runs it with its arguments; each must
exit 0, or the code a trailing `# exit N` comment names. A line that starts with `python3`
runs with /usr/bin/python3 in the same directory, before the commands after it (it makes
the files they read, e.g. a TorchScript model). When a ```sh block holding one
such symtrace command (and any python3 lines) is followed directly by a ```text block, that
block is its exact standard output, except that a line `...` stands for any number of lines. Lines that run tools/*
scripts must name executables that exist (CI runs tools/test and tools/quickstart
themselves). Prints each command and exits 1 on the first difference.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile


def blocks(text):
    """(language, body) of each fenced block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, flags=re.S | re.M)


def matches(expected, actual):
    """True when `actual` is `expected`, a `...` line standing for any lines."""
    exp = expected.split("\n")
    act = actual.split("\n")

    def go(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i] == "...":
            return any(go(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and exp[i] == act[j] and go(i + 1, j + 1)

    return go(0, 0)


def main():
    readme, program, root = sys.argv[1:4]
    program = os.path.abspath(program)
    fenced = blocks(open(readme).read())
    ran = 0
    with tempfile.TemporaryDirectory() as scratch:
        for index, (language, body) in enumerate(fenced):
            if language != "sh":
                continue
            commands = []
            for line in body.splitlines():
                command, _, comment = line.partition("#")
                words = shlex.split(command)
                if not words:
                    continue
                if words[0].startswith("tools/"):
                    tool = os.path.join(root, words[0])
                    if not os.access(tool, os.X_OK):
                        print(f"README: '{line}': {words[0]} is not an executable in the repository")
                        return 1
                if words[0] == "tools/quickstart":
                    words = ["symtrace"] + words[1:]
                if words[0] == "python3":
                    commands.append((line.strip(), ["/usr/bin/python3"] + words[1:], 0))
                    continue
                if words[0] != "symtrace":
                    continue
                code = re.search(r"exit (\d+)", comment)
                commands.append((line.strip(), words, int(code.group(1)) if code else 0))
            following = fenced[index + 1] if index + 1 < len(fenced) else None
            # The files python3 lines make are not output: the block's one symtrace command is.
            programs = [c for c in commands if c[1][0] != "/usr/bin/python3"]
            expected_output = following[1] if following and following[0] == "text" and len(programs) == 1 else None
            for line, words, code in commands:
                print(f"$ {line}", flush=True)
                argv = words if words[0] == "/usr/bin/python3" else [program] + words[1:]
                result = subprocess.run(argv, cwd=scratch, capture_output=True, text=True, timeout=600)
                ran += 1
                if result.returncode != code:
                    print(f"README: '{line}' exited {result.returncode}, the README says {code}\n{result.stderr}")
                    return 1
                if expected_output is not None and words[0] != "/usr/bin/python3" and not matches(expected_output, result.stdout):
                    print(f"README: the output of '{line}' differs from the README's. It printed:\n{result.stdout}")
                    return 1
    if ran == 0:
        print("README: no symtrace command found")
        return 1
    print(f"README: {ran} commands ran as shown")
    return 0


if __name__ == "__main__":
    sys.exit(main())
