"""Minimize a failing kernel by deleting / bypassing statements while it still fails.

    python3 minimize.py K.chi IN.json OUT.chi --mode fail [--passes P]
    modes:
      fail        gradcheck mismatch (finite values) at eps 1e-6 and 1e-4 on the same kind of element
      nostack     use_stack=false gradients differ from the default pipeline's (f64)
      invalid     the pipeline (--passes) says "verifier rejects"
      error:TEXT  gradcheck/run --grad output contains TEXT (for pass errors / crashes)
      diff:P2     run --grad --f64 gradients of --passes differ from those of pipeline P2
"""
import argparse
import math
import re
import sys

import pbrun
from chiir import Kernel, Stmt
from pbrun import run

LINE = re.compile(r"^(?:<(\S+)> )?\$(\d+) (=|:) (.*)$")


def parse(text):
    header, comments = [], []
    lines = text.splitlines()
    i = 0
    while not lines[i].startswith("kernel"):
        if lines[i].startswith("#"):
            comments.append(lines[i][2:])
        elif lines[i].strip():
            header.append(lines[i])
        i += 1
    i += 1
    byid = {}
    root = []
    stack = [(None, root)]
    for raw in lines[i:]:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line == "}":
            stack.pop()
            continue
        if line == "} else {":
            owner = stack[-1][0]
            stack.pop()
            blk = []
            owner.blocks.append(blk)
            stack.append((owner, blk))
            continue
        m = re.match(r"^\$(\d+) continue$", line)
        if m:
            s = Stmt(int(m.group(1)), None, "continue", "", [], None, "continue")
            stack[-1][1].append(s)
            byid[s.id] = s
            continue
        m = LINE.match(line)
        if not m:
            raise ValueError("cannot parse: " + line)
        ty, sid, sep, rest = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        opens = rest.endswith(" {")
        if opens:
            rest = rest[:-2]
        ops = []

        def rep(mm):
            ops.append(byid[int(mm.group(1))])
            return "{%d}" % (len(ops) - 1)
        txt = re.sub(r"\$(\d+)", rep, rest.replace("{", "{{").replace("}", "}}"))
        kind = rest.split(" ")[0]
        if rest.startswith("const"):
            kind = "const"
        s = Stmt(sid, ty, sep, txt, ops, [[]] if opens else None, kind)
        stack[-1][1].append(s)
        byid[sid] = s
        if opens:
            stack.append((s, s.blocks[0]))
    k = Kernel(header, root)
    k.comments = comments
    return k


def users(k):
    u = {}
    for s, _ in k.walk():
        for o in s.ops:
            u.setdefault(o.id, []).append(s)
    return u


def subtree_ids(s):
    out = {s.id}
    if s.blocks:
        for b in s.blocks:
            for t in b:
                out |= subtree_ids(t)
    return out


def mismatches(out):
    """{element: (analytic, numeric)} of the finite MISMATCH rows of a gradcheck table."""
    res = {}
    for name, (a, n, status) in pbrun.gradcheck_rows(out).items():
        if status != "MISMATCH":
            continue
        try:
            a, n = float(a), float(n)
        except ValueError:
            continue
        if math.isfinite(a) and math.isfinite(n):
            res[name] = (a, n)
    return res


def grads(kf, inf, passes):
    rc, out = run(["run", kf, "--grad", "--seed-grad", "y=1", "--inputs", inf, "--passes=" + passes, "--f64"])
    if rc != 0:
        return None, out
    return pbrun.gradients(out), out


def make_pred(mode, inf, passes, tmpf):
    def pred(text):
        with open(tmpf, "w") as f:
            f.write(text)
        rc, out = run(["verify", tmpf])
        if rc != 0:
            return False
        if mode == "fail":
            rc, out = run(["gradcheck", tmpf, "--loss", "y", "--inputs", inf, "--passes=" + passes])
            if rc != 1:
                return False
            m1 = mismatches(out)
            if not m1:
                return False
            rc, out = run(["gradcheck", tmpf, "--loss", "y", "--inputs", inf, "--passes=" + passes, "--eps", "1e-4"])
            m2 = mismatches(out)
            return bool(set(m1) & set(m2))
        if mode == "nan":
            rc, out = run(["gradcheck", tmpf, "--loss", "y", "--inputs", inf, "--passes=" + passes])
            for line in out.splitlines():
                m = ROW.match(line)
                if m and m.group(6) == "MISMATCH" and "nan" in m.group(2).lower():
                    try:
                        if math.isfinite(float(m.group(3))):
                            return True
                    except ValueError:
                        pass
            return False
        if mode == "nostack":
            ga, _ = grads(tmpf, inf, passes)
            gb, _ = grads(tmpf, inf, "reverse_ad{use_stack=false}")
            if ga is None or gb is None:
                return False
            # the default must still be right (gradcheck passes) so the no-stack side is the wrong one
            rc, out = run(["gradcheck", tmpf, "--loss", "y", "--inputs", inf, "--passes=" + passes])
            if rc != 0:
                return False
            for n in ga:
                for u, v in zip(ga[n], gb[n]):
                    if abs(u - v) > 1e-9 + 1e-7 * max(abs(u), abs(v)):
                        return True
            return False
        if mode == "nostack_invalid":
            rc, out = run(["gradcheck", tmpf, "--loss", "y", "--inputs", inf, "--passes=" + passes])
            if rc != 0:
                return False
            ga, _ = grads(tmpf, inf, passes)
            if not ga or not any(v for g in ga.values() for v in g):
                return False
            rc, out = run(["run", tmpf, "--grad", "--seed-grad", "y=1", "--inputs", inf,
                           "--passes=reverse_ad{use_stack=false}"])
            return "verifier rejects" in out
        if mode == "prec":
            # f32 kernel: analytic off at f32 precision (|a-n| > 1e-9 rel at eps 1e-6 and 1e-5) while the same
            # kernel with every f32 made f64 agrees (gradcheck claims both sides are computed in f64)
            tight = ["--rel", "1e-9", "--abs", "1e-11"]
            rc, out = run(["gradcheck", tmpf, "--loss", "y", "--inputs", inf, "--passes=" + passes] + tight)
            m1 = mismatches(out)
            if rc != 1 or not m1:
                return False
            rc, out = run(["gradcheck", tmpf, "--loss", "y", "--inputs", inf, "--passes=" + passes, "--eps", "1e-5"] + tight)
            m1 = set(m1) & set(mismatches(out))
            if not m1:
                return False
            with open(tmpf + ".64.chi", "w") as f:
                f.write(text.replace("f32", "f64"))
            rc, out = run(["gradcheck", tmpf + ".64.chi", "--loss", "y", "--inputs", inf, "--passes=" + passes] + tight)
            return rc == 0
        if mode.startswith("diff:"):
            # gradients of --passes differ from those of the pipeline after "diff:" (both must succeed)
            ga, _ = grads(tmpf, inf, passes)
            gb, _ = grads(tmpf, inf, mode[5:])
            if ga is None or gb is None:
                return False
            for n in ga:
                for u, v in zip(ga[n], gb.get(n, [])):
                    if u is None or v is None or math.isnan(u) or math.isnan(v):
                        continue
                    if abs(u - v) > 1e-9 + 1e-6 * max(abs(u), abs(v)):
                        return True
            return False
        if mode == "invalid":
            rc, out = run(["run", tmpf, "--grad", "--seed-grad", "y=1", "--inputs", inf, "--passes=" + passes])
            return "verifier rejects" in out
        if mode.startswith("error:"):
            needle = mode[6:]
            rc, out = run(["gradcheck", tmpf, "--loss", "y", "--inputs", inf, "--passes=" + passes])
            return needle in out
        raise ValueError(mode)
    return pred


CONSTS = {"f32": ["0.5", "1"], "f64": ["0.5", "1"], "i32": ["0", "1", "2"], "u1": ["true", "false"]}


def get_const(k, ty, val):
    for s in k.root:
        if s.kind == "const" and s.ty == ty and s.text == "const " + val:
            return s, False
    nid = max(t.id for t, _ in k.walk()) + 1
    s = Stmt(nid, ty, "=", "const " + val, [], None, "const")
    k.root.insert(0, s)
    return s, True


def minimize(k, pred, log=print):
    progress = True
    rounds = 0
    while progress:
        progress = False
        rounds += 1
        # 1. delete statements (largest first: containers) that nothing outside their subtree uses
        for s, blk in list(k.walk())[::-1]:
            if s not in blk:
                continue
            u = users(k)
            sub = subtree_ids(s)
            if any(x.id not in sub for i in sub for x in u.get(i, [])):
                continue
            pos = blk.index(s)
            blk.pop(pos)
            if pred(k.render()):
                progress = True
            else:
                blk.insert(pos, s)
        # 2. inline if branches / drop else
        for s, blk in list(k.walk()):
            if s.blocks is None or s.kind != "if" or s not in blk:
                continue
            for bi in range(len(s.blocks)):
                pos = blk.index(s)
                saved = list(blk)
                blk[pos:pos + 1] = s.blocks[bi]
                if pred(k.render()):
                    progress = True
                    break
                blk[:] = saved
            else:
                if len(s.blocks) == 2:
                    e = s.blocks.pop()
                    if pred(k.render()):
                        progress = True
                    else:
                        s.blocks.append(e)
        # 3. replace uses of a value by a constant or by one of its operands
        for s, blk in list(k.walk()):
            if s.ty is None or s.ty.startswith("*") or s.kind == "const" or s.sep != "=":
                continue
            u = users(k).get(s.id, [])
            if not u:
                continue
            cands = [o for o in s.ops if o.ty == s.ty]
            for val in CONSTS.get(s.ty, []):
                cands.append(("const", val))
            for c in cands:
                created = False
                if isinstance(c, tuple):
                    c, created = get_const(k, s.ty, c[1])
                saved = [(x, list(x.ops)) for x in u]
                for x in u:
                    x.ops = [c if o is s else o for o in x.ops]
                if pred(k.render()):
                    progress = True
                    break
                for x, ops in saved:
                    x.ops = ops
                if created:
                    k.root.remove(c)
        log("round %d: %d statements" % (rounds, k.count()))
    return k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernel")
    ap.add_argument("inputs")
    ap.add_argument("out")
    ap.add_argument("--mode", default="fail")
    ap.add_argument("--passes", default="reverse_ad")
    ap.add_argument("--pb", default=pbrun.PB, help="the passbench binary (default: the build's)")
    a = ap.parse_args()
    pbrun.set_binary(a.pb)
    k = parse(open(a.kernel).read())
    pred = make_pred(a.mode, a.inputs, a.passes, a.out + ".tmp.chi")
    if not pred(k.render()):
        print("predicate does not hold on the input kernel")
        sys.exit(1)
    k = minimize(k, pred, lambda m: print(m, file=sys.stderr))
    # drop unused constants
    u = users(k)
    k.root = [s for s in k.root if not (s.kind == "const" and s.id not in u)]
    assert pred(k.render())
    with open(a.out, "w") as f:
        f.write(k.render())
    import os
    os.remove(a.out + ".tmp.chi")
    print(k.render())


if __name__ == "__main__":
    main()
