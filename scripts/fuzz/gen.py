"""Random forward-kernel generator for passbench reverse-mode AD fuzzing.

Produces CHI IR shaped like the Quadrants frontend output for differentiable simulation code:
a top-level range-for (or struct for) over elements, Python variables as allocas with
local load/store, nested range-fors with const / field / index / arg bounds, ifs, chains of
differentiable ops with operands kept in safe domains, outputs by global store y[i] or
atomic add into y.

    python3 gen.py SEED [--reject KIND]   -> prints kernel, writes nothing
    gen.generate(seed) -> (Kernel, inputs_dict, meta)
"""
import json
import math
import random
import sys

from chiir import Kernel, Stmt

FL = ("f32", "f64")
FS = 8          # size of 1-d input fields (power of two: indices are bit_and 7)
VB = 3.0        # bound of every float stored into a variable
REJECT_KINDS = ("while", "continue", "atomic_max", "atomic_min", "atomic_mul", "raw",
                "atomic_ret", "root_write", "war")


def fmt_float(v):
    s = "%.6g" % v
    if s == "-0":
        s = "0"
    return s


class Frame:
    def __init__(self, kind):
        self.kind = kind        # 'top', 'for', 'if'
        self.temps = []         # (stmt, ty, info)  info: float bound or (lo, hi) for ints
        self.vars = []          # dicts: alloca, ty, bound
        self.loop = None        # (loop stmt, index stmt, max index)


class Gen:
    def __init__(self, seed, reject=None, opts=None):
        self.seed = seed
        self.r = random.Random(seed)
        self.opts = opts or {}
        self.nid = 0
        self.const_block = []
        self.consts = {}
        self.cur = None
        self.frames = []
        self.reject = reject
        r = self.r
        self.F = r.choice(FL)
        self.other = "f64" if self.F == "f32" else "f32"
        self.header = []
        self.fields = {}      # name -> dict(dtype, shape, grad)
        self.inputs = {"fields": {}}
        self.meta = {"seed": seed, "F": self.F, "reject": reject, "features": []}
        self.budget = 0
        self.in_top = False

    # ------------------------------------------------------------------ basics
    def new(self, ty, sep, text, ops=(), blocks=None, kind="", block=None):
        s = Stmt(self.nid, ty, sep, text, ops, blocks, kind)
        self.nid += 1
        (self.cur if block is None else block).append(s)
        return s

    def const(self, ty, v):
        if ty in FL:
            key = (ty, fmt_float(v))
        elif ty == "u1":
            key = (ty, "true" if v else "false")
        else:
            key = (ty, str(int(v)))
        if key not in self.consts:
            self.consts[key] = self.new(ty, "=", "const " + key[1], kind="const", block=self.const_block)
        return self.consts[key]

    def un(self, op, a, ty=None):
        return self.new(ty or a.ty, "=", op + " {0}", [a], kind="unary")

    def bin(self, op, a, b, ty=None):
        return self.new(ty or a.ty, "=", op + " {0} {1}", [a, b], kind="binary")

    def cast(self, ty, a):
        return self.new(ty, "=", "cast_value<%s> {0}" % ty, [a], kind="cast")

    def feat(self, f):
        if f not in self.meta["features"]:
            self.meta["features"].append(f)

    # ------------------------------------------------------------------ fields
    def add_field(self, name, dtype, shape, grad, data=None):
        sh = "[" + ", ".join(str(d) for d in shape) + "]"
        line = "field %s : %s%s" % (name, dtype, sh)
        if grad:
            line += " grad %s_grad" % name
        self.header.append(line)
        self.fields[name] = dict(dtype=dtype, shape=shape, grad=grad)
        if data is not None:
            self.inputs["fields"][name] = {"data": data}

    def setup_fields(self):
        r = self.r
        nx = r.choice([1, 1, 2, 2, 3])
        for k in range(nx):
            dt = self.F if r.random() < 0.8 else self.other
            self.add_field("x%d" % k, dt, [FS], True, [round(r.uniform(-1.5, 1.5), 3) for _ in range(FS)])
        if r.random() < 0.3:
            self.add_field("s", self.F, [], True, [round(r.uniform(-1.5, 1.5), 3)])
        if r.random() < 0.3:
            self.add_field("c", self.F, [FS], False, [round(r.uniform(-1.5, 1.5), 3) for _ in range(FS)])
        self.add_field("n", "i32", [], False, [r.randint(0, 5)])
        self.add_field("m", "i32", [FS], False, [r.randint(0, 4) for _ in range(FS)])
        if r.random() < 0.2:
            self.header.insert(0, "arg 0 : i32")
            self.inputs["args"] = [r.randint(0, 4)]
            self.has_arg = True
        else:
            self.has_arg = False
        self.N = r.randint(1, 4)
        self.y0d = r.random() < 0.4
        self.add_field("y", self.F, [] if self.y0d else [self.N], True)
        self.use_w = self.opts.get("w", True) and r.random() < 0.25
        if self.use_w:
            self.add_field("w", self.F, [FS], True, [0.0] * FS)
        if self.reject in ("raw", "atomic_ret", "war"):
            self.add_field("z", self.F, [FS], True, [round(r.uniform(-1.5, 1.5), 3) for _ in range(FS)])

    # ------------------------------------------------------------------ scope
    def visible_vars(self, ty=None):
        if getattr(self, "novars", 0):
            return []
        out = []
        for f in self.frames:
            out += [v for v in f.vars if ty is None or v["ty"] == ty]
        return out

    def visible_temps(self, ty):
        if getattr(self, "novars", 0):
            return []
        out = []
        for f in self.frames:
            out += [t for t in f.temps if t[1] == ty]
        return out

    def loops(self):
        return [f.loop for f in self.frames if f.loop is not None]

    # ------------------------------------------------------------------ ints
    def gen_int(self, depth=1):
        """An i32 value, small and usually non-negative. Returns stmt."""
        r = self.r
        ch = []
        lps = self.loops()
        if lps:
            ch += ["idx"] * 4
        if self.visible_vars("i32"):
            ch += ["var"] * 2
        if self.visible_temps("i32"):
            ch += ["temp"]
        ch += ["const", "m", "n"]
        if depth > 0:
            ch += ["op"] * 2
        if depth > 0 and self.opts.get("float_index", True):
            ch += ["fcast"]
        c = r.choice(ch)
        if c == "idx":
            return r.choice(lps)[1]
        if c == "var":
            v = r.choice(self.visible_vars("i32"))
            return self.new("i32", "=", "local load [{0}]", [v["alloca"]], kind="lload")
        if c == "temp":
            return r.choice(self.visible_temps("i32"))[0]
        if c == "const":
            return self.const("i32", r.randint(0, 7))
        if c == "m":
            idx = self.gen_index(0)
            p = self.new("*i32", "=", "global ptr [m], index [{0}] activate=true", [idx], kind="gptr")
            return self.new("i32", "=", "global load {0}", [p], kind="gload")
        if c == "n":
            return self.load_n()
        if c == "fcast":
            self.feat("int_cast_of_float")
            a, b = self.gen_f(self.F, 1)
            a = self.bin("mul", a, self.const(self.F, 2.5))
            return self.cast("i32", a)
        a = self.gen_int(depth - 1)
        b = self.gen_int(depth - 1)
        return self.bin(r.choice(["add", "add", "mul", "sub"]), a, b)

    def load_n(self):
        p = self.new("*i32", "=", "global ptr [n], index [] activate=true", kind="gptr")
        return self.new("i32", "=", "global load {0}", [p], kind="gload")

    def gen_index(self, depth=1):
        a = self.gen_int(depth)
        return self.bin("bit_and", a, self.const("i32", FS - 1))

    # ------------------------------------------------------------------ floats
    def fit(self, s, b, limit):
        if b <= limit:
            return s, b
        c = self.r.random()
        if c < 0.35:
            return self.un("tanh", s), 1.0
        if c < 0.5:
            return self.un("sin", s), 1.0
        k = limit / b
        return self.bin("mul", s, self.const(s.ty, math.floor(k * 1000) / 1000.0)), limit

    def positive(self, ty, depth):
        """A value bounded below by a positive constant. Returns (stmt, lo, hi)."""
        r = self.r
        a, b = self.gen_f(ty, depth)
        c = round(r.uniform(0.3, 1.5), 2)
        k = r.random()
        if k < 0.3:
            s = self.bin("add", self.un("abs", a), self.const(ty, c))
            return s, c, b + c
        if k < 0.6:
            s = self.bin("add", self.bin("mul", a, a), self.const(ty, c))
            return s, c, b * b + c
        if k < 0.8:
            a, b = self.fit(a, b, 2.0)
            return self.un("exp", a), math.exp(-b), math.exp(b)
        c = round(r.uniform(1.3, 2.5), 2)
        a, b = self.fit(a, b, 1.0)
        return self.bin("add", self.const(ty, c), a) if r.random() < 0.5 else self.bin("add", a, self.const(ty, c)), c - 1, c + 1

    def leaf_f(self, ty):
        r = self.r
        ch = []
        vs = self.visible_vars(ty)
        if vs:
            ch += ["var"] * 5
        if self.visible_temps(ty):
            ch += ["temp"] * 3
        fl = [n for n, f in self.fields.items() if f["dtype"] == ty and n not in ("y", "z", "w")]
        if fl:
            ch += ["field"] * 4
        ch += ["const"]
        if self.loops():
            ch += ["idx"]
        ch += ["other"]
        c = r.choice(ch)
        if c == "var":
            v = r.choice(vs)
            return self.new(ty, "=", "local load [{0}]", [v["alloca"]], kind="lload"), v["bound"]
        if c == "temp":
            t = r.choice(self.visible_temps(ty))
            return t[0], t[2]
        if getattr(self, "w_ready", False) and not getattr(self, "novars", 0) and ty == self.F and r.random() < 0.3:
            self.feat("read_written_field")
            p = self.new("*" + ty, "=", "global ptr [w], index [{0}] activate=true", [self.frames[0].loop[1]],
                         kind="gptr")
            return self.new(ty, "=", "global load {0}", [p], kind="gload"), 3.0
        if c == "field":
            name = r.choice(fl)
            f = self.fields[name]
            if f["shape"]:
                idx = self.gen_index(r.choice([0, 0, 1]))
                p = self.new("*" + ty, "=", "global ptr [%s], index [{0}] activate=true" % name, [idx], kind="gptr")
            else:
                p = self.new("*" + ty, "=", "global ptr [%s], index [] activate=true" % name, kind="gptr")
            return self.new(ty, "=", "global load {0}", [p], kind="gload"), 1.5
        if c == "const":
            return self.const(ty, round(r.uniform(-1.5, 1.5), 2)), 1.5
        if c == "idx":
            lp = r.choice(self.loops())
            s = self.cast(ty, lp[1])
            return s, float(max(lp[2], 1))
        # the other float type
        o = "f64" if ty == "f32" else "f32"
        self.feat("float_cast")
        a, b = self.gen_f(o, 0)
        return self.cast(ty, a), b

    def gen_f(self, ty, depth):
        """A float expression of type ty; returns (stmt, bound)."""
        r = self.r
        if depth <= 0 or r.random() < 0.2:
            return self.leaf_f(ty)
        d = depth - 1
        ops = ["neg", "abs", "sin", "cos", "tan", "tanh", "asin", "acos", "exp", "log", "sqrt", "rsqrt",
               "add", "add", "sub", "mul", "mul", "div", "pow", "atan2", "min", "max", "select",
               "other", "intstop", "floor"]
        if self.opts.get("ext"):
            ops += ["mod", "mod", "dag", "dag"]
        op = r.choice(ops)
        if op in ("neg", "abs"):
            a, b = self.gen_f(ty, d)
            return self.un(op, a), b
        if op in ("sin", "cos", "tanh"):
            a, b = self.gen_f(ty, d)
            return self.un(op, a), 1.0
        if op == "tan":
            a, b = self.gen_f(ty, d)
            a, b = self.fit(a, b, 1.2)
            return self.un("tan", a), math.tan(b)
        if op in ("asin", "acos"):
            a, b = self.gen_f(ty, d)
            if b > 0.9:
                a = self.un(r.choice(["tanh", "sin"]), a)
                a = self.bin("mul", a, self.const(ty, 0.9))
            return self.un(op, a), math.pi
        if op == "exp":
            a, b = self.gen_f(ty, d)
            a, b = self.fit(a, b, 2.0)
            return self.un("exp", a), math.exp(b)
        if op == "log":
            a, lo, hi = self.positive(ty, d)
            return self.un("log", a), max(abs(math.log(lo)), abs(math.log(hi)))
        if op == "sqrt":
            a, lo, hi = self.positive(ty, d)
            return self.un("sqrt", a), math.sqrt(hi)
        if op == "rsqrt":
            a, lo, hi = self.positive(ty, d)
            return self.un("rsqrt", a), 1 / math.sqrt(lo)
        if op in ("add", "sub", "mul", "min", "max"):
            a, b1 = self.gen_f(ty, d)
            b, b2 = self.gen_f(ty, d)
            if r.random() < 0.5:
                a, b = b, a
            s = self.bin(op, a, b)
            return s, (b1 * b2 if op == "mul" else (b1 + b2 if op in ("add", "sub") else max(b1, b2)))
        if op == "div":
            a, b1 = self.gen_f(ty, d)
            den, lo, hi = self.positive(ty, d)
            if r.random() < 0.3:
                den = self.un("neg", den)
            return self.bin("div", a, den), b1 / lo
        if op == "pow":
            base, lo, hi = self.positive(ty, d)
            if self.opts.get("ext") and r.random() < 0.25:
                self.feat("pow_int_exponent")
                k = r.choice([2, 3, -1, 0, 4])
                return self.bin("pow", base, self.const("i32", k)), max(hi, 1 / lo) ** abs(k)
            if r.random() < 0.4:
                e = self.const(ty, r.choice([2, 3, 0.5, -1, 1.5, -0.5]))
                eb = 3
            else:
                e, eb = self.gen_f(ty, d)
                e, eb = self.fit(e, eb, 2.0)
            m = max(hi, 1 / lo)
            return self.bin("pow", base, e), m ** eb
        if op == "atan2":
            a, b1 = self.gen_f(ty, d)
            # one side bounded away from 0: atan2(0, 0) has no derivative
            b, lo, hi = self.positive(ty, d)
            if r.random() < 0.5:
                b = self.un("neg", b)
            if r.random() < 0.5:
                return self.bin("atan2", a, b), math.pi
            return self.bin("atan2", b, a), math.pi
        if op == "select":
            c = self.gen_cond()
            a, b1 = self.gen_f(ty, d)
            b, b2 = self.gen_f(ty, d)
            return self.new(ty, "=", "select({0}, {1}, {2})", [c, a, b], kind="select"), max(b1, b2)
        if op == "other":
            o = "f64" if ty == "f32" else "f32"
            self.feat("float_cast")
            a, b = self.gen_f(o, d)
            return self.cast(ty, a), b
        if op == "intstop":
            self.feat("int_cast_stop")
            a, b = self.gen_f(ty, d)
            a = self.bin("mul", a, self.const(ty, 2.5))
            i = self.cast("i32", a)
            return self.cast(ty, i), b * 2.5 + 1
        if op == "mod":
            # float mod (C fmod): both operands variable, the divisor bounded away from 0
            self.feat("float_mod")
            a, b1 = self.gen_f(ty, d)
            den, lo, hi = self.positive(ty, d)
            if r.random() < 0.3:
                den = self.un("neg", den)
            return self.bin("mod", a, den), min(b1, hi)
        if op == "dag":
            # a value used by several later values, chained: each step reads the previous one
            # twice or the first one again (a DAG, not a tree)
            self.feat("dag")
            a, b = self.gen_f(ty, d)
            a, b = self.fit(a, b, 1.2)
            cur, cb = a, b
            for _ in range(r.randint(2, 8)):
                other, ob = (cur, cb) if r.random() < 0.5 else (a, b)
                c = r.random()
                if c < 0.4:
                    cur, cb = self.bin("mul", cur, other), cb * ob
                elif c < 0.7:
                    cur, cb = self.bin("add", cur, other), cb + ob
                else:
                    cur, cb = self.un("sin", self.bin("sub", cur, other)), 1.0
                cur, cb = self.fit(cur, cb, 1.5)
            return cur, cb
        if op == "floor":
            a, b = self.gen_f(ty, d)
            return self.un(r.choice(["floor", "ceil"]), a), b + 1
        raise AssertionError(op)

    def gen_fb(self, ty, depth, limit):
        s, b = self.gen_f(ty, depth)
        return self.fit(s, b, limit)

    # ------------------------------------------------------------------ conditions
    def gen_cond(self):
        r = self.r
        ch = ["fcmp"] * 4 + ["icmp"] * 2
        if self.visible_vars("u1"):
            ch += ["flag"] * 2
        if self.visible_vars(self.F):
            ch += ["varcmp"] * 3
        c = r.choice(ch)
        cmp = r.choice(["cmp_lt", "cmp_le", "cmp_gt", "cmp_ge"])
        if c == "fcmp":
            ty = self.F if r.random() < 0.8 else self.other
            a, _ = self.gen_f(ty, r.choice([0, 1, 2]))
            b = self.const(ty, round(r.uniform(-1, 1), 2)) if r.random() < 0.6 else self.gen_f(ty, 1)[0]
            return self.bin(cmp, a, b, "u1")
        if c == "icmp":
            a = self.gen_int(1)
            b = self.gen_int(0) if r.random() < 0.5 else self.const("i32", r.randint(0, 4))
            return self.bin(r.choice(["cmp_lt", "cmp_ge", "cmp_eq", "cmp_ne", "cmp_gt"]), a, b, "u1")
        if c == "flag":
            v = r.choice(self.visible_vars("u1"))
            return self.new("u1", "=", "local load [{0}]", [v["alloca"]], kind="lload")
        v = r.choice(self.visible_vars(self.F))
        ld = self.new(self.F, "=", "local load [{0}]", [v["alloca"]], kind="lload")
        self._last_cond_var = v
        return self.bin(cmp, ld, self.const(self.F, round(r.uniform(-1, 1), 2)), "u1")

    # ------------------------------------------------------------------ statements
    def store(self, v, val):
        return self.new(v["ty"], ":", "local store [{0} <- {1}]", [v["alloca"], val], kind="lstore")

    def decl_var(self, ty, init=None, bound=None):
        a = self.new("*" + ty, "=", "alloca", kind="alloca")
        v = dict(alloca=a, ty=ty, bound=VB if ty in FL else None)
        if init is None:
            if ty in FL:
                init, _ = self.gen_fb(ty, self.r.choice([0, 1, 2]), VB)
            elif ty == "i32":
                init = self.gen_int(1)
            else:
                init = self.gen_cond()
        self.store(v, init)
        self.frames[-1].vars.append(v)
        return v

    def assign_var(self, v):
        r = self.r
        ty = v["ty"]
        if ty in FL and self.opts.get("ext") and r.random() < 0.25:
            self.feat("carried_select_minmax")
            ld = self.new(ty, "=", "local load [{0}]", [v["alloca"]], kind="lload")
            e, b = self.gen_fb(ty, r.choice([0, 1, 2]), VB)
            kind = r.choice(["select", "select", "min", "max", "mod"])
            if kind == "mod":
                self.feat("carried_mod")
                den, lo, hi = self.positive(ty, r.choice([0, 1]))
                s = self.bin("mod", ld, den) if r.random() < 0.7 else self.bin("mod", e, self.bin("add", self.un("abs", ld), self.const(ty, 0.4)))
            elif kind in ("min", "max"):
                s = self.bin(kind, ld, e) if r.random() < 0.5 else self.bin(kind, e, ld)
            else:
                c = self.bin(r.choice(["cmp_lt", "cmp_gt", "cmp_le", "cmp_ge"]), ld,
                             self.const(ty, round(r.uniform(-1, 1), 2)), "u1")
                if r.random() < 0.5:
                    t = self.bin("mul", ld, self.const(ty, round(r.uniform(-0.95, 0.95), 2)))
                else:
                    t = self.un(r.choice(["sin", "tanh"]), ld)
                s = self.new(ty, "=", "select({0}, {1}, {2})", [c, t, e] if r.random() < 0.5 else [c, e, t],
                             kind="select")
            self.store(v, s)
            return
        if ty in FL:
            k = r.random()
            if k < 0.35:
                # v = v * a + b (linear carried) or v += f(...)
                ld = self.new(ty, "=", "local load [{0}]", [v["alloca"]], kind="lload")
                e, b = self.gen_fb(ty, r.choice([0, 1, 2]), VB)
                if r.random() < 0.5:
                    s = self.bin("add", self.bin("mul", ld, self.const(ty, round(r.uniform(-0.95, 0.95), 2))), e)
                    s, _ = self.fit(s, VB + b, VB)
                else:
                    s = self.bin("add", ld, e)
                    s, _ = self.fit(s, VB + b, VB)
            elif k < 0.6:
                # v = f(v) nonlinear
                self.frames[-1].vars  # noqa
                e, b = self.gen_fb(ty, r.choice([1, 2, 3]), VB)
                s = e
            else:
                e, b = self.gen_fb(ty, r.choice([1, 2]), VB)
                s = e
            self.store(v, s)
        elif ty == "i32":
            if r.random() < 0.5:
                ld = self.new("i32", "=", "local load [{0}]", [v["alloca"]], kind="lload")
                s = self.bin("add", ld, self.const("i32", 1))
            else:
                s = self.gen_int(1)
            self.store(v, s)
        else:
            self.store(v, self.gen_cond())

    def output(self, top_level):
        r = self.r
        ty = self.F
        e, b = self.gen_fb(ty, r.choice([0, 1, 2]), 5.0)
        if self.y0d:
            p = self.new("*" + ty, "=", "global ptr [y], index [] activate=true", kind="gptr")
            self.new(ty, "=", "atomic add({0}, {1})", [p, e], kind="atomic")
            return
        top = self.frames[0].loop[1]
        if top_level or r.random() < 0.3:
            p = self.new("*" + ty, "=", "global ptr [y], index [{0}] activate=true", [top], kind="gptr")
            self.new(None, ":", "global store [{0} <- {1}]", [p, e], kind="gstore")
            if not top_level:
                self.feat("store_in_nested")
        else:
            # atomic add into y at an index derived from loop indices
            # atomic add into y[i] (another index would race with the other iterations' stores)
            p = self.new("*" + ty, "=", "global ptr [y], index [{0}] activate=true", [top], kind="gptr")
            self.new(ty, "=", "atomic add({0}, {1})", [p, e], kind="atomic")

    def final_output(self):
        """y[i] = (or y += ) sum of the top-level float variables plus an expression."""
        F = self.F
        e, b = self.gen_f(F, self.r.choice([0, 1, 2]))
        tot = b
        for v in self.frames[0].vars:
            if v["ty"] not in FL:
                continue
            ld = self.new(v["ty"], "=", "local load [{0}]", [v["alloca"]], kind="lload")
            if v["ty"] != F:
                ld = self.cast(F, ld)
            e = self.bin("add", e, ld)
            tot += v["bound"]
        self.emit_output(e, True)

    def emit_output(self, e, top_level):
        ty = self.F
        if self.y0d:
            p = self.new("*" + ty, "=", "global ptr [y], index [] activate=true", kind="gptr")
            self.new(ty, "=", "atomic add({0}, {1})", [p, e], kind="atomic")
            return
        top = self.frames[0].loop[1]
        p = self.new("*" + ty, "=", "global ptr [y], index [{0}] activate=true", [top], kind="gptr")
        self.new(None, ":", "global store [{0} <- {1}]", [p, e], kind="gstore")

    def fold_locals(self):
        """At the end of a nested block, fold a block-local float var into an outer var or the output."""
        r = self.r
        loc = [v for v in self.frames[-1].vars if v["ty"] in FL]
        if not loc:
            return
        v = r.choice(loc)
        ld = self.new(v["ty"], "=", "local load [{0}]", [v["alloca"]], kind="lload")
        outer = [w for f in self.frames[:-1] for w in f.vars if w["ty"] == v["ty"]]
        if outer and r.random() < 0.7:
            w = r.choice(outer)
            wl = self.new(w["ty"], "=", "local load [{0}]", [w["alloca"]], kind="lload")
            s = self.bin("add", wl, self.bin("mul", ld, self.const(v["ty"], round(r.uniform(0.1, 0.6), 2))))
            s, _ = self.fit(s, 2 * VB, VB)
            self.store(w, s)
        else:
            if v["ty"] != self.F:
                ld = self.cast(self.F, ld)
            ty = self.F
            p = self.new("*" + ty, "=", "global ptr [y], index [%s] activate=true" % ("" if self.y0d else "{0}"),
                         [] if self.y0d else [self.frames[0].loop[1]], kind="gptr")
            self.new(ty, "=", "atomic %s({0}, {1})" % r.choice(["add", "add", "sub"]), [p, ld], kind="atomic")

    def gen_bounds(self):
        r = self.r
        lps = self.loops()
        forced = getattr(self, "force_bound", None)
        if forced is not None:
            # the bound of the second of two sibling loops: a local set between them
            self.force_bound = None
            zero = self.const("i32", 0)
            ld = self.new("i32", "=", "local load [{0}]", [forced["alloca"]], kind="lload")
            return zero, self.bin("min", ld, self.const("i32", 4)), 4
        ch = ["const"] * 2 + ["n"] * 3 + ["m"] * 2
        if len(lps) > 1:
            ch += ["idx"] * 3
        if self.has_arg:
            ch += ["arg"]
        if self.visible_vars("i32"):
            ch += ["ivar"] * (3 if self.opts.get("ext") else 1)
        if self.opts.get("ext") and self.visible_vars(self.F):
            ch += ["fvar"] * 3
        ch += ["fval"]
        c = r.choice(ch)
        zero = self.const("i32", 0)
        if c == "const":
            return zero, self.const("i32", r.randint(0, 4)), 4
        if c == "n":
            if r.random() < 0.25 and lps:
                # range(m[j], n[None]): a field begin, possibly past the end
                self.feat("field_begin")
                idx = r.choice(lps)[1]
                p = self.new("*i32", "=", "global ptr [m], index [{0}] activate=true", [idx], kind="gptr")
                beg = self.new("i32", "=", "global load {0}", [p], kind="gload")
                return beg, self.load_n(), 5
            return zero, self.load_n(), 5
        if c == "m":
            # m[i] / m[j] / m[const]: every loop index is below FS
            idx = r.choice(lps)[1] if r.random() < 0.8 else self.const("i32", r.randint(0, FS - 1))
            p = self.new("*i32", "=", "global ptr [m], index [{0}] activate=true", [idx], kind="gptr")
            return zero, self.new("i32", "=", "global load {0}", [p], kind="gload"), 4
        if c == "arg":
            self.feat("arg_bound")
            return zero, self.new("i32", "=", "argload[0]", kind="argload"), 4
        if c == "idx":
            self.feat("index_bound")
            lp = r.choice(lps[1:])
            k = r.random()
            if k < 0.4:
                return zero, lp[1], lp[2]
            if k < 0.7:
                return zero, self.bin("add", lp[1], self.const("i32", 1)), lp[2] + 1
            if k < 0.85:
                return lp[1], self.const("i32", 4), 4
            return lp[1], self.load_n(), 5
        if c == "ivar":
            self.feat("ivar_bound")
            v = r.choice(self.visible_vars("i32"))
            ld = self.new("i32", "=", "local load [{0}]", [v["alloca"]], kind="lload")
            if r.random() < 0.5:
                return zero, self.bin("bit_and", ld, self.const("i32", 3)), 3
            return zero, self.bin("min", ld, self.const("i32", 4)), 4
        if c == "fvar":
            # bound read from a (usually loop-carried, stack-backed) float variable
            self.feat("fvar_bound")
            v = r.choice(self.visible_vars(self.F))
            a = self.new(self.F, "=", "local load [{0}]", [v["alloca"]], kind="lload")
            a = self.un("abs", a)
            a = self.bin("mul", a, self.const(self.F, 1.5))
            i = self.cast("i32", a)
            return zero, self.bin("min", i, self.const("i32", 4)), 4
        self.feat("float_bound")
        a, b = self.gen_f(self.F, 1)
        a = self.un("abs", a)
        a = self.bin("mul", a, self.const(self.F, 1.5))
        i = self.cast("i32", a)
        return zero, self.bin("min", i, self.const("i32", 4)), 4

    def gen_for(self, depth):
        if self.opts.get("avoid_known") and self.frames[-1].kind == "if":
            # known bug (bugs/loop_bound_from_stack_in_if_fixed_size.chi): a bound read from a stack inside an if
            self.novars = 1
        b, e, mx = self.gen_bounds()
        self.novars = 0
        body = []
        s = self.new(None, ":", "for in range({0}, {1}) block_dim=adaptive", [b, e], blocks=[body], kind="for")
        saved = self.cur
        self.cur = body
        f = Frame("for")
        idx = self.new("i32", "=", "loop {0} index 0", [s], kind="loopidx")
        f.loop = (s, idx, mx)
        self.frames.append(f)
        if getattr(self, "force_chain", False):
            self.force_chain = False
            if self.r.random() < 0.5:
                vs = [v for v in self.visible_vars() if v["ty"] in FL]
                if vs:
                    self.assign_var(self.r.choice(vs))
            self.gen_chain(depth + 1, self.r.randint(1, 3))
        self.gen_block(depth + 1, self.r.randint(1, 6))
        if self.r.random() < 0.7:
            self.fold_locals()
        self.frames.pop()
        self.cur = saved
        return s

    def var_cond(self):
        """A comparison of a visible float variable (stack-backed when carried) with a constant."""
        r = self.r
        vs = self.visible_vars(self.F)
        if not vs:
            return self.gen_cond()
        v = r.choice(vs)
        ld = self.new(self.F, "=", "local load [{0}]", [v["alloca"]], kind="lload")
        self._last_cond_var = v
        return self.bin(r.choice(["cmp_lt", "cmp_le", "cmp_gt", "cmp_ge"]), ld,
                        self.const(self.F, round(r.uniform(-1, 1), 2)), "u1")

    def gen_chain(self, depth, n):
        """if v < a {..} elif v2 > b {..} ... else {..}: an else holding only the next if."""
        r = self.r
        self.feat("elif_chain")
        self._last_cond_var = None
        cond = self.var_cond()
        condvar = self._last_cond_var
        then, els = [], []
        s = self.new(None, ":", "if {0}", [cond], blocks=[then, els], kind="if")
        saved = self.cur
        self.cur = then
        self.frames.append(Frame("if"))
        if condvar is not None and r.random() < 0.6:
            self.feat("if_assigns_cond_var")
            self.assign_var(condvar)
        self.gen_block(depth, r.randint(0, 2))
        if condvar is None or r.random() < 0.5:
            vs = [v for v in self.visible_vars() if v["ty"] in FL]
            if vs:
                self.assign_var(r.choice(vs))
        self.frames.pop()
        self.cur = els
        self.frames.append(Frame("if"))
        if n > 1:
            self.gen_chain(depth, n - 1)
        else:
            vs = [v for v in self.visible_vars() if v["ty"] in FL]
            if vs:
                self.assign_var(r.choice(vs))
            self.gen_block(depth, r.randint(0, 2))
        self.frames.pop()
        self.cur = saved
        return s

    def gen_if_loop_chain(self, depth):
        """if c { [v = ..] for .. { if/elif chain on carried vars; .. } .. }"""
        r = self.r
        self.feat("if_loop_chain")
        cond = self.gen_cond() if r.random() < 0.5 else self.var_cond()
        then = []
        s = self.new(None, ":", "if {0}", [cond], blocks=[then], kind="if")
        saved = self.cur
        self.cur = then
        self.frames.append(Frame("if"))
        if r.random() < 0.5:
            vs = [v for v in self.visible_vars() if v["ty"] in FL]
            if vs:
                self.assign_var(r.choice(vs))
            else:
                self.decl_var(self.F)
        self.force_chain = True
        self.gen_for(depth)
        self.force_chain = False
        self.gen_block(depth, r.randint(0, 2))
        self.frames.pop()
        self.cur = saved
        return s

    def gen_if(self, depth):
        r = self.r
        self._last_cond_var = None
        flagv = None
        if self.opts.get("avoid_known") and self.frames[-1].kind == "if":
            # known bug (bugs/if_cond_*): a cond read from a stack in an if nested in an if
            self.novars = 1
        if self.visible_vars("u1") and r.random() < 0.4:
            flagv = r.choice(self.visible_vars("u1"))
            cond = self.new("u1", "=", "local load [{0}]", [flagv["alloca"]], kind="lload")
        else:
            cond = self.gen_cond()
        condvar = self._last_cond_var or flagv
        self.novars = 0
        then, els = [], []
        blocks = [then]
        has_else = r.random() < 0.4
        if has_else:
            blocks.append(els)
        s = self.new(None, ":", "if {0}", [cond], blocks=blocks, kind="if")
        saved = self.cur
        for bi, blk in enumerate(blocks):
            self.cur = blk
            self.frames.append(Frame("if"))
            if condvar is not None and r.random() < 0.6:
                self.feat("if_assigns_cond_var")
                self.assign_var(condvar)
            self.gen_block(depth, r.randint(1, 4))
            if r.random() < 0.5:
                self.fold_locals()
            self.frames.pop()
        self.cur = saved
        return s

    def gen_siblings(self, depth):
        """Two sibling loops with an i32 local between them that the second one's bound reads:
        t = m[..] (or n[None]), perhaps t += 1, then for j in range(min(t, 4))."""
        r = self.r
        self.feat("sibling_loops_local")
        self.gen_for(depth)
        lps = self.loops()
        if lps and r.random() < 0.6:
            idx = r.choice(lps)[1]
            p = self.new("*i32", "=", "global ptr [m], index [{0}] activate=true", [idx], kind="gptr")
            init = self.new("i32", "=", "global load {0}", [p], kind="gload")
        else:
            init = self.load_n()
        v = self.decl_var("i32", init=init)
        if r.random() < 0.5:
            ld = self.new("i32", "=", "local load [{0}]", [v["alloca"]], kind="lload")
            self.store(v, self.bin("add", ld, self.const("i32", r.choice([1, -1]))))
        self.force_bound = v
        self.gen_for(depth)

    def gen_block(self, depth, n):
        r = self.r
        for _ in range(n):
            if self.budget <= 0:
                return
            self.budget -= 1
            ch = ["decl"] * 3 + ["assign"] * 5 + ["temp"] * 2 + ["if"] * 2 + ["out"] * 1
            if depth < self.maxdepth:
                ch += ["for"] * 4
            ch += ["ivar", "flag", "swap"]
            if self.opts.get("ext"):
                ch += ["chain"]
                if depth < self.maxdepth:
                    ch += ["ifloopchain"] * 2 + ["siblings"]
            c = r.choice(ch)
            if c == "decl":
                ty = self.F if r.random() < 0.85 else self.other
                self.decl_var(ty)
            elif c == "assign":
                vs = self.visible_vars()
                if not vs:
                    self.decl_var(self.F)
                    continue
                # prefer outer float vars (loop-carried)
                fl = [v for v in vs if v["ty"] in FL]
                v = r.choice(fl) if fl and r.random() < 0.8 else r.choice(vs)
                self.assign_var(v)
            elif c == "swap":
                fl = [v for v in self.visible_vars() if v["ty"] == self.F]
                if len(fl) < 2:
                    self.decl_var(self.F)
                    continue
                self.feat("parallel_assign")
                a, b = r.sample(fl, 2)
                la = self.new(a["ty"], "=", "local load [{0}]", [a["alloca"]], kind="lload")
                lb = self.new(b["ty"], "=", "local load [{0}]", [b["alloca"]], kind="lload")
                na = lb if r.random() < 0.5 else self.un(r.choice(["sin", "tanh", "neg"]), lb)
                nb, _ = self.fit(self.bin(r.choice(["add", "mul", "sub"]), la, lb), VB * VB, VB)
                self.store(a, na)
                self.store(b, nb)
            elif c == "temp":
                ty = self.F if r.random() < 0.8 else self.other
                s, b = self.gen_fb(ty, r.choice([1, 2]), VB)
                self.frames[-1].temps.append((s, ty, b))
                if r.random() < 0.3:
                    self.frames[-1].temps.append((self.gen_int(1), "i32", None))
            elif c == "if":
                self.gen_if(depth)
            elif c == "for":
                self.gen_for(depth)
            elif c == "chain":
                self.gen_chain(depth, r.randint(1, 3))
            elif c == "ifloopchain":
                self.gen_if_loop_chain(depth)
            elif c == "siblings":
                self.gen_siblings(depth)
            elif c == "out":
                self.output(False)
            elif c == "ivar":
                ivs = self.visible_vars("i32")
                if ivs and r.random() < 0.6:
                    self.assign_var(r.choice(ivs))
                else:
                    self.decl_var("i32")
            elif c == "flag":
                fvs = self.visible_vars("u1")
                if fvs and r.random() < 0.6:
                    self.assign_var(r.choice(fvs))
                else:
                    self.decl_var("u1")

    # ------------------------------------------------------------------ rejects
    def inject_reject(self):
        r = self.r
        k = self.reject
        F = self.F
        top = self.frames[0].loop[1]
        self.meta["features"].append("reject_" + k)
        if k == "while":
            v = self.decl_var(F)
            mask = self.new("*i32", "=", "alloca", kind="alloca")
            self.new("i32", ":", "local store [{0} <- {1}]", [mask, self.const("i32", 1)], kind="lstore")
            body = []
            w = self.new(None, ":", "while true", blocks=[body], kind="while")
            saved = self.cur
            self.cur = body
            ld = self.new(F, "=", "local load [{0}]", [v["alloca"]], kind="lload")
            c = self.bin("cmp_lt", self.un("abs", ld), self.const(F, 2), "u1")
            self.new(None, ":", "while control {0}, {1}", [mask, c], kind="wctl")
            s = self.bin("add", self.bin("mul", ld, self.const(F, 2)), self.const(F, 0.5))
            self.store(v, s)
            self.cur = saved
        elif k == "continue":
            if not self.visible_vars(F):
                self.decl_var(F)
            zero = self.const("i32", 0)
            body = []
            ld = self.load_n()
            s = self.new(None, ":", "for in range({0}, {1}) block_dim=adaptive", [zero, ld], blocks=[body], kind="for")
            saved = self.cur
            self.cur = body
            idx = self.new("i32", "=", "loop {0} index 0", [s], kind="loopidx")
            c = self.bin("cmp_eq", self.bin("bit_and", idx, self.const("i32", 1)), self.const("i32", 1), "u1")
            then = []
            self.new(None, ":", "if {0}", [c], blocks=[then], kind="if")
            self.new(None, "continue", "", block=then)
            vs = self.visible_vars(F)
            v = vs[0]
            ld = self.new(F, "=", "local load [{0}]", [v["alloca"]], kind="lload")
            self.store(v, self.bin("mul", self.un("sin", ld), self.const(F, 0.9)))
            self.cur = saved
        elif k in ("atomic_max", "atomic_min", "atomic_mul"):
            e, _ = self.gen_fb(F, 1, 3)
            if self.y0d:
                p = self.new("*" + F, "=", "global ptr [y], index [] activate=true", kind="gptr")
            else:
                p = self.new("*" + F, "=", "global ptr [y], index [{0}] activate=true", [top], kind="gptr")
            self.new(F, "=", "atomic %s({0}, {1})" % k.split("_")[1], [p, e], kind="atomic")
        elif k == "raw":
            one = self.const("i32", 1)
            j = self.bin("bit_and", self.bin("add", top, one), self.const("i32", FS - 1))
            p = self.new("*" + F, "=", "global ptr [z], index [{0}] activate=true", [j], kind="gptr")
            ld = self.new(F, "=", "global load {0}", [p], kind="gload")
            e, _ = self.gen_fb(F, 1, 3)
            s = self.bin("add", self.bin("mul", ld, self.const(F, 0.5)), e)
            p2 = self.new("*" + F, "=", "global ptr [z], index [{0}] activate=true", [top], kind="gptr")
            self.new(None, ":", "global store [{0} <- {1}]", [p2, s], kind="gstore")
            p3 = self.new("*" + F, "=", "global ptr [z], index [{0}] activate=true", [top], kind="gptr")
            ld3 = self.new(F, "=", "global load {0}", [p3], kind="gload")
            self.frames[-1].temps.append((ld3, F, 3.0))
        elif k == "atomic_ret":
            e, _ = self.gen_fb(F, 1, 3)
            p = self.new("*" + F, "=", "global ptr [z], index [{0}] activate=true", [top], kind="gptr")
            old = self.new(F, "=", "atomic add({0}, {1})", [p, e], kind="atomic")
            self.frames[-1].temps.append((old, F, 1.5))
        elif k == "war":
            # z[i] read into a nonlinear output, then overwritten in the same iteration
            p = self.new("*" + F, "=", "global ptr [z], index [{0}] activate=true", [top], kind="gptr")
            ld = self.new(F, "=", "global load {0}", [p], kind="gload")
            out = self.un(r.choice(["sin", "tanh", "exp"]), self.un("sin", ld))
            py = self.new("*" + F, "=", "global ptr [y], index [%s] activate=true" % ("" if self.y0d else "{0}"),
                          [] if self.y0d else [top], kind="gptr")
            self.new(F, "=", "atomic add({0}, {1})", [py, out], kind="atomic")
            e, _ = self.gen_fb(F, 1, 3)
            p2 = self.new("*" + F, "=", "global ptr [z], index [{0}] activate=true", [top], kind="gptr")
            self.new(None, ":", "global store [{0} <- {1}]", [p2, e], kind="gstore")
        # root_write is emitted after the top loop (see generate)

    # ------------------------------------------------------------------ top
    def generate(self):
        r = self.r
        self.setup_fields()
        self.maxdepth = r.choice([0, 1, 1, 2, 2, 3, 3])
        self.meta["maxdepth"] = self.maxdepth
        root = []
        self.cur = root
        ntop = 1 if r.random() < 0.8 else 2
        reject_loop = r.randrange(ntop)
        for t in range(ntop):
            self.budget = r.randint(4, 25)
            body = []
            struct = (not self.y0d) and r.random() < self.opts.get("struct_rate", 0.15)
            if struct:
                self.feat("struct_for")
                s = self.new(None, ":", "struct for in y block_dim=adaptive", blocks=[body], kind="for")
            else:
                zero = self.const("i32", 0)
                if self.has_arg and r.random() < 0.2 and self.y0d:
                    end = self.new("i32", "=", "argload[0]", kind="argload")
                    self.feat("top_arg_bound")
                else:
                    end = self.const("i32", self.N)
                s = self.new(None, ":", "for in range({0}, {1}) block_dim=adaptive", [zero, end], blocks=[body],
                             kind="for")
            saved = self.cur
            self.cur = body
            f = Frame("top")
            idx = self.new("i32", "=", "loop {0} index 0", [s], kind="loopidx")
            f.loop = (s, idx, self.N - 1)
            self.frames = [f]
            inject_at = r.randint(0, 2) if (self.reject and self.reject != "root_write" and t == reject_loop) else -1
            self.w_ready = False
            for part in range(3):
                if part == inject_at:
                    self.inject_reject()
                if part == 1 and self.use_w and t == 0:
                    e, _ = self.gen_fb(self.F, 2, 3.0)
                    p = self.new("*" + self.F, "=", "global ptr [w], index [{0}] activate=true", [idx], kind="gptr")
                    self.new(None, ":", "global store [{0} <- {1}]", [p, e], kind="gstore")
                    self.w_ready = True
                self.gen_block(0, 8)
                self.budget = max(self.budget, 2)
            if self.reject == "atomic_ret" and t == reject_loop:
                # make sure the old value is used
                old = [tt for tt in self.frames[0].temps if tt[0].kind == "atomic"][0][0]
                self.frames[0].temps = [old and (old, self.F, 1.5)]
                e = self.bin("mul", old, self.const(self.F, 2))
                if self.y0d:
                    p = self.new("*" + self.F, "=", "global ptr [y], index [] activate=true", kind="gptr")
                    self.new(self.F, "=", "atomic add({0}, {1})", [p, e], kind="atomic")
                else:
                    p = self.new("*" + self.F, "=", "global ptr [y], index [{0}] activate=true", [idx], kind="gptr")
                    self.new(None, ":", "global store [{0} <- {1}]", [p, e], kind="gstore")
            self.final_output()
            self.w_ready = False
            self.frames = []
            self.cur = saved
        if self.reject == "root_write":
            F = self.F
            if self.y0d:
                p = self.new("*" + F, "=", "global ptr [y], index [] activate=true", kind="gptr")
            else:
                p = self.new("*" + F, "=", "global ptr [y], index [{0}] activate=true", [self.const("i32", 0)],
                             kind="gptr")
            x = self.new("*" + F, "=", "global ptr [%s], index [{0}] activate=true" % self.xname_of(F),
                         [self.const("i32", 0)], kind="gptr")
            ld = self.new(F, "=", "global load {0}", [x], kind="gload")
            self.new(None, ":", "global store [{0} <- {1}]", [p, self.un("sin", ld)], kind="gstore")
        if self.opts.get("ext") and self.reject != "raw" and r.random() < self.opts.get("ndarray_rate", 0.25):
            self.y_to_ndarray(root)
        k = Kernel(self.header, self.const_block + root)
        k.comments.append("fuzz seed %s dtype %s reject %s features %s" % (self.seed, self.F, self.reject,
                                                                       ",".join(self.meta["features"])))
        return k, self.inputs, self.meta

    def y_to_ndarray(self, root):
        """Makes the output y an ndarray argument (0-d when y is 0-d): its pointers become
        external_ptr statements on a new argload, and the loss is named arg<K>."""
        self.feat("ndarray_output")
        K = 1 if self.has_arg else 0
        F = self.F
        self.header = [h for h in self.header if not h.startswith("field y ")]
        self.header.append("arg %d : ndarray<%s, %d>" % (K, F, 0 if self.y0d else 1))
        if not self.y0d:
            self.header.append("dense y : [%d]" % self.N)  # the index space a struct for may run over
        base = self.new("*" + F, "=", "argload[%d]" % K, kind="argload", block=self.const_block)
        stack = list(root)
        while stack:
            st = stack.pop()
            if st.blocks:
                for b in st.blocks:
                    stack.extend(b)
            if st.kind == "gptr" and st.text.startswith("global ptr [y]"):
                st.text = "external_ptr {0}, [%s] layout=AOS is_grad=false" % ("" if self.y0d else "{1}")
                st.ops = [base] + st.ops
        args = self.inputs.setdefault("args", [])
        while len(args) < K:
            args.append(0)
        args.append({"shape": [] if self.y0d else [self.N], "data": 0 if self.y0d else [0] * self.N})
        self.meta["loss"] = "arg%d" % K

    def xname_of(self, F):
        for n, f in self.fields.items():
            if f["dtype"] == F and f["grad"] and f["shape"] and n.startswith("x"):
                return n
        # fall back: add one
        self.add_field("xr", F, [FS], True, [0.5] * FS)
        return "xr"


def generate(seed, reject=None, opts=None):
    return Gen(seed, reject, opts).generate()


if __name__ == "__main__":
    seed = int(sys.argv[1])
    rej = sys.argv[2] if len(sys.argv) > 2 else None
    k, inp, meta = generate(seed, rej)
    sys.stdout.write(k.render())
    sys.stderr.write(json.dumps(inp) + "\n")
