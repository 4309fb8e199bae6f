#include "ir/size_expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/kernel.h"
#include "ir/lexer.h"
#include "ir/small_vector.h"

namespace pb::ir {

// ---- nodes ----

SizeExprPtr SizeExpr::constant(int64_t value) {
  PB_ASSERT(value >= 0, "size constants are non-negative");
  return SizeExprPtr(new SizeExpr(SizeOp::Const, value, {}, {}));
}
SizeExprPtr SizeExpr::arg(int index) { return SizeExprPtr(new SizeExpr(SizeOp::Arg, index, {}, {})); }
SizeExprPtr SizeExpr::field(std::string name, std::vector<SizeExprPtr> indices) {
  return SizeExprPtr(new SizeExpr(SizeOp::Field, 0, std::move(name), std::move(indices)));
}
SizeExprPtr SizeExpr::ndarray(int arg_index, std::vector<SizeExprPtr> indices) {
  return SizeExprPtr(new SizeExpr(SizeOp::Ndarray, arg_index, {}, std::move(indices)));
}
SizeExprPtr SizeExpr::var(std::string name) { return SizeExprPtr(new SizeExpr(SizeOp::Var, 0, std::move(name), {})); }
SizeExprPtr SizeExpr::binary(SizeOp op, SizeExprPtr lhs, SizeExprPtr rhs) {
  PB_ASSERT(op == SizeOp::Add || op == SizeOp::Sub || op == SizeOp::Mul || op == SizeOp::Max || op == SizeOp::Min ||
                op == SizeOp::FloorDiv || op == SizeOp::Mod,
            "not a binary size op");
  PB_ASSERT((op != SizeOp::FloorDiv && op != SizeOp::Mod) || (rhs->is_const() && rhs->value() > 0),
            "size division and remainder are by a positive constant");
  return SizeExprPtr(new SizeExpr(op, 0, {}, {std::move(lhs), std::move(rhs)}));
}
SizeExprPtr SizeExpr::max_over_range(std::string var, SizeExprPtr begin, SizeExprPtr end, SizeExprPtr body) {
  return SizeExprPtr(
      new SizeExpr(SizeOp::MaxOverRange, 0, std::move(var), {std::move(begin), std::move(end), std::move(body)}));
}

namespace {

int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}
int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<int64_t>::max() : r;
}
bool is_const(const SizeExprPtr& e, int64_t v) { return e->is_const() && e->value() == v; }

// Non-decreasing in `var` (all values are non-negative, so sums, products, maxima and minima are).
bool monotone_in(const SizeExpr& e, std::string_view var) {
  auto ops = e.operands();
  switch (e.op()) {
    case SizeOp::Const:
    case SizeOp::Arg:
    case SizeOp::Var:
      return true;
    case SizeOp::Field:
    case SizeOp::Ndarray:
    case SizeOp::Mod:  // wraps around: monotone only where it does not depend on var
      return std::none_of(ops.begin(), ops.end(), [&](const SizeExprPtr& i) { return mentions(*i, var); });
    case SizeOp::FloorDiv:
      return monotone_in(*ops[0], var);
    case SizeOp::Add:
    case SizeOp::Mul:
    case SizeOp::Max:
    case SizeOp::Min:
      return monotone_in(*ops[0], var) && monotone_in(*ops[1], var);
    case SizeOp::Sub:
      return monotone_in(*ops[0], var) && !mentions(*ops[1], var);
    case SizeOp::MaxOverRange:
      return !mentions(*ops[0], var) && monotone_in(*ops[1], var) && (e.name() == var || monotone_in(*ops[2], var));
  }
  return false;
}

}  // namespace

// ---- folding builders ----

SizeExprPtr fold_add(SizeExprPtr a, SizeExprPtr b) {
  if (a->is_const() && b->is_const()) return SizeExpr::constant(sat_add(a->value(), b->value()));
  if (is_const(a, 0)) return b;
  if (is_const(b, 0)) return a;
  if (b->is_const()) std::swap(a, b);
  if (a->is_const() && b->op() == SizeOp::Add && b->operands()[0]->is_const())
    return SizeExpr::binary(SizeOp::Add, SizeExpr::constant(sat_add(a->value(), b->operands()[0]->value())),
                            b->operands()[1]);
  return SizeExpr::binary(SizeOp::Add, std::move(a), std::move(b));
}

SizeExprPtr fold_sub(SizeExprPtr a, SizeExprPtr b) {
  if (a->is_const() && b->is_const()) return SizeExpr::constant(std::max<int64_t>(a->value() - b->value(), 0));
  if (is_const(b, 0)) return a;
  if (is_const(a, 0) || equal(*a, *b)) return SizeExpr::constant(0);
  return SizeExpr::binary(SizeOp::Sub, std::move(a), std::move(b));
}

SizeExprPtr fold_mul(SizeExprPtr a, SizeExprPtr b) {
  if (a->is_const() && b->is_const()) return SizeExpr::constant(sat_mul(a->value(), b->value()));
  if (is_const(a, 0) || is_const(b, 0)) return SizeExpr::constant(0);
  if (is_const(a, 1)) return b;
  if (is_const(b, 1)) return a;
  if (b->is_const()) std::swap(a, b);
  if (a->is_const() && b->op() == SizeOp::Mul && b->operands()[0]->is_const())
    return SizeExpr::binary(SizeOp::Mul, SizeExpr::constant(sat_mul(a->value(), b->operands()[0]->value())),
                            b->operands()[1]);
  return SizeExpr::binary(SizeOp::Mul, std::move(a), std::move(b));
}

SizeExprPtr fold_max(SizeExprPtr a, SizeExprPtr b) {
  if (a->is_const() && b->is_const()) return SizeExpr::constant(std::max(a->value(), b->value()));
  if (is_const(a, 0) || equal(*a, *b)) return b;
  if (is_const(b, 0)) return a;
  return SizeExpr::binary(SizeOp::Max, std::move(a), std::move(b));
}

SizeExprPtr fold_min(SizeExprPtr a, SizeExprPtr b) {
  if (a->is_const() && b->is_const()) return SizeExpr::constant(std::min(a->value(), b->value()));
  if (is_const(a, 0) || equal(*a, *b)) return a;
  if (is_const(b, 0)) return b;
  return SizeExpr::binary(SizeOp::Min, std::move(a), std::move(b));
}

SizeExprPtr fold_floordiv(SizeExprPtr a, int64_t divisor) {
  PB_ASSERT(divisor > 0, "size division is by a positive constant");
  if (a->is_const()) return SizeExpr::constant(a->value() / divisor);
  if (divisor == 1) return a;
  return SizeExpr::binary(SizeOp::FloorDiv, std::move(a), SizeExpr::constant(divisor));
}

SizeExprPtr fold_mod(SizeExprPtr a, int64_t divisor) {
  PB_ASSERT(divisor > 0, "size remainder is by a positive constant");
  if (a->is_const()) return SizeExpr::constant(a->value() % divisor);
  if (divisor == 1) return SizeExpr::constant(0);
  return SizeExpr::binary(SizeOp::Mod, std::move(a), SizeExpr::constant(divisor));
}

SizeExprPtr fold_max_over_range(const std::string& var, SizeExprPtr begin, SizeExprPtr end, SizeExprPtr body) {
  // Both rewrites give an upper bound: they differ from the maximum only on an empty range.
  if (!mentions(*body, var)) return body;
  if (monotone_in(*body, var)) return substitute(body, var, fold_sub(std::move(end), SizeExpr::constant(1)));
  return SizeExpr::max_over_range(var, std::move(begin), std::move(end), std::move(body));
}

// ---- structure ----

bool equal(const SizeExpr& a, const SizeExpr& b) {
  if (&a == &b) return true;
  if (a.op() != b.op() || a.value() != b.value() || a.name() != b.name()) return false;
  auto x = a.operands(), y = b.operands();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (!equal(*x[i], *y[i])) return false;
  return true;
}

bool mentions(const SizeExpr& e, std::string_view var) {
  if (e.op() == SizeOp::Var) return e.name() == var;
  auto ops = e.operands();
  if (e.op() == SizeOp::MaxOverRange)  // the body sees its own variable, not an outer one
    return mentions(*ops[0], var) || mentions(*ops[1], var) || (e.name() != var && mentions(*ops[2], var));
  return std::any_of(ops.begin(), ops.end(), [&](const SizeExprPtr& o) { return mentions(*o, var); });
}

SizeExprPtr substitute(const SizeExprPtr& e, std::string_view var, const SizeExprPtr& replacement) {
  if (!mentions(*e, var)) return e;
  auto ops = e->operands();
  auto sub = [&](size_t i) { return substitute(ops[i], var, replacement); };
  switch (e->op()) {
    case SizeOp::Var:
      return replacement;
    case SizeOp::Field: {
      std::vector<SizeExprPtr> idx;
      idx.reserve(ops.size());
      for (size_t i = 0; i < ops.size(); ++i) idx.push_back(sub(i));
      return SizeExpr::field(e->name(), std::move(idx));
    }
    case SizeOp::Ndarray: {
      std::vector<SizeExprPtr> idx;
      idx.reserve(ops.size());
      for (size_t i = 0; i < ops.size(); ++i) idx.push_back(sub(i));
      return SizeExpr::ndarray(static_cast<int>(e->value()), std::move(idx));
    }
    case SizeOp::FloorDiv:
      return fold_floordiv(sub(0), ops[1]->value());
    case SizeOp::Mod:
      return fold_mod(sub(0), ops[1]->value());
    case SizeOp::Add:
      return fold_add(sub(0), sub(1));
    case SizeOp::Sub:
      return fold_sub(sub(0), sub(1));
    case SizeOp::Mul:
      return fold_mul(sub(0), sub(1));
    case SizeOp::Max:
      return fold_max(sub(0), sub(1));
    case SizeOp::Min:
      return fold_min(sub(0), sub(1));
    case SizeOp::MaxOverRange:
      return fold_max_over_range(e->name(), sub(0), sub(1), e->name() == var ? ops[2] : sub(2));
    default:
      return e;
  }
}

std::vector<const SizeExpr*> nodes(const SizeExpr& e) {
  std::vector<const SizeExpr*> out{&e};
  for (const SizeExprPtr& o : e.operands()) {
    auto sub = nodes(*o);
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

namespace {
void collect_free(const SizeExpr& e, std::vector<std::string>& bound, std::vector<std::string>& out) {
  if (e.op() == SizeOp::Var) {
    if (std::find(bound.begin(), bound.end(), e.name()) == bound.end() &&
        std::find(out.begin(), out.end(), e.name()) == out.end())
      out.push_back(e.name());
    return;
  }
  auto ops = e.operands();
  for (size_t i = 0; i < ops.size(); ++i) {
    bool body = e.op() == SizeOp::MaxOverRange && i == 2;
    if (body) bound.push_back(e.name());
    collect_free(*ops[i], bound, out);
    if (body) bound.pop_back();
  }
}
}  // namespace

std::vector<std::string> free_variables(const SizeExpr& e) {
  std::vector<std::string> bound, out;
  collect_free(e, bound, out);
  return out;
}

// ---- text ----

namespace {

int precedence(const SizeExpr& e) {
  switch (e.op()) {
    case SizeOp::Add:
    case SizeOp::Sub:
      return 1;
    case SizeOp::Mul:
    case SizeOp::FloorDiv:
    case SizeOp::Mod:
      return 2;
    default:
      return 3;
  }
}

std::string wrapped(const SizeExpr& e, int min_precedence) {
  std::string t = to_string(e);
  return precedence(e) < min_precedence ? "(" + t + ")" : t;
}

}  // namespace

std::string to_string(const SizeExpr& e) {
  auto ops = e.operands();
  switch (e.op()) {
    case SizeOp::Const:
      return std::to_string(e.value());
    case SizeOp::Arg:
      return fmt::format("arg({})", e.value());
    case SizeOp::Field:
    case SizeOp::Ndarray: {
      std::string out = (e.op() == SizeOp::Field ? e.name() : fmt::format("arg({})", e.value())) + "[";
      for (size_t i = 0; i < ops.size(); ++i) out += (i ? ", " : "") + to_string(*ops[i]);
      return out + "]";
    }
    case SizeOp::Var:
      return e.name();
    case SizeOp::Add:
      return wrapped(*ops[0], 1) + " + " + wrapped(*ops[1], 2);
    case SizeOp::Sub:
      return wrapped(*ops[0], 1) + " - " + wrapped(*ops[1], 2);
    case SizeOp::Mul:
      return wrapped(*ops[0], 2) + " * " + wrapped(*ops[1], 3);
    case SizeOp::FloorDiv:
      return wrapped(*ops[0], 2) + " // " + wrapped(*ops[1], 3);
    case SizeOp::Mod:
      return wrapped(*ops[0], 2) + " % " + wrapped(*ops[1], 3);
    case SizeOp::Max:
      return fmt::format("max({}, {})", to_string(*ops[0]), to_string(*ops[1]));
    case SizeOp::Min:
      return fmt::format("min({}, {})", to_string(*ops[0]), to_string(*ops[1]));
    case SizeOp::MaxOverRange:
      return fmt::format("max({} in range({}, {}): {})", e.name(), to_string(*ops[0]), to_string(*ops[1]),
                         to_string(*ops[2]));
  }
  return "?";
}

namespace {

constexpr std::string_view kNameStops = " \t\r[](),+-*/%:#";

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

class SizeParser {
 public:
  explicit SizeParser(Cursor& cur) : cur_(cur) {}

  SizeExprPtr expr() {
    SizeExprPtr e = term();
    for (;;) {
      if (cur_.try_consume("+"))
        e = SizeExpr::binary(SizeOp::Add, e, term());
      else if (cur_.try_consume("-"))
        e = SizeExpr::binary(SizeOp::Sub, e, term());
      else
        return e;
    }
  }

 private:
  SizeExprPtr term() {
    SizeExprPtr e = atom();
    for (;;) {
      if (cur_.try_consume("*")) {
        e = SizeExpr::binary(SizeOp::Mul, e, atom());
      } else if (cur_.try_consume("//")) {
        e = SizeExpr::binary(SizeOp::FloorDiv, e, positive_constant("//"));
      } else if (cur_.try_consume("%")) {
        e = SizeExpr::binary(SizeOp::Mod, e, positive_constant("%"));
      } else {
        return e;
      }
    }
  }

  SizeExprPtr positive_constant(const char* op) {
    cur_.skip_blanks();
    size_t pos = cur_.pos();
    if (!std::isdigit(static_cast<unsigned char>(cur_.peek())))
      cur_.fail_at(pos, fmt::format("expected a positive integer after '{}'", op),
                   "sizes divide only by positive constants");
    int64_t v = cur_.read_int();
    if (v <= 0) cur_.fail_at(pos, fmt::format("expected a positive integer after '{}'", op));
    return SizeExpr::constant(v);
  }

  SizeExprPtr atom() {
    cur_.skip_blanks();
    size_t pos = cur_.pos();
    if (depth_ >= kMaxNestingDepth)
      cur_.fail(fmt::format("the size expression nests more than {} deep", kMaxNestingDepth));
    // A chain a + b + c ... is a tree as deep as it is long, and every walk over it recurses.
    if (++atoms_ > kMaxSizeAtoms) cur_.fail(fmt::format("the size expression has more than {} terms", kMaxSizeAtoms));
    ++depth_;
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    char c = cur_.peek();
    if (std::isdigit(static_cast<unsigned char>(c))) return SizeExpr::constant(cur_.read_int());
    if (cur_.try_consume("(")) {
      SizeExprPtr e = expr();
      cur_.expect(")", "to close the parenthesis");
      return e;
    }
    if (c == '\0' || c == '\n' || kNameStops.find(c) != std::string_view::npos)
      cur_.fail(
          "expected a size expression (a number, arg(N), a field load such as n[], max(...), min(...) or a variable)");
    std::string name = cur_.read_until(kNameStops, "a name");
    cur_.skip_blanks();
    if (cur_.peek() == '[') return field(name);
    if (cur_.peek() == '(') {
      if (name == "arg") {
        SizeExprPtr a = arg();
        if (cur_.peek() != '[') return a;
        std::vector<SizeExprPtr> idx = indices();
        return SizeExpr::ndarray(static_cast<int>(a->value()), std::move(idx));
      }
      if (name == "max") return max();
      if (name == "min") return min();
      cur_.fail_at(pos, fmt::format("unknown size function '{}'", name),
                   "size functions are arg(N), max(...) and min(a, b)");
    }
    if (!is_identifier(name) || std::find(bound_.begin(), bound_.end(), name) == bound_.end())
      cur_.fail_at(pos, fmt::format("'{}' is not a bound variable", name),
                   "a field load needs brackets (`n[]`, `m[2]`); variables are bound by max(v in range(a, b): ...)");
    return SizeExpr::var(name);
  }

  SizeExprPtr field(const std::string& name) { return SizeExpr::field(name, indices()); }

  std::vector<SizeExprPtr> indices() {
    cur_.expect("[");
    std::vector<SizeExprPtr> idx;
    if (!cur_.try_consume("]")) {
      do idx.push_back(expr());
      while (cur_.try_consume(","));
      cur_.expect("]", "to close the indices");
    }
    return idx;
  }

  SizeExprPtr arg() {
    cur_.expect("(");
    cur_.skip_blanks();
    size_t pos = cur_.pos();
    int64_t index = cur_.read_int();
    if (index < 0 || index > 1'000'000) cur_.fail_at(pos, "argument index out of range");
    cur_.expect(")", "to close arg(N)");
    return SizeExpr::arg(static_cast<int>(index));
  }

  // max(a, b) or max(v in range(begin, end): body)
  SizeExprPtr max() {
    cur_.expect("(");
    cur_.skip_blanks();
    size_t pos = cur_.pos();
    std::string var;
    if (std::isalpha(static_cast<unsigned char>(cur_.peek())) || cur_.peek() == '_') var = cur_.read_word();
    if (is_identifier(var) && cur_.try_keyword("in")) {
      cur_.expect("range", "in max(v in range(begin, end): ...)");
      cur_.expect("(");
      SizeExprPtr begin = expr();
      cur_.expect(",", "between the range's begin and end");
      SizeExprPtr end = expr();
      cur_.expect(")", "to close range(...)");
      cur_.expect(":", "before the body of max(v in range(...): body)");
      bound_.push_back(var);
      SizeExprPtr body = expr();
      bound_.pop_back();
      cur_.expect(")", "to close max(...)");
      return SizeExpr::max_over_range(var, begin, end, body);
    }
    cur_.reset(pos);
    SizeExprPtr a = expr();
    cur_.expect(",", "between the operands of max(a, b)");
    SizeExprPtr b = expr();
    cur_.expect(")", "to close max(a, b)");
    return SizeExpr::binary(SizeOp::Max, a, b);
  }

  // min(a, b)
  SizeExprPtr min() {
    cur_.expect("(");
    SizeExprPtr a = expr();
    cur_.expect(",", "between the operands of min(a, b)");
    SizeExprPtr b = expr();
    cur_.expect(")", "to close min(a, b)");
    return SizeExpr::binary(SizeOp::Min, a, b);
  }

  Cursor& cur_;
  std::vector<std::string> bound_;
  int depth_ = 0;  // atoms open around the one being read
  int atoms_ = 0;
  static constexpr int kMaxSizeAtoms = 4096;
};

}  // namespace

SizeExprPtr parse_size_expr(Cursor& cur) { return SizeParser(cur).expr(); }

SizeExprPtr parse_size_expr(std::string_view text, const std::string& file) {
  Cursor cur(text, file);
  SizeExprPtr e = parse_size_expr(cur);
  cur.skip_blanks();
  if (!cur.at_end())
    cur.fail(fmt::format("unexpected '{}' after the size expression", std::string(cur.rest_of_line())));
  return e;
}

// ---- evaluation ----

namespace {

class Evaluator {
 public:
  explicit Evaluator(const SizeEnv& env) : env_(env) {}

  int64_t eval(const SizeExpr& e) {
    auto ops = e.operands();
    switch (e.op()) {
      case SizeOp::Const:
        return e.value();
      case SizeOp::Arg:
        return std::max<int64_t>(env_.arg(static_cast<int>(e.value())), 0);
      case SizeOp::Field: {
        SmallVector<int64_t, 4> idx;  // no allocation per element of a max over a range
        for (const SizeExprPtr& i : ops) idx.push_back(eval(*i));
        return std::max<int64_t>(env_.field(e.name(), idx), 0);
      }
      case SizeOp::Ndarray: {
        SmallVector<int64_t, 4> idx;
        for (const SizeExprPtr& i : ops) idx.push_back(eval(*i));
        if (!env_.ndarray) throw UserError("this size expression reads an ndarray, which this backend cannot read");
        return std::max<int64_t>(env_.ndarray(static_cast<int>(e.value()), idx), 0);
      }
      case SizeOp::FloorDiv:
        return eval(*ops[0]) / ops[1]->value();
      case SizeOp::Mod:
        return eval(*ops[0]) % ops[1]->value();
      case SizeOp::Var:
        for (auto it = vars_.rbegin(); it != vars_.rend(); ++it)
          if (*it->first == e.name()) return it->second;
        throw UserError(fmt::format("size variable '{}' is not bound", e.name()));
      case SizeOp::Add:
        return sat_add(eval(*ops[0]), eval(*ops[1]));
      case SizeOp::Sub:
        return std::max<int64_t>(eval(*ops[0]) - eval(*ops[1]), 0);
      case SizeOp::Mul:
        return sat_mul(eval(*ops[0]), eval(*ops[1]));
      case SizeOp::Max:
        return std::max(eval(*ops[0]), eval(*ops[1]));
      case SizeOp::Min:
        return std::min(eval(*ops[0]), eval(*ops[1]));
      case SizeOp::MaxOverRange: {
        int64_t begin = eval(*ops[0]), end = eval(*ops[1]), best = 0;
        if (end > begin && end - begin > kMaxSizeIterations - iterations_)
          throw UserError(
              fmt::format("size expression `{}` iterates over more than {} values", to_string(e), kMaxSizeIterations),
              "bound the loop by a smaller range or give a fixed ad_stack_size");
        for (int64_t v = begin; v < end; ++v) {
          ++iterations_;
          vars_.emplace_back(&e.name(), v);
          best = std::max(best, eval(*ops[2]));
          vars_.pop_back();
        }
        return best;
      }
    }
    return 0;
  }

 private:
  const SizeEnv& env_;
  std::vector<std::pair<const std::string*, int64_t>> vars_;  // names live in the expression
  int64_t iterations_ = 0;
};

}  // namespace

int64_t evaluate(const SizeExpr& e, const SizeEnv& env) { return Evaluator(env).eval(e); }

}  // namespace pb::ir
