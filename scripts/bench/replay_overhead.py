#!/usr/bin/env python3
"""What replay spends around the passes: `passbench replay --passes=PIPELINE --time-passes`.

Generates kernels of about --statements input statements in the shapes of cpu_compile.py, runs
replay on each --repeat times and prints, per shape, the medians and [min, max] of the passes'
own time (the sum of their rows), the pass manager's row ("(verify)": verification and IR
snapshots), parsing, printing and the total, and total / passes. With --vs OTHER_PASSBENCH the
two binaries alternate run by run, side by side in one run.

  scripts/bench/replay_overhead.py --shapes blocks,straight,ifs --statements 100000 --vs old/passbench
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpu_compile  # noqa: E402  (kernel shapes)

ROW = re.compile(r"^\s+([\d.]+)\s+[\d.]+%\s+(?:\d+\s+\d+\s+)?(\S.*)$")


def run_once(passbench, path, pipeline, extra):
    cmd = [passbench, "replay", path, f"--passes={pipeline}", "--time-passes", "-o", os.devnull] + extra
    err = subprocess.run(cmd, capture_output=True, text=True, check=True).stderr
    total = float(re.search(r"Total: ([\d.]+) ms", err).group(1))
    out = {"total": total, "passes": 0.0, "manager": 0.0, "parse": 0.0, "print": 0.0}
    for line in err.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        ms, name = float(m.group(1)), m.group(2).strip()
        if name == "(parse the input)":
            out["parse"] = ms
        elif name == "(print the result)":
            out["print"] = ms
        elif name.startswith("(verify the input"):
            out["parse"] += ms
        elif name.startswith("("):
            out["manager"] += ms  # "(verify)", "(verify, IR snapshots)", older spellings
        else:
            out["passes"] += ms
    return out


def spread(values):
    return f"{statistics.median(values):8.1f} [{min(values):.1f}, {max(values):.1f}]"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passbench", default="build/workbench/passbench")
    ap.add_argument("--vs", help="a second passbench, run alternately with the first")
    ap.add_argument("--shapes", default="blocks,straight,ifs")
    ap.add_argument("--statements", type=int, default=100000)
    ap.add_argument("--pipeline", default="reverse_ad")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--extra", default="", help="more replay arguments, space-separated")
    a = ap.parse_args()
    binaries = [a.passbench] + ([a.vs] if a.vs else [])
    extra = a.extra.split()
    print(f"{'shape':10}{'binary':28}{'passes ms':>24}{'(verify) ms':>24}{'total ms':>24}{'total/passes':>14}")
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes.split(","):
            path = os.path.join(tmp, f"{shape}.chi")
            with open(path, "w") as f:
                f.write(cpu_compile.kernel(shape, a.statements, 64))
            runs = {b: [] for b in binaries}
            for _ in range(a.repeat):
                for b in binaries:
                    runs[b].append(run_once(b, path, a.pipeline, extra))
            for b in binaries:
                r = runs[b]
                ratio = statistics.median(x["total"] / x["passes"] for x in r)
                print(f"{shape:10}{b[-28:]:28}{spread([x['passes'] for x in r]):>24}"
                      f"{spread([x['manager'] for x in r]):>24}{spread([x['total'] for x in r]):>24}{ratio:14.2f}")


if __name__ == "__main__":
    main()
