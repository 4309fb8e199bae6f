#!/usr/bin/env python3
"""Writes the elementwise benchmark kernel (y[i] = x[i] * 1.5 - 0.3 over N elements) by hand
unrolled: each iteration of a range for over N/U handles U elements, either strided (i, i + N/U,
..., the U loads first) or interleaved (load, compute, store per element). These measure what a
codegen unroll could reach on a GPU: `vulkan_bench --kernel FILE` (docs/performance.md)."""
import argparse
import os


def kernel(name, n, unroll, interleaved):
    q = n // unroll
    lines = [f"field x : f32[{n}]", f"field y : f32[{n}]", f'kernel "{name}" {{', "  <i32> $0 = const 0",
             f"  <i32> $1 = const {q}", "  <f32> $2 = const 1.5", "  <f32> $3 = const -0.3",
             "  $4 : for in range($0, $1) block_dim=adaptive {", "    <i32> $5 = loop $4 index 0"]
    nid = 6

    def emit(text):
        nonlocal nid
        lines.append(f"    {text.format(n=nid)}")
        nid += 1
        return nid - 1

    indices = []
    for u in range(unroll):
        c = emit(f"<i32> ${{n}} = const {u * q}")
        indices.append(emit(f"<i32> ${{n}} = add $5 ${c}"))

    def load(i):
        p = emit(f"<*f32> ${{n}} = global ptr [x], index [${i}] activate=true")
        return emit(f"<f32> ${{n}} = global load ${p}")

    def store(i, v):
        a = emit(f"<f32> ${{n}} = mul ${v} $2")
        b = emit(f"<f32> ${{n}} = add ${a} $3")
        p = emit(f"<*f32> ${{n}} = global ptr [y], index [${i}] activate=true")
        emit(f"${{n}} : global store [${p} <- ${b}]")

    if interleaved:
        for i in indices:
            store(i, load(i))
    else:
        values = [load(i) for i in indices]
        for i, v in zip(indices, values):
            store(i, v)
    return "\n".join(lines + ["  }", "}"]) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    variants = [("u1", 1, False), ("u2_strided", 2, False), ("u4_strided", 4, False), ("u8_strided", 8, False),
                ("u4_interleaved", 4, True)]
    for name, unroll, interleaved in variants:
        with open(os.path.join(args.out, name + ".chi"), "w") as f:
            f.write(kernel(name, args.size, unroll, interleaved))


if __name__ == "__main__":
    main()
