#!/usr/bin/env python3
"""Counted work of reverse_ad per statement against the nesting depth of ifs.

Generates kernels of about --statements input statements made of chains of D nested ifs on one
local (each level: load, compare, if { sin, add, store }), one kernel per depth, runs
`passbench replay --passes=reverse_ad` on each under callgrind, counting only inside the pass
manager, and prints per pass the instructions per input statement at each depth and the ratio of
the deepest to the shallowest. The work per statement should not grow with depth.

  scripts/bench/nested_ifs.py --depths 10,50,200 --json out.json
Needs valgrind (a tool for engineers, not a project dependency). About 30 s per depth.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import growth  # noqa: E402  (annotate, pass_name, PIPELINE)
import re  # noqa: E402


def kernel(depth, statements):
    lines, n = [], 0

    def stmt(d, text):
        nonlocal n
        n += 1
        lines.append("  " * d + text.replace("@", f"${n}"))
        return f"${n}"

    zero = stmt(1, "<i32> @ = const 0")
    half = stmt(1, "<f32> @ = const 0.5")
    count = stmt(1, "<i32> @ = const 64")
    loop = stmt(1, f"@ : for in range({zero}, {count}) block_dim=adaptive {{")
    i = stmt(2, f"<i32> @ = loop {loop} index 0")
    px = stmt(2, f"<*f32> @ = global ptr [x], index [{i}] activate=true")
    py = stmt(2, f"<*f32> @ = global ptr [y], index [{i}] activate=true")
    x = stmt(2, f"<f32> @ = global load {px}")
    a = stmt(2, "<*f32> @ = alloca")
    stmt(2, f"<f32> @ : local store [{a} <- {x}]")
    for _ in range(max(1, statements // (6 * depth))):
        for d in range(depth):
            v = stmt(2 + d, f"<f32> @ = local load [{a}]")
            c = stmt(2 + d, f"<u1> @ = cmp_lt {v} {half}")
            stmt(2 + d, f"@ : if {c} {{")
            s = stmt(3 + d, f"<f32> @ = sin {v}")
            t = stmt(3 + d, f"<f32> @ = add {s} {v}")
            stmt(3 + d, f"<f32> @ : local store [{a} <- {t}]")
        for d in reversed(range(depth)):
            lines.append("  " * (2 + d) + "}")
    r = stmt(2, f"<f32> @ = local load [{a}]")
    stmt(2, f"<f32> @ = atomic add({py}, {r})")
    lines.append("  }")
    head = ["field x : f32[64] grad x_grad", "field y : f32[64] grad y_grad", "kernel {"]
    return "\n".join(head + lines + ["}"]) + "\n", n


def measure(passbench, depth, statements, tmp):
    text, n = kernel(depth, statements)
    src = os.path.join(tmp, f"ifs{depth}.chi")
    with open(src, "w") as f:
        f.write(text)
    out = os.path.join(tmp, f"ifs{depth}.out")
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", f"--toggle-collect={growth.PIPELINE}",
           f"--callgrind-out-file={out}", passbench, "replay", src, "--passes=reverse_ad", "-o", os.devnull]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    stages = {}
    for name, ev in growth.annotate(out).items():
        m = re.match(r"pb::passes::(\w+)Pass::run\(", name)
        if m:
            stages[growth.pass_name(m.group(1))] = ev["Ir"]
        if name == growth.PIPELINE:
            stages["(whole pipeline)"] = ev["Ir"]
    return n, stages


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--passbench", default="build/workbench/passbench")
    ap.add_argument("--depths", default="10,50,200")
    ap.add_argument("--statements", type=int, default=2400)
    ap.add_argument("--json")
    a = ap.parse_args()
    depths = [int(d) for d in a.depths.split(",")]
    table = {}
    with tempfile.TemporaryDirectory() as tmp:
        for d in depths:
            print(f"measuring depth {d}...", file=sys.stderr)
            table[d] = measure(a.passbench, d, a.statements, tmp)
    stages = sorted(table[depths[0]][1], key=lambda s: (s.startswith("("), s))
    print("input statements: " + ", ".join(f"depth {d}: {table[d][0]}" for d in depths))
    print(f"{'stage':32}" + "".join(f"{'Ir/stmt @' + str(d):>16}" for d in depths) +
          f"{'@' + str(depths[-1]) + '/@' + str(depths[0]):>12}")
    for s in stages:
        per = [table[d][1].get(s, 0) / table[d][0] for d in depths]
        print(f"{s:32}" + "".join(f"{p:16.1f}" for p in per) + f"{(per[-1] / per[0] if per[0] else 0):12.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({str(d): {"statements": n, "Ir": st} for d, (n, st) in table.items()}, f, indent=1)


if __name__ == "__main__":
    main()
