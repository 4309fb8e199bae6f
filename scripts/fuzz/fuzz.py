"""Fuzz driver: generate kernels, gradcheck them, compare pipelines, classify.

    python3 scripts/fuzz/fuzz.py --start 0 --count 1000 [--minutes 30] [--pb build/workbench/passbench]

Writes out/results.jsonl (one line per kernel) and keeps every non-PASS kernel under out/cases/.
"""
import argparse
import json
import math
import os
import random
import re
import sys
import time

import gen
import pbrun
from pbrun import run
from pbrun import gradcheck_rows as parse_rows

HERE = os.path.dirname(os.path.abspath(__file__))
OPTS = {}


def tofloat(s):
    try:
        return float(s)
    except ValueError:
        return float("nan")


def main_passes():
    ss = OPTS.get("stack_size")
    return "reverse_ad{ad_stack_size=%d}" % ss if ss else "reverse_ad"


def gradcheck(kf, inf, extra=()):
    extra = list(extra)
    if OPTS.get("stack_size") and not any(e.startswith("--passes=") for e in extra):
        extra.append("--passes=" + main_passes())
    if OPTS.get("prefix"):
        # a pipeline prefix (e.g. cleanup) before the AD pipeline
        if not any(e.startswith("--passes=") for e in extra):
            extra.append("--passes=reverse_ad")
        extra = [("--passes=" + OPTS["prefix"] + "," + e[9:]) if e.startswith("--passes=") else e for e in extra]
    return run(["gradcheck", kf, "--loss", OPTS.get("loss", "y"), "--inputs", inf] + extra)


def grads(kf, inf, passes, extra=()):
    if OPTS.get("prefix") and not passes.startswith(OPTS["prefix"]):
        passes = OPTS["prefix"] + "," + passes
    rc, out = run(["run", kf, "--grad", "--seed-grad", OPTS.get("loss", "y") + "=1", "--inputs", inf,
                   "--passes=" + passes] + list(extra))
    if rc != 0:
        return rc, out, None
    g = pbrun.gradients(out)
    return (rc, out, g) if g is not None else ("badjson", out, None)


def same_grads(a, b, rel=1e-9, abs_=1e-12):
    for n in a:
        for u, v in zip(a[n], b.get(n, [])):
            if u is None or v is None:
                if u != v:
                    return False, n
                continue
            if math.isnan(u) != math.isnan(v):
                return False, n
            if not math.isnan(u) and abs(u - v) > abs_ + rel * max(abs(u), abs(v)):
                return False, n
    return True, None


def is_crash(rc, out):
    if rc == "timeout":
        return True
    if isinstance(rc, int) and (rc < 0 or rc > 2):
        return True
    low = out.lower()
    return "internal error" in low or "assertion" in low or "segmentation" in low or "terminate called" in low


def agrees(ga, res, key, kf, inf, passes, extra, rel, abs_):
    """Gradients computed another way (pipeline, run option) against the main ones `ga`: returns
    ("crash" | "failed" | "diff" | "same", output); a comparison is recorded in res[key]."""
    rc, out, g = grads(kf, inf, passes, extra)
    if is_crash(rc, out):
        return "crash", out
    if g is None:
        return "failed", out
    ok, bad = same_grads(ga, g, rel=rel, abs_=abs_)
    res[key] = "same" if ok else "DIFF in " + bad
    return ("same" if ok else "diff"), out


FIXED_STACK_SIZES = (512, 4096, 65536)


def global_access_check(kf, inf, res):
    """The global data access rule both ways: a run with --check-global-access that finds a violation
    must not meet a static check_global_access that refuses nothing and reports no finding.
    Returns a bug class or None; records both verdicts in res."""
    rc, out = run(["replay", kf, "--passes=check_global_access", "--stats"])
    m = re.search(r"(\d+)\s+check_global_access\.findings", out)
    static = "refused" if rc != 0 else ("fine" if not m or m.group(1) == "0" else "findings")
    rcd, outd = run(["run", kf, "--inputs", inf, "--check-global-access"])
    dynamic = "violation" if rcd == 1 and "global data access rule" in outd else "fine"
    res["access"] = static + "/" + dynamic
    if is_crash(rc, out) or is_crash(rcd, outd):
        res["_out"] = out + "\n----\n" + outd
        return "CRASH"
    if dynamic == "violation" and static == "fine":
        res["_out"] = out + "\n----\n" + outd
        return "GLOBAL_ACCESS_MISSED"
    return None


def forward_checks(kf, inf, reverse_passes, res):
    """jvpcheck (every tangent of the loss array against f64 central differences) and adjointcheck
    (forward against reverse mode). Returns a bug class or None; records the verdicts in res."""
    rc, out = run(["jvpcheck", kf, "--out", OPTS.get("loss", "y"), "--inputs", inf])
    last = (out.strip().splitlines() or [""])[-1]
    res["jvp"] = last[:200]
    if is_crash(rc, out):
        res["_out"] = out
        return "FWD_CRASH"
    if rc == 2:
        res["_out"] = out
        return "FWD_ERROR"
    if rc == 1 and "MISMATCH" in out:
        res["_out"] = out
        return "FWD_FAIL"
    if rc == 1 and "nothing compared" not in out:
        res["_out"] = out
        return "FWD_RUNTIME_ERROR"
    rc, out = run(["adjointcheck", kf, "--inputs", inf, "--reverse-passes=" + reverse_passes, "--rel", "1e-8"])
    res["adj"] = (out.strip().splitlines() or [""])[-1][:200]
    if is_crash(rc, out):
        res["_out"] = out
        return "FWD_CRASH"
    if rc == 1 and "MISMATCH" in out:
        res["_out"] = out
        return "ADJOINT_DIFF"
    if rc != 0 and "nothing was checked" not in out:
        res["_out"] = out
        return "ADJOINT_ERROR"
    return None


def classify(kf, inf, meta, rnd):
    """Returns (class, detail dict)."""
    res = {}
    rcv, outv = run(["verify", kf])
    if rcv != 0:
        return "GEN_INVALID", res, outv
    rc, out = gradcheck(kf, inf)
    res["gc_rc"] = rc
    summ = [l for l in out.splitlines() if l.startswith("gradcheck:") or "error" in l.lower()]
    res["gc"] = summ[-1][:300] if summ else out[-300:]
    if is_crash(rc, out):
        return "CRASH", res, out
    if meta["reject"]:
        # A construct the kernel may not have is refused: exit 2, or exit 1 when it is a finding of
        # the global data access check (an error, as the verifier's).
        access_violation = rc == 1 and "pass 'check_global_access'" in out and "failed:" in out
        if rc == 2 or access_violation:
            if OPTS.get("global_access"):
                v = global_access_check(kf, inf, res)
                if v:
                    return v, res, res.pop("_out")
            return "REJECT_OK", res, out
        return "REJECT_MISSED", res, out
    stack_fixed = False
    if rc == 2 and "verifier rejects" in out:
        return "PASS_INVALID_IR", res, out
    if rc == 2:
        if "ad_stack_size" in out or "cannot be bounded" in out or "could not be bounded" in out:
            # documented: a stack size outside the size grammar; retry with a fixed size, larger
            # while the run overflows it (a bound read from a float variable can be large)
            for size in FIXED_STACK_SIZES:
                rc2, out2 = gradcheck(kf, inf, [f"--passes=reverse_ad{{ad_stack_size={size}}}"])
                if not (rc2 == 1 and "autodiff stack overflow" in out2):
                    break
            res["fixed_rc"] = rc2
            res["fixed_size"] = size
            res["gc"] = (res["gc"] + " || fixed: " + (out2.strip().splitlines() or [""])[-1])[:600]
            if is_crash(rc2, out2):
                return "CRASH", res, out2
            if rc2 == 2:
                return ("PASS_INVALID_IR" if "verifier rejects" in out2 else "PASS_ERROR"), res, out2
            rc, out = rc2, out2
            stack_fixed = True
        else:
            return "PASS_ERROR", res, out
    if rc == 1:
        rows = parse_rows(out)
        mism = {k: v for k, v in rows.items() if v[2] == "MISMATCH"}
        if not mism:
            return "RUNTIME_ERROR", res, out
        res["mismatch"] = mism
        # re-check at other eps: a real bug disagrees at every eps
        agree = True
        for eps in ("1e-4", "1e-7"):
            rcx, outx = gradcheck(kf, inf, ["--eps", eps] + ([f"--passes=reverse_ad{{ad_stack_size={res['fixed_size']}}}"] if stack_fixed else []))
            rx = parse_rows(outx)
            still = [k for k in mism if k in rx and rx[k][2] == "MISMATCH"]
            res["eps" + eps] = len(still)
            if not still:
                agree = False
        nan = any(math.isnan(tofloat(v[0])) or math.isnan(tofloat(v[1])) for v in mism.values())
        if nan:
            return "FAIL_NAN", res, out
        return ("FAIL" if agree else "FAIL_NOISE"), res, out
    cls = "PASS"
    m = re.search(r"(\d+) kink", res["gc"])
    res["kinks"] = int(m.group(1)) if m else 0
    # use_stack=false: either needs an autodiff stack, or equal gradients
    passes = f"reverse_ad{{ad_stack_size={res['fixed_size']}}}" if stack_fixed else main_passes()
    rca, outa, ga = grads(kf, inf, passes, ["--f64"])
    if is_crash(rca, outa):
        return "CRASH", res, outa
    if ga is None:
        res["grad_run"] = outa[-300:]
        return "RUN_GRAD_ERROR", res, outa
    rcb, outb, gb = grads(kf, inf, "reverse_ad{use_stack=false}", ["--f64"])
    if is_crash(rcb, outb):
        res["nostack"] = "crash"
        return "CRASH_NOSTACK", res, outb
    if gb is None:
        if rcb == 2 and "needs an autodiff stack" in outb:
            res["nostack"] = "needs_stack"
        else:
            res["nostack"] = "error: " + outb.strip().splitlines()[-1][:300] if outb.strip() else "error"
            if rcb == 2 and "verifier rejects" in outb:
                return "NOSTACK_INVALID_IR", res, outb
            if rcb == 2:
                cls = "NOSTACK_OTHER_ERROR"
            else:
                return "NOSTACK_RUNTIME_ERROR", res, outb
    else:
        ok, bad = same_grads(ga, gb, rel=2e-6, abs_=1e-10)
        res["nostack"] = "same" if ok else "DIFF in " + bad
        if not ok:
            return "NOSTACK_DIFF", res, outa + "\n----\n" + outb
    # shuffled iteration order must not change gradients
    if rnd.random() < 0.3:
        v, outs = agrees(ga, res, "shuffle", kf, inf, passes,
                         ["--f64", "--shuffle", "--seed", str(rnd.randint(1, 1000))], 1e-7, 1e-10)
        if v == "crash":
            return "CRASH", res, outs
        if v == "diff":
            return "SHUFFLE_DIFF", res, outa + "\n----\n" + outs
    # a fixed stack size must not change gradients (or fail with a clean overflow error)
    if rnd.random() < 0.4 and not stack_fixed and not OPTS.get("stack_size"):
        v, outf = agrees(ga, res, "fixed", kf, inf, "reverse_ad{ad_stack_size=%d}" % rnd.choice([8, 64]), ["--f64"],
                         1e-9, 1e-12)
        if v == "crash":
            return "CRASH", res, outf
        if v == "diff":
            return "FIXED_SIZE_DIFF", res, outa + "\n----\n" + outf
        if v == "failed":
            res["fixed"] = "error: " + (outf.strip().splitlines() or [""])[0][:200]
            if "overflow" not in outf:
                return "FIXED_SIZE_ERROR", res, outf
    if OPTS.get("global_access"):
        v = global_access_check(kf, inf, res)
        if v:
            return v, res, res.pop("_out")
    # forward mode: tangents against finite differences, and w.(Jv) against (J^T w).v
    if OPTS.get("forward"):
        v = forward_checks(kf, inf, passes, res)
        if v:
            return v, res, res.pop("_out")
    # a cleanup pipeline before AD must not change gradients
    if rnd.random() < 0.3 and not stack_fixed:
        v, outc = agrees(ga, res, "cleanup", kf, inf, "cleanup,reverse_ad", ["--f64"], 2e-6, 1e-10)
        if v == "crash":
            return "CRASH", res, outc
        if v == "diff":
            return "CLEANUP_DIFF", res, outa + "\n----\n" + outc
        if v == "failed":
            res["cleanup"] = "error: " + (outc.strip().splitlines() or [""])[-1][:200]
    return cls, res, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--minutes", type=float, default=1e9)
    ap.add_argument("--reject-rate", type=float, default=0.06)
    ap.add_argument("--out", default=os.path.join(HERE, "out"))
    ap.add_argument("--avoid-known", action="store_true", help="do not generate the shapes of bugs already found")
    ap.add_argument("--prefix", default="", help="passes to run before reverse_ad in every pipeline, e.g. cleanup")
    ap.add_argument("--pb", default=pbrun.PB)
    ap.add_argument("--fail-on-bug", action="store_true", help="exit 1 if any kernel lands in a bug class (CI smoke)")
    ap.add_argument("--ext", action="store_true", help="generator extensions: float mod, elif chains, if>for>chain, "
                    "bounds from float vars, select/min/max on carried values")
    ap.add_argument("--struct-rate", type=float, default=0.15)
    ap.add_argument("--stack-size", type=int, default=0, help="main pipeline reverse_ad{ad_stack_size=N}")
    ap.add_argument("--forward", action="store_true", help="also check forward mode on every passing kernel: "
                    "jvpcheck and the adjointcheck cross-check with reverse mode")
    ap.add_argument("--global-access", action="store_true", help="also check the global data access rule on every "
                    "passing kernel: a run that breaks it must not meet a static check that says fine")
    a = ap.parse_args()
    OPTS["ext"] = a.ext
    OPTS["struct_rate"] = a.struct_rate
    OPTS["stack_size"] = a.stack_size
    OPTS["avoid_known"] = a.avoid_known
    OPTS["prefix"] = a.prefix
    OPTS["forward"] = a.forward
    OPTS["global_access"] = a.global_access
    pbrun.set_binary(a.pb)
    os.makedirs(os.path.join(a.out, "cases"), exist_ok=True)
    tmp = os.path.join(a.out, "tmp")
    os.makedirs(tmp, exist_ok=True)
    t0 = time.time()
    counts = {}
    with open(os.path.join(a.out, "results.jsonl"), "a") as log:
        for seed in range(a.start, a.start + a.count):
            if time.time() - t0 > a.minutes * 60:
                break
            rnd = random.Random(seed * 7919 + 1)
            rej = rnd.choice(gen.REJECT_KINDS) if rnd.random() < a.reject_rate else None
            k, inp, meta = gen.generate(seed, rej, OPTS)
            OPTS["loss"] = meta.get("loss", "y")
            kf = os.path.join(tmp, "k.chi")
            inf = os.path.join(tmp, "k.json")
            with open(kf, "w") as f:
                f.write(k.render())
            with open(inf, "w") as f:
                json.dump(inp, f)
            try:
                cls, res, out = classify(kf, inf, meta, rnd)
            except Exception as e:  # a driver bug: keep going
                cls, res, out = "DRIVER_ERROR", {"exc": repr(e)}, ""
            counts[cls] = counts.get(cls, 0) + 1
            rec = dict(seed=seed, cls=cls, reject=rej, F=meta["F"], features=meta["features"],
                       stmts=k.count(), **res)
            log.write(json.dumps(rec) + "\n")
            log.flush()
            if cls not in ("PASS",):
                base = os.path.join(a.out, "cases", "%s_%d" % (cls, seed))
                with open(base + ".chi", "w") as f:
                    f.write(k.render())
                with open(base + ".json", "w") as f:
                    json.dump(inp, f)
                with open(base + ".out", "w") as f:
                    f.write(out)
            if cls not in ("PASS", "REJECT_OK"):
                print(seed, cls, res.get("gc", "")[:160], flush=True)
    print("counts:", json.dumps(counts, sort_keys=True), "elapsed %.0fs" % (time.time() - t0))
    # Classes that are not bugs of passbench: passes, expected rejections, and the generator's own
    # NaN-producing kernels. Everything else (FAIL, *_INVALID_IR, REJECT_MISSED, crashes, *_DIFF)
    # is a bug to minimize (minimize.py).
    benign = {"PASS", "REJECT_OK", "PASS_ERROR", "FAIL_NAN"}
    bugs = {c: n for c, n in counts.items() if c not in benign}
    if a.fail_on_bug and bugs:
        print("bug classes:", json.dumps(bugs, sort_keys=True))
        sys.exit(1)


if __name__ == "__main__":
    main()
