#!/usr/bin/env python3
"""Growth of each pass's work with kernel size, counted rather than timed.

Runs a benchmark under callgrind at each size, counting only inside the passes, and prints per
pass the instructions executed and the reads that miss a simulated last-level cache, per input
statement, with the growth factor from one size to the next. Instruction counts do not depend on
the machine's load, so a stage whose work grows faster than its input shows here exactly, where a
wall-clock ratio moves by +-30% from one run to the next; the simulated misses show how much of
the kernel each pass streams from memory once it no longer fits the cache.

  scripts/bench/growth.py autodiff --sizes 10000,100000        # each stage of reverse_ad
  scripts/bench/growth.py passes --sizes 100000,1000000        # simplify and dce
Options: --build DIR (default build), --llc-mib N (simulated last-level cache, default 32),
--json FILE (write the table). Needs valgrind (not a project dependency: a tool for engineers).
Slow: about 100x the benchmark's own time (a 1M-statement passes run takes ~5 minutes).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

PIPELINE = "pb::passes::run_pipeline(pb::ir::Kernel&, pb::passes::Pipeline const&, pb::passes::RunOptions const&)"
PASS_FUNCTIONS = {
    "dce": "pb::passes::eliminate_dead_code(pb::ir::Kernel&)",
    "simplify": "pb::passes::simplify(pb::ir::Kernel&, long)",
}


def pass_name(camel):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", camel).lower()


def annotate(out_file):
    """Inclusive event counts per function from a callgrind output file."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out_file],
                          capture_output=True, text=True, check=True).stdout
    events, rows = None, {}
    for line in text.splitlines():
        if line.startswith("Events shown:"):
            events = line.split(":", 1)[1].split()
            continue
        if not events or not re.match(r"^\s*[\d,.]+ ", line):
            continue
        fields = re.sub(r" \(\s*[\d.]+%\)", "", line).split()
        values = fields[:len(events)]
        name = " ".join(fields[len(events):])
        name = re.sub(r"^\S*?:", "", name, count=1)  # file: prefix
        name = re.sub(r" \[[^\]]*\]$", "", name)  # [object]
        rows[name] = {e: int(v.replace(",", "")) if v != "." else 0 for e, v in zip(events, values)}
    return rows


def measure(bench, size, build, llc_mib, tmp):
    out = os.path.join(tmp, f"{bench}.{size}.out")
    program = os.path.join(build, "tests", "bench", f"{bench}_bench")
    toggles = [PIPELINE] if bench == "autodiff" else list(PASS_FUNCTIONS.values())
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--cache-sim=yes",
           "--D1=65536,8,64", f"--LL={llc_mib << 20},16,64", f"--callgrind-out-file={out}"]
    cmd += [f"--toggle-collect={t}" for t in toggles]
    cmd += [program, "--sizes", str(size), "--repeat", "1", "--out", os.path.join(tmp, "bench.json")]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(os.path.join(tmp, "bench.json")) as f:
        results = json.load(f)["results"]
    statements = sum(r.get("forward_statements", r.get("statements", 0)) for r in results)
    rows = annotate(out)
    stages = {}
    if bench == "autodiff":
        for name, ev in rows.items():
            m = re.match(r"pb::passes::(\w+)Pass::run\(", name)
            if m:
                stages[pass_name(m.group(1))] = ev
        stages["(whole pipeline)"] = rows[PIPELINE]
    else:
        for label, fn in PASS_FUNCTIONS.items():
            stages[label] = rows[fn]
    return statements, stages


def short(n):
    return f"{n // 1000000}M" if n >= 1000000 and n % 1000000 == 0 else f"{n // 1000}K" if n % 1000 == 0 else str(n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench", choices=["autodiff", "passes"])
    ap.add_argument("--sizes", default=None)
    ap.add_argument("--build", default="build")
    ap.add_argument("--llc-mib", type=int, default=32)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("growth.py: valgrind is not installed (apt-get install valgrind)")
    sizes = [int(s) for s in (a.sizes or ("10000,100000" if a.bench == "autodiff" else "100000,1000000")).split(",")]
    table = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            print(f"measuring {a.bench} at {n} statements...", file=sys.stderr)
            table[n] = measure(a.bench, n, a.build, a.llc_mib, tmp)
    order = list(table[sizes[0]][1].keys())
    order.sort(key=lambda s: (s.startswith("("), s))
    print("statements: " + ", ".join(f"{short(n)}: {table[n][0]}" for n in sizes))
    head = f"{'stage':32}" + "".join(f"{'Ir/stmt @' + short(n):>16}{'LLmiss/stmt':>13}" for n in sizes)
    # Growth of the work per statement between consecutive sizes: 1.00 is linear.
    head += "".join(f"{'per-stmt ' + short(lo) + '->' + short(hi):>20}" for lo, hi in zip(sizes, sizes[1:]))
    print(head)
    for stage in order:
        line = f"{stage:32}"
        for n in sizes:
            stmts, stages = table[n]
            ev = stages.get(stage, {})
            line += f"{ev.get('Ir', 0) / stmts:16.1f}{ev.get('DLmr', 0) / stmts:13.3f}"
        for lo, hi in zip(sizes, sizes[1:]):
            a_ir = table[lo][1].get(stage, {}).get("Ir", 0) / table[lo][0]
            b_ir = table[hi][1].get(stage, {}).get("Ir", 0) / table[hi][0]
            line += f"{(b_ir / a_ir if a_ir else float('nan')):20.3f}"
        print(line)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({str(n): {"statements": s, "stages": st} for n, (s, st) in table.items()}, f, indent=1)


if __name__ == "__main__":
    main()
