#!/usr/bin/env python3
"""tools/check-paths on this tree (it must pass), on a small tree whose paths all stay inside
(it must pass), and on small trees that each name one path outside the repository (it must
fail, naming the file, the line and the path). Usage: check_paths_test.py CHECK_PATHS ROOT

The bad paths below are the point of this file, so their lines carry the check's allow mark
(as does a fixture's include, which resolves inside its own tree but not from this folder).
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile


def run(check, root):
    p = subprocess.run([sys.executable, check, "--root", root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def tree(files, git=True, untracked=None):
    """A temporary tree holding `files` ({path: text or bytes}), a git repository with them
    added when `git`; `untracked` files are written but not added."""
    root = tempfile.mkdtemp(prefix="check-paths-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    for rel, content in {**files, **(untracked or {})}.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb" if isinstance(content, bytes) else "w") as f:
            f.write(content)
    if git:
        subprocess.run(["git", "init", "-q", root], check=True)
        subprocess.run(["git", "-C", root, "add", "--", *files], check=True)
    return root


def expect(label, code, out, want_code, *wanted, absent=()):
    ok = code == want_code and all(w in out for w in wanted) and not any(a in out for a in absent)
    print(f"{'ok' if ok else 'FAILED'}: {label}")
    if not ok:
        print(f"  exit {code} (wanted {want_code}); output:\n{out}")
    return ok


CLEAN = {
    "README.md": ("# demo\n"
                  "See src/core/a.cpp, docs/design.md and https://example.org/a/../b/c.html.\n"
                  "Headers come from /usr/include/fmt/core.h; logs go to /tmp/demo/log and /dev/null.\n"
                  "0.5 µs/node, 1.1 KB/node, conv 7x7/2, a ratio (a)/2, and.../x as prose.\n"
                  "Meson names sources from the build folder: `../src/core/a.cpp`, `../../src/core/a.cpp`.\n"
                  "The docs link back with [the README](../README.md) from docs/.\n"),
    # (the include is fine in that tree, not from this file's folder)
    "src/core/a.cpp": '#include "../detail/b.hpp"\n#include "c.hpp"\nconst char* s = "..";\n',  # check-paths: allow
    "src/core/c.hpp": "#pragma once\n",
    "src/detail/b.hpp": "#pragma once\n",
    "docs/design.md": "[back](../README.md)\n",
    "tests/meson.build": "inc = include_directories('.', '../src')\n",
    "tools/run": ('#!/usr/bin/env bash\nroot=$(cd "$(dirname "$0")/.." && pwd)\n'
                  'grep x "$builddir"/meson-logs/testlog.json /proc/self/status\n'
                  'ls /nonexistent-dir/zoo.txt\n'),
}


def main():
    check, root = sys.argv[1], sys.argv[2]
    results = []
    code, out = run(check, root)
    results.append(expect("this tree names no path outside itself", code, out, 0, "no path outside the repository"))

    code, out = run(check, tree(CLEAN))
    results.append(expect("a tree whose paths stay inside passes", code, out, 0, "no path outside the repository"))

    bad = dict(CLEAN)
    bad["include/demo/models.hpp"] = ("#pragma once\n/// \\file\n"
                                      "/// The models of ../elsewhere/models.py, in C++.\n")  # check-paths: allow
    code, out = run(check, tree(bad))
    results.append(expect("a path climbing above the root from a deep header fails", code, out, 1,
                          "include/demo/models.hpp:3: ../elsewhere/models.py (climbs above the repository's root)",  # check-paths: allow
                          "1 path(s) outside the repository"))

    bad = dict(CLEAN)
    bad["README.md"] = CLEAN["README.md"] + "Figures from ../../bench/x.txt.\n"  # check-paths: allow
    code, out = run(check, tree(bad))
    results.append(expect("a ../../ path from the root fails", code, out, 1,
                          "README.md:7: ../../bench/x.txt (climbs"))  # check-paths: allow

    bad = dict(CLEAN)
    bad["tools/bench"] = ('import os\nROOT = "."\n'
                          'DEFAULT = os.path.join(ROOT, "..", "elsewhere", "data")\n')  # check-paths: allow
    code, out = run(check, tree(bad))
    results.append(expect("a path joined from '..' and parts fails", code, out, 1,
                          'tools/bench:3: ../elsewhere/data (joined from "..", "elsewhere", "data")'))  # check-paths: allow

    for line, path in [('DATA = "/work/data/x.bin"', "/work/data/x.bin"),  # check-paths: allow
                       ("cache = '/root/.cache/symtrace'", "/root/.cache/symtrace"),  # check-paths: allow
                       ("see /home/someone/model.pt", "/home/someone/model.pt"),  # check-paths: allow
                       ("see ~/models/resnet.pt", "~/models/resnet.pt")]:  # check-paths: allow
        bad = dict(CLEAN)
        bad["tools/fetch.py"] = "# fetches the data\n" + line + "\n"
        code, out = run(check, tree(bad))
        results.append(expect(f"the absolute path {path} fails", code, out, 1, f"tools/fetch.py:2: {path} ("))

    # Only tracked text files count: an untracked file and a binary one are not read.
    code, out = run(check, tree({**CLEAN, "data/blob.bin": b"\0/work/x/y\0"},  # check-paths: allow
                                untracked={"scratch.txt": "/work/scratch/notes\n"}))  # check-paths: allow
    results.append(expect("untracked and binary files are not read", code, out, 0, "no path outside the repository"))

    # Without git (an unpacked archive), every file under the root counts.
    bad = dict(CLEAN)
    bad["docs/notes.md"] = "one\nsee /work/main/x\n"  # check-paths: allow
    code, out = run(check, tree(bad, git=False))
    results.append(expect("a tree without git is read file by file", code, out, 1, "docs/notes.md:2: /work/main/x"))  # check-paths: allow
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
