#!/usr/bin/env python3
"""Compile time of the LLVM CPU backend against kernel size, per kernel shape.

Generates kernels of about S input statements in five shapes, runs each through
`passbench run --backend=cpu --time` (forward, and `--grad` for the reverse kernel), and prints
per shape, mode and size the compile and kernel time (median and range of --repeat runs) with the
compile time per input statement. With --parts N,M,... each size runs at each part size
(`--part-statements`, 0: one function per task), side by side in one run. With --callgrind,
each case is also run once under valgrind's callgrind and its instructions per input statement are
reported: counted work, which the machine's load does not change (slow: about 50x).

  scripts/bench/cpu_compile.py --sizes 1000,10000,100000 --parts 500,0 --json out.json
Shapes: blocks (per iteration, K blocks of a local carried through a loop of sin/mul/add: stacks in
reverse), straight (one chain of sin/mul/add), ifs (chains of 20 nested ifs on a local), loops (K blocks of a
doubly nested loop accumulating into a local), tasks (K top-level loops, one task each). Every
kernel loops over --iterations elements, so kernel time is measured too.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


IF_DEPTH = 20  # the ifs shape: chains of ifs nested this deep, one after another


class Gen:
    def __init__(self):
        self.lines, self.n = [], 0

    def stmt(self, depth, text):
        self.n += 1
        self.lines.append("  " * depth + text.replace("@", f"${self.n}"))
        return f"${self.n}"

    def line(self, depth, text):
        self.lines.append("  " * depth + text)


def header(iterations, extra=""):
    return [f"field x : f32[{iterations}] grad x_grad", f"field y : f32[{iterations}] grad y_grad" + extra]


def element_loop(g, zero, count):
    """Opens `for i in range(count)` at depth 1; returns i and the pointers to x[i] and y[i]."""
    loop = g.stmt(1, f"@ : for in range({zero}, {count}) block_dim=adaptive {{")
    i = g.stmt(2, f"<i32> @ = loop {loop} index 0")
    px = g.stmt(2, f"<*f32> @ = global ptr [x], index [{i}] activate=true")
    py = g.stmt(2, f"<*f32> @ = global ptr [y], index [{i}] activate=true")
    return i, px, py


def kernel(shape, statements, iterations):
    g = Gen()
    zero = g.stmt(1, "<i32> @ = const 0")
    four = g.stmt(1, "<i32> @ = const 4")
    half = g.stmt(1, "<f32> @ = const 0.5")
    count = g.stmt(1, f"<i32> @ = const {iterations}")
    if shape == "tasks":
        blocks = max(1, statements // 6)
        for _ in range(blocks):
            _, px, py = element_loop(g, zero, count)
            v = g.stmt(2, f"<f32> @ = global load {px}")
            s = g.stmt(2, f"<f32> @ = sin {v}")
            g.stmt(2, f"<f32> @ = atomic add({py}, {s})")
            g.line(1, "}")
        return "\n".join(header(iterations) + ["kernel {"] + g.lines + ["}"]) + "\n"
    _, px, py = element_loop(g, zero, count)
    x = g.stmt(2, f"<f32> @ = global load {px}")
    if shape == "blocks":
        for _ in range(max(1, statements // 12)):
            a = g.stmt(2, "<*f32> @ = alloca")
            g.stmt(2, f"<f32> @ : local store [{a} <- {x}]")
            inner = g.stmt(2, f"@ : for in range({zero}, {four}) block_dim=adaptive {{")
            v = g.stmt(3, f"<f32> @ = local load [{a}]")
            s = g.stmt(3, f"<f32> @ = sin {v}")
            m = g.stmt(3, f"<f32> @ = mul {s} {half}")
            t = g.stmt(3, f"<f32> @ = add {m} {v}")
            g.stmt(3, f"<f32> @ : local store [{a} <- {t}]")
            g.line(2, "}")
            r = g.stmt(2, f"<f32> @ = local load [{a}]")
            g.stmt(2, f"<f32> @ = atomic add({py}, {r})")
    elif shape == "straight":
        v = x
        for _ in range(max(1, statements // 3)):
            s = g.stmt(2, f"<f32> @ = sin {v}")
            m = g.stmt(2, f"<f32> @ = mul {s} {half}")
            v = g.stmt(2, f"<f32> @ = add {m} {v}")
        g.stmt(2, f"<f32> @ = atomic add({py}, {v})")
    elif shape == "ifs":
        a = g.stmt(2, "<*f32> @ = alloca")
        g.stmt(2, f"<f32> @ : local store [{a} <- {x}]")
        for _ in range(max(1, statements // (7 * IF_DEPTH))):
            for d in range(IF_DEPTH):
                v = g.stmt(2 + d, f"<f32> @ = local load [{a}]")
                c = g.stmt(2 + d, f"<u1> @ = cmp_lt {v} {half}")
                g.stmt(2 + d, f"@ : if {c} {{")
                s = g.stmt(3 + d, f"<f32> @ = sin {v}")
                t = g.stmt(3 + d, f"<f32> @ = add {s} {v}")
                g.stmt(3 + d, f"<f32> @ : local store [{a} <- {t}]")
            for d in reversed(range(IF_DEPTH)):
                g.line(2 + d, "}")
        r = g.stmt(2, f"<f32> @ = local load [{a}]")
        g.stmt(2, f"<f32> @ = atomic add({py}, {r})")
    elif shape == "loops":
        for _ in range(max(1, statements // 11)):
            a = g.stmt(2, "<*f32> @ = alloca")
            outer = g.stmt(2, f"@ : for in range({zero}, {four}) block_dim=adaptive {{")
            j = g.stmt(3, f"<i32> @ = loop {outer} index 0")
            inner = g.stmt(3, f"@ : for in range({zero}, {j}) block_dim=adaptive {{")
            v = g.stmt(4, f"<f32> @ = local load [{a}]")
            m = g.stmt(4, f"<f32> @ = mul {x} {half}")
            t = g.stmt(4, f"<f32> @ = add {m} {v}")
            g.stmt(4, f"<f32> @ : local store [{a} <- {t}]")
            g.line(3, "}")
            g.line(2, "}")
            r = g.stmt(2, f"<f32> @ = local load [{a}]")
            g.stmt(2, f"<f32> @ = atomic add({py}, {r})")
    else:
        raise SystemExit(f"unknown shape {shape}")
    g.line(1, "}")
    return "\n".join(header(iterations) + ["kernel {"] + g.lines + ["}"]) + "\n"


TIME = re.compile(r"kernel( \(reverse\))? on cpu: compile ([\d.]+) ms, transfer [\d.]+ ms, kernel ([\d.]+) ms")


def run_once(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
    times = {}
    for m in TIME.finditer(out.stderr):
        times["reverse" if m.group(1) else "forward"] = (float(m.group(2)), float(m.group(3)))
    return times


def instructions(cmd, tmp):
    out = os.path.join(tmp, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                   capture_output=True, check=True)
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return 0


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--passbench", default="build/workbench/passbench")
    ap.add_argument("--shapes", default="blocks,straight,ifs,loops,tasks")
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--parts", default="500,0", help="part sizes to run side by side (0: one function per task)")
    ap.add_argument("--modes", default="forward,reverse")
    ap.add_argument("--iterations", type=int, default=4096)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in a.shapes.split(","):
            for size in map(int, a.sizes.split(",")):
                text = kernel(shape, size, a.iterations)
                path = os.path.join(tmp, f"{shape}_{size}.chi")
                with open(path, "w") as f:
                    f.write(text)
                statements = sum(1 for l in text.splitlines() if re.match(r"\s*(<[^>]*> )?\$\d+ [=:]", l))
                for mode in a.modes.split(","):
                    cmds = {}
                    for parts in map(int, a.parts.split(",")):
                        cmds[parts] = [a.passbench, "run", path, "--backend=cpu", "--time",
                                       f"--part-statements={parts}"]
                        if mode == "reverse":
                            cmds[parts] += ["--grad", "--seed-grad", "y=1"]
                    # The part sizes alternate within each repetition: side by side under the same load.
                    samples = {parts: [] for parts in cmds}
                    for _ in range(a.repeat):
                        for parts, cmd in cmds.items():
                            samples[parts].append(run_once(cmd)[mode])
                    for parts, cmd in cmds.items():
                        row = {"shape": shape, "mode": mode, "statements": statements, "part_statements": parts,
                               "compile_ms": spread([s[0] for s in samples[parts]]),
                               "kernel_ms": spread([s[1] for s in samples[parts]])}
                        if a.callgrind:
                            row["instructions"] = instructions(cmd, tmp)
                        rows.append(row)
                        c, k = row["compile_ms"], row["kernel_ms"]
                        extra = f"  {row['instructions'] / statements:,.0f} instr/stmt" if a.callgrind else ""
                        print(f"{shape:9} {mode:8} {statements:7} stmts parts={parts:<5} compile {c['median']:9.1f} ms "
                              f"[{c['min']:.1f}, {c['max']:.1f}]  {c['median'] * 1000 / statements:7.1f} us/stmt  "
                              f"kernel {k['median']:8.3f} ms [{k['min']:.3f}, {k['max']:.3f}]{extra}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
