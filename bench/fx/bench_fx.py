#!/usr/bin/python3
"""Times torch.fx on the models of models.py: the reference figures symtrace is measured against.

Two kinds of trace are timed on each model:
  fx_full   torch.fx.symbolic_trace(model): the graph, then a GraphModule with generated code
  fx_graph  torch.fx.Tracer().trace(model): the graph only, the fair comparison for a tracer
            that generates no code (what `tools/bench --vs-fx` compares symtrace with)

For each model and kind: --warmup untimed calls, then --runs timed calls (time.perf_counter),
their median, min and max, the node count (placeholders and output included), nodes/s and
µs/node; the tracemalloc peak of one more call; and, unless --no-rss, the peak-RSS growth of a
first (cold) and a second (warm) call in a fresh process, and the RSS the warm result holds.
A model fx cannot trace (a data-dependent branch) records the exception's type and message,
and its time is the time to the failure.

  /usr/bin/python3 bench/fx/bench_fx.py --models resnet50,vit_b16 --runs 7 --json fx.json
  /usr/bin/python3 bench/fx/bench_fx.py --patch-namespace --models deep_mlp_10000 --no-rss

torch 1.13 names the k-th node of a kind after probing k names (quadratic on models with
thousands of `add`s); --patch-namespace gives fx the linear naming of later torch releases,
with the same names, so large models are compared on tracing rather than on naming.
"""

import argparse
import ctypes
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import tracemalloc

import torch
import torch.fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import models  # noqa: E402  (bench/fx/models.py, beside this file)

KINDS = ("fx_full", "fx_graph")


def trace(kind, model):
    """One trace of `model`: (graph, None), or (None, the exception fx raised)."""
    try:
        if kind == "fx_full":
            return torch.fx.symbolic_trace(model).graph, None
        if kind == "fx_graph":
            return torch.fx.Tracer().trace(model), None
    except Exception as error:  # noqa: BLE001  whatever fx raises is a result
        return None, error
    raise ValueError(f"unknown kind '{kind}' (known: {', '.join(KINDS)})")


def use_linear_naming():
    """Makes fx's name allocator remember, per base name, the last suffix it handed out, and
    start its search there instead of at 0. torch 1.13 probes `add`, `add_1`, ... `add_k`
    for the k-th `add`; later releases keep such a count. A fresh graph gets the same names."""
    from torch.fx.graph import _Namespace

    def create_name(self, candidate, obj):
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        last = self.__dict__.setdefault("_last_suffix", {})
        candidate = self._illegal_char_regex.sub("_", candidate)
        if candidate[0].isdigit():
            candidate = "_" + candidate
        match = self._name_suffix_regex.match(candidate)
        base, suffix = (candidate, 0) if match is None else (match.group(1), int(match.group(2)))
        if suffix == 0:
            suffix = last.get(base, 0)
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            suffix += 1
            candidate = f"{base}_{suffix}"
        last[base] = max(last.get(base, 0), suffix)
        self._used_names.setdefault(candidate, 0)
        if obj is None:
            self._unassociated_names.add(candidate)
        else:
            self._obj_to_name[obj] = candidate
        return candidate

    _Namespace.create_name = create_name


def time_kind(model, kind, runs, warmup, tracemalloc_max_s):
    """The figures of one kind of trace on one model (see the module's docstring)."""
    start = time.perf_counter()
    for _ in range(warmup):
        trace(kind, model)
    if warmup and (time.perf_counter() - start) / warmup > 10.0:
        runs = min(runs, 5)  # a model that takes over 10 s a trace gets at most 5 timed runs
    times = []
    nodes = None
    error = None
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        graph, error = trace(kind, model)
        times.append(time.perf_counter() - start)
        if graph is not None:
            nodes = len(graph.nodes)
        del graph  # freed before the next run starts
    median = statistics.median(times)
    result = {"median_s": median, "min_s": min(times), "max_s": max(times), "runs": runs, "warmup": warmup,
              "times_s": times}
    if error is None:
        result.update(failed=False, nodes=nodes, nodes_per_s=nodes / median, us_per_node=1e6 * median / nodes)
    else:
        result.update(failed=True, error_type=type(error).__name__, error_msg=str(error))
    # tracemalloc slows Python down several times over: slow models go without it
    result["tracemalloc_peak_mb"] = None
    if median <= tracemalloc_max_s:
        gc.collect()
        tracemalloc.start()
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        alive = [trace(kind, model)]  # the result stays alive until the peak is read
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        alive.clear()
        result["tracemalloc_peak_mb"] = (peak - before) / 2**20
    return result


def memory_mib():
    """This process's (resident set, peak resident set) in MiB, from /proc/self/status."""
    fields = dict(line.split(":", 1) for line in open("/proc/self/status"))
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def start_peak():
    """Hands freed heap back to the kernel and restarts the peak at the current resident set
    (writing 5 to /proc/self/clear_refs, Linux 4.0 and later); returns that resident set."""
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except OSError:
        pass
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return memory_mib()[0]


def rss_of(call):
    """(peak growth, growth still held while the result lives) of call(), in MiB, and its result."""
    before = start_peak()
    result = call()
    resident, peak = memory_mib()
    return peak - before, resident - before, result


def rss_child(name, kind):
    """In a fresh process: the memory of a first and a second trace, printed as one JSON line."""
    model = models.build(name)
    cold_peak, _, result = rss_of(lambda: trace(kind, model))
    del result
    warm_peak, warm_held, result = rss_of(lambda: trace(kind, model))
    print(json.dumps({"rss_peak_delta_mb_cold": cold_peak, "rss_peak_delta_mb_warm": warm_peak,
                      "rss_retained_mb_warm": warm_held}))


def rss_in_child(name, kind, linear_naming):
    command = [sys.executable, os.path.abspath(__file__), "--rss-child", name, kind]
    if linear_naming:
        command.append("--patch-namespace")
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(name, kind, r):
    """One line of the progress printed while the benchmark runs."""
    if r["failed"]:
        what = f"fails: {r['error_type']}: {r['error_msg'][:70]}"
    else:
        what = f"{r['nodes']:7,} nodes {r['us_per_node']:7.1f} µs/node"
    memory = "" if r["tracemalloc_peak_mb"] is None else f"  tracemalloc {r['tracemalloc_peak_mb']:.2f} MiB"
    if "rss_peak_delta_mb_cold" in r:
        memory += f"  rss cold/warm {r['rss_peak_delta_mb_cold']:.1f}/{r['rss_peak_delta_mb_warm']:.1f} MiB"
    return (f"{name:22} {kind:8} median {r['median_s'] * 1e3:9.2f} ms "
            f"[{r['min_s'] * 1e3:.2f}-{r['max_s'] * 1e3:.2f}]  {what}{memory}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(models.MODELS),
                        help="comma-separated names of models.py's MODELS, or deep_mlp_N (default: all)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="fx_full, fx_graph or both (the default)")
    parser.add_argument("--runs", type=int, default=7, help="timed calls per model and kind (median shown)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed calls before them")
    parser.add_argument("--no-rss", action="store_true", help="skip the resident-set figures (no child processes)")
    parser.add_argument("--json", metavar="FILE", help="also write every figure to FILE as JSON")
    parser.add_argument("--tracemalloc-max-s", type=float, default=2.0,
                        help="no tracemalloc pass for a model whose median is above this")
    parser.add_argument("--patch-namespace", action="store_true",
                        help="linear-time node naming, as in later torch releases (see use_linear_naming)")
    parser.add_argument("--rss-child", nargs=2, metavar=("MODEL", "KIND"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.patch_namespace:
        use_linear_naming()
    if args.rss_child:
        rss_child(*args.rss_child)
        return 0

    names = [n for n in args.models.split(",") if n]
    kinds = [k for k in args.kinds.split(",") if k]
    for kind in kinds:
        if kind not in KINDS:
            parser.error(f"unknown kind '{kind}' (known: {', '.join(KINDS)})")
    out = {"torch": torch.__version__, "python": sys.version.split()[0], "torch_threads": torch.get_num_threads(),
           "patch_namespace": args.patch_namespace, "results": {}}
    for name in names:
        try:
            model = models.build(name)
        except KeyError as error:
            parser.error(error.args[0])
        out["results"][name] = {}
        for kind in kinds:
            r = time_kind(model, kind, args.runs, args.warmup, args.tracemalloc_max_s)
            if not args.no_rss:
                r.update(rss_in_child(name, kind, args.patch_namespace))
            out["results"][name][kind] = r
            print(summary(name, kind, r), flush=True)
        del model
        gc.collect()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
