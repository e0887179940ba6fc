#!/usr/bin/env python3
"""tools/check-layers on this tree (it must pass) and on small trees that break each rule (it
must fail, naming the file, the line and the rule). Usage: check_layers_test.py CHECK_LAYERS ROOT"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile


def run(check, root):
    p = subprocess.run([sys.executable, check, "--root", root], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def tree(files):
    root = tempfile.mkdtemp(prefix="check-layers-")
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return root


def expect(label, code, out, want_code, *wanted):
    ok = code == want_code and all(w in out for w in wanted)
    print(f"{'ok' if ok else 'FAILED'}: {label}")
    if not ok:
        print(f"  exit {code} (wanted {want_code}); output:\n{out}")
    return ok


def main():
    check, root = sys.argv[1], sys.argv[2]
    results = []
    code, out = run(check, root)
    results.append(expect("this tree has no violation", code, out, 0, "no violations"))

    clean = {
        "include/symtrace/core/tensor.hpp": "#pragma once\n",
        "include/symtrace/ops/op.hpp": '#pragma once\n#include "symtrace/core/tensor.hpp"\n',
        "src/ops/op.cpp": '#include "symtrace/ops/op.hpp"\n#include "kernel_util.hpp"\n',
        "src/ops/kernel_util.hpp": "#pragma once\n",
        "include/symtrace/observe/record_function.hpp": '#pragma once\n#include "symtrace/ops/op.hpp"\n',
    }
    code, out = run(check, tree(clean))
    results.append(expect("a tree that keeps the rules passes", code, out, 0, "no violations"))

    upward = dict(clean)
    upward["src/ops/dispatch.cpp"] = ('// #include "symtrace/observe/record_function.hpp" in a comment counts for nothing\n'
                                      '#include "symtrace/ops/op.hpp"\n'
                                      '#include "symtrace/observe/record_function.hpp"\n')
    code, out = run(check, tree(upward))
    results.append(expect("an include from ops up to observe fails", code, out, 1,
                          "src/ops/dispatch.cpp:3: layer 'ops' includes 'symtrace/observe/record_function.hpp' "
                          "(layer 'observe'); ops may include: core",
                          "observe <-> ops"))

    private = dict(clean)
    private["src/observe/tracer.cpp"] = '#include "ops/kernel_util.hpp"\n'
    code, out = run(check, tree(private))
    results.append(expect("a private header of src/ops used from observe fails", code, out, 1,
                          "src/observe/tracer.cpp:1", "src/ops/kernel_util.hpp"))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
