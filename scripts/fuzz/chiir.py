"""A tiny structured model of CHI IR text, enough to generate, print and minimize kernels."""


class Stmt:
    __slots__ = ("id", "ty", "sep", "text", "ops", "blocks", "kind")

    def __init__(self, id, ty, sep, text, ops=(), blocks=None, kind=""):
        self.id = id
        self.ty = ty          # result type hint or None
        self.sep = sep        # '=' value, ':' effect, 'continue'
        self.text = text      # format string, {0} {1} ... are operand refs
        self.ops = list(ops)  # Stmt objects
        self.blocks = blocks  # None, or list of lists (for: [body], if: [then] or [then, else])
        self.kind = kind      # const, alloca, for, if, while, store, ...

    def head(self):
        t = self.text.format(*["$%d" % o.id for o in self.ops])
        if self.sep == "continue":
            return "$%d continue" % self.id
        pre = ("<%s> " % self.ty) if self.ty else ""
        return "%s$%d %s %s" % (pre, self.id, self.sep, t)


class Kernel:
    def __init__(self, header, root):
        self.header = header  # list of lines
        self.root = root      # list of Stmt
        self.comments = []

    def render(self):
        out = ["# " + c for c in self.comments]
        out += list(self.header)
        out.append("kernel {")

        def emit(block, ind):
            for s in block:
                if s.blocks is None:
                    out.append("  " * ind + s.head())
                    continue
                out.append("  " * ind + s.head() + " {")
                emit(s.blocks[0], ind + 1)
                for b in s.blocks[1:]:
                    out.append("  " * ind + "} else {")
                    emit(b, ind + 1)
                out.append("  " * ind + "}")

        emit(self.root, 1)
        out.append("}")
        return "\n".join(out) + "\n"

    # ---- helpers for minimization -------------------------------------------------
    def walk(self):
        """Yield (stmt, parent_block) pairs in pre-order."""
        def rec(block):
            for s in block:
                yield s, block
                if s.blocks:
                    for b in s.blocks:
                        yield from rec(b)
        yield from rec(self.root)

    def count(self):
        return sum(1 for _ in self.walk())
