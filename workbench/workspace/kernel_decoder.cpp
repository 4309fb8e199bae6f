#include "workbench/workspace/kernel_decoder.h"

#include <array>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/assert.h"
#include "ir/builder.h"
#include "ir/type_rules.h"

namespace pb::workbench {

namespace {

using namespace pb::ir;

constexpr int kMaxStatements = 160;  // per kernel, so that one execution stays fast
constexpr int kMaxLoopDepth = 4;     // nested blocks below the parallel loop

constexpr std::array kFloatUnary = {UnaryOp::neg,  UnaryOp::sqrt,  UnaryOp::rsqrt, UnaryOp::sin,
                                    UnaryOp::cos,  UnaryOp::tan,   UnaryOp::tanh,  UnaryOp::asin,
                                    UnaryOp::acos, UnaryOp::exp,   UnaryOp::log,   UnaryOp::abs,
                                    UnaryOp::sgn,  UnaryOp::floor, UnaryOp::ceil,  UnaryOp::round};
constexpr std::array kFloatBinary = {BinaryOp::add, BinaryOp::sub, BinaryOp::mul, BinaryOp::div,   BinaryOp::mod,
                                     BinaryOp::pow, BinaryOp::max, BinaryOp::min, BinaryOp::atan2, BinaryOp::floordiv};
constexpr std::array kIntBinary = {BinaryOp::add,    BinaryOp::sub,     BinaryOp::mul,     BinaryOp::floordiv,
                                   BinaryOp::mod,    BinaryOp::max,     BinaryOp::min,     BinaryOp::bit_and,
                                   BinaryOp::bit_or, BinaryOp::bit_xor, BinaryOp::bit_shl, BinaryOp::bit_shr,
                                   BinaryOp::bit_sar};
constexpr std::array kCompare = {BinaryOp::cmp_lt, BinaryOp::cmp_le, BinaryOp::cmp_gt,
                                 BinaryOp::cmp_ge, BinaryOp::cmp_eq, BinaryOp::cmp_ne};
constexpr std::array kAtomic = {AtomicOp::add, AtomicOp::sub, AtomicOp::max, AtomicOp::min};
constexpr std::array kFloatConstants = {0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 3.0, 0.25};

class Decoder {
 public:
  Decoder(KernelChoices& choices, const DecodeOptions& options) : in_(choices), options_(options) {}

  DecodedKernel run() {
    declare();
    b_.set_insertion_point_end(k_->root());
    zero_ = b_.const_i32(0);
    loops_ = 1 + range(0, 1);
    for (int i = 0; i < loops_ && statements_ < kMaxStatements; ++i) parallel_loop();
    DecodedKernel out;
    out.inputs = inputs();
    out.kernel = std::move(k_);
    return out;
  }

 private:
  // Values visible at the insertion point, by kind; blocks truncate them on exit.
  struct Visible {
    std::vector<Stmt*> floats, ints, indices, bools, locals;
    Stmt* own = nullptr;  // the parallel loop's index
  };

  int64_t range(int64_t lo, int64_t hi) { return in_.in_range(lo, hi); }

  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[range(0, v.size() - 1)];
  }
  template <class T, size_t N>
  T pick(const std::array<T, N>& a) {
    return a[range(0, N - 1)];
  }

  // Inserts `s` when it is well typed (the decoder never builds what the verifier rejects).
  template <class T>
  T* add(std::unique_ptr<T> s) {
    if (!type_rule(*s, *k_).error.empty()) return nullptr;
    ++statements_;
    return static_cast<T*>(b_.insert(std::move(s)));
  }

  FieldId field(const std::string& name, ScalarKind dtype, const Shape& shape, bool with_grad) {
    Field f;
    f.name = name;
    f.dtype = dtype;
    f.shape = shape;
    f.declared = true;
    FieldId id = k_->add_field(f);
    if (with_grad) {
      f.name = name + "_grad";
      FieldId g = k_->add_field(f);
      k_->field(g).primal = id;
      k_->field(id).grad = g;
    }
    return id;
  }

  void declare() {
    const ScalarKind reals[] = {ScalarKind::f32, ScalarKind::f64, ScalarKind::f16};
    real_ = reals[range(0, 2)];
    n_ = range(1, 6);
    x_ = field("x", real_, {n_}, true);
    w_ = field("w", real_, {n_}, true);
    y_ = field("y", real_, {n_}, true);
    s_ = field("s", real_, {}, true);
    trips_ = field("trips", ScalarKind::i32, {n_}, false);
    ndarray_ = in_.flag();
    if (ndarray_) k_->args.push_back(ArgDecl{.index = 0, .dtype = real_, .ndarray = true, .ndim = 1});
  }

  nlohmann::json inputs() {
    auto reals = [&] {
      nlohmann::json a = nlohmann::json::array();
      for (int64_t i = 0; i < n_; ++i) a.push_back(pick(kFloatConstants) + 0.125 * static_cast<double>(i));
      return a;
    };
    nlohmann::json trips = nlohmann::json::array();
    for (int64_t i = 0; i < n_; ++i) trips.push_back(range(0, 4));
    nlohmann::json j = {
        {"fields", {{"x", {{"data", reals()}}}, {"w", {{"data", reals()}}}, {"trips", {{"data", trips}}}}}};
    if (ndarray_) j["args"] = {{{"shape", {n_}}, {"data", reals()}, {"grad", reals()}}};
    return j;
  }

  Stmt* real_constant() {
    double v = range(0, 15) == 0 ? in_.real() : pick(kFloatConstants);
    return add(k_->make<ConstStmt>(Value::from_double(real_, v)));
  }

  // A pointer at an index in range: reads from x, w or the ndarray; writes to y or s. Mostly
  // disjoint, so that reverse_ad seldom refuses a read-after-write; one read in eight is of y.
  // Race-free: y only at the parallel loop's own index, s only by atomics.
  Stmt* element(Visible& v, bool writable, bool atomic = false) {
    Stmt* index = pick(v.indices);
    int which = range(0, 7);
    if (options_.race_free && (writable || which == 0)) index = v.own;
    if (writable) {
      if (which == 0 && (atomic || !options_.race_free)) return add(k_->make<GlobalPtrStmt>(s_, std::vector<Stmt*>{}));
      return add(k_->make<GlobalPtrStmt>(y_, std::vector<Stmt*>{index}));
    }
    if (which >= 5 && ndarray_) {
      Stmt* base = add(k_->make<ArgLoadStmt>(0, DataType::pointer_to(real_)));
      return add(k_->make<ExternalPtrStmt>(base, std::vector<Stmt*>{index}));
    }
    FieldId f = which == 0 ? y_ : which % 2 ? x_ : w_;
    return add(k_->make<GlobalPtrStmt>(f, std::vector<Stmt*>{index}));
  }

  // An atomic on y or s. Race-free: the old value of one on s is left unused, since which value
  // it returns depends on how the iterations interleave (a GPU's do, the interpreter's shuffle
  // of whole iterations does not); and every atomic on s is of one commuting kind (add and sub,
  // or max, or min), since `min` then `add` and `add` then `min` end differently.
  void add_atomic(Visible& v) {
    auto* dest = static_cast<GlobalPtrStmt*>(element(v, true, true));
    AtomicOp op = pick(kAtomic);
    if (dest && options_.race_free && dest->field == s_) op = commuting_on_s(op);
    Stmt* a = add(k_->make<AtomicOpStmt>(op, dest, pick(v.floats)));
    if (a && (!options_.race_free || dest->field != s_)) v.floats.push_back(a);
  }

  // The first atomic on s fixes the kind; a later one of another kind becomes the first's op.
  AtomicOp commuting_on_s(AtomicOp op) {
    auto additive = [](AtomicOp o) { return o == AtomicOp::add || o == AtomicOp::sub; };
    if (!s_atomic_) s_atomic_ = op;
    if (additive(*s_atomic_) && additive(op)) return op;
    return *s_atomic_;
  }

  void parallel_loop() {
    Visible v;
    v.indices.push_back(zero_);
    Block* body = nullptr;
    if (range(0, 3) == 0) {
      auto* loop = add(k_->make<StructForStmt>("x"));
      body = loop->body.get();
      b_.set_insertion_point_end(*body);
      v.indices.push_back(add(k_->make<LoopIndexStmt>(loop, 0)));
    } else {
      auto* loop = add(k_->make<RangeForStmt>(zero_, add(k_->make<ConstStmt>(Value::make_i32(int32_t(n_))))));
      body = loop->body.get();
      b_.set_insertion_point_end(*body);
      v.indices.push_back(add(k_->make<LoopIndexStmt>(loop, 0)));
    }
    v.own = v.indices.back();
    v.floats.push_back(add(k_->make<GlobalLoadStmt>(element(v, false))));
    v.ints.push_back(v.indices.back());
    block(v, 1);
    // Every loop writes something, so reverse mode has a gradient to propagate.
    add(k_->make<GlobalStoreStmt>(element(v, true), pick(v.floats)));
    b_.set_insertion_point_end(k_->root());
  }

  // Generates statements at the insertion point; what it defines is visible only inside.
  void block(Visible v, int depth) {
    int count = range(1, 8);
    for (int i = 0; i < count && statements_ < kMaxStatements && !in_.exhausted(); ++i) statement(v, depth);
  }

  Stmt* boolean(Visible& v) {
    if (!v.bools.empty() && in_.flag()) return pick(v.bools);
    Stmt* c = in_.flag() ? add(k_->make<BinaryOpStmt>(pick(kCompare), pick(v.floats), pick(v.floats)))
                         : add(k_->make<BinaryOpStmt>(pick(kCompare), pick(v.ints), pick(v.ints)));
    v.bools.push_back(c);
    return c;
  }

  void nested(Visible& v, Block& body, int depth) {
    InsertionGuard guard(b_);
    b_.set_insertion_point_end(body);
    block(v, depth + 1);
  }

  void statement(Visible& v, int depth) {
    auto push = [](std::vector<Stmt*>& to, Stmt* s) {
      if (s) to.push_back(s);
    };
    switch (range(0, 15)) {
      case 0:
        push(v.floats, real_constant());
        break;
      case 1:
        push(v.ints, add(k_->make<ConstStmt>(Value::make_i32(range(-2, 8)))));
        break;
      case 2:
        push(v.floats, add(k_->make<UnaryOpStmt>(pick(kFloatUnary), pick(v.floats))));
        break;
      case 3:
      case 4: {
        BinaryOp op = pick(kFloatBinary);
        Stmt* rhs = op == BinaryOp::pow && in_.flag() ? pick(v.ints) : pick(v.floats);
        push(v.floats, add(k_->make<BinaryOpStmt>(op, pick(v.floats), rhs)));
        break;
      }
      case 5:
        push(v.ints, add(k_->make<BinaryOpStmt>(pick(kIntBinary), pick(v.ints), pick(v.ints))));
        break;
      case 6: {
        // (a + b) mod n of two in-range indices is in range.
        Stmt* sum = add(k_->make<BinaryOpStmt>(BinaryOp::add, pick(v.indices), pick(v.indices)));
        Stmt* n = add(k_->make<ConstStmt>(Value::make_i32(int32_t(n_))));
        push(v.indices, add(k_->make<BinaryOpStmt>(BinaryOp::mod, sum, n)));
        break;
      }
      case 7:
        push(v.floats, add(k_->make<TernaryOpStmt>(boolean(v), pick(v.floats), pick(v.floats))));
        break;
      case 8:
        push(v.floats, add(k_->make<GlobalLoadStmt>(element(v, false))));
        break;
      case 9:
        if (in_.flag())
          add(k_->make<GlobalStoreStmt>(element(v, true), pick(v.floats)));
        else
          add_atomic(v);
        break;
      case 10: {
        Stmt* local = add(k_->make<AllocaStmt>(real_));
        add(k_->make<LocalStoreStmt>(local, pick(v.floats)));
        v.locals.push_back(local);
        break;
      }
      case 11:
        if (!v.locals.empty()) add(k_->make<LocalStoreStmt>(pick(v.locals), pick(v.floats)));
        break;
      case 12:
        if (!v.locals.empty()) push(v.floats, add(k_->make<LocalLoadStmt>(pick(v.locals))));
        break;
      case 13:
        if (in_.flag())
          push(v.floats, add(cast(pick(v.ints), real_)));
        else
          push(v.ints, add(cast(pick(v.floats), ScalarKind::i32)));
        break;
      case 14:
        if (depth < kMaxLoopDepth) {
          auto* s = add(k_->make<IfStmt>(boolean(v)));
          if (!s) break;
          nested(v, *s->true_block, depth);
          if (in_.flag()) nested(v, s->ensure_false_block(), depth);
        }
        break;
      default:  // 15
        if (depth < kMaxLoopDepth) loop(v, depth);
        break;
    }
  }

  std::unique_ptr<UnaryOpStmt> cast(Stmt* x, ScalarKind to) {
    auto s = k_->make<UnaryOpStmt>(UnaryOp::cast_value, x);
    s->type = DataType::of(to);
    return s;
  }

  // A serial loop whose trip count is a constant or a `trips` element (0..4), counting up or down.
  void loop(Visible& v, int depth) {
    Stmt* end = nullptr;
    if (in_.flag()) {
      end = add(k_->make<ConstStmt>(Value::make_i32(range(0, 4))));
    } else {
      Stmt* p = add(k_->make<GlobalPtrStmt>(trips_, std::vector<Stmt*>{pick(v.indices)}));
      end = add(k_->make<GlobalLoadStmt>(p));
    }
    auto s = k_->make<RangeForStmt>(zero_, end);
    s->reversed = range(0, 3) == 0;
    auto* loop = add(std::move(s));
    Visible inner = v;
    InsertionGuard guard(b_);
    b_.set_insertion_point_end(*loop->body);
    Stmt* index = add(k_->make<LoopIndexStmt>(loop, 0));
    inner.ints.push_back(index);
    if (n_ > 4) inner.indices.push_back(index);  // trip counts are at most 4, so the index is < n
    block(inner, depth + 1);
  }

  KernelChoices& in_;
  DecodeOptions options_;
  std::unique_ptr<Kernel> k_ = std::make_unique<Kernel>();
  Builder b_{*k_};
  ScalarKind real_ = ScalarKind::f32;
  int64_t n_ = 1;
  FieldId x_{}, w_{}, y_{}, s_{}, trips_{};
  bool ndarray_ = false;
  Stmt* zero_ = nullptr;
  int loops_ = 1;
  int statements_ = 0;
  std::optional<AtomicOp> s_atomic_;  // race-free: the kind of every atomic on s
};

}  // namespace

DecodedKernel decode_kernel(KernelChoices& choices, const DecodeOptions& options) {
  return Decoder(choices, options).run();
}

namespace {

// Choices drawn from a seeded std::mt19937_64, exhausted after a budget drawn from the same seed
// (so that kernel sizes vary as they do for fuzzer inputs of different lengths).
class SeededChoices final : public KernelChoices {
 public:
  explicit SeededChoices(uint64_t seed) : random_(seed) { budget_ = 40 + random_() % 360; }
  int64_t in_range(int64_t lo, int64_t hi) override {
    PB_ASSERT(lo <= hi, "in_range: empty range");
    ++used_;
    uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
    if (span == UINT64_MAX) return static_cast<int64_t>(random_());
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + random_() % (span + 1));
  }
  bool flag() override { return in_range(0, 1) == 1; }
  // A finite constant of moderate size, sign * [1, 2) * 2^e with e in [-4, 4]: far from the
  // overflow and underflow that would leave only infinities and NaNs to compare.
  double real() override {
    double mantissa = 1.0 + static_cast<double>(random_() >> 11) * 0x1p-53;
    double v = std::ldexp(mantissa, static_cast<int>(in_range(-4, 4)));
    return flag() ? -v : v;
  }
  bool exhausted() override { return used_ >= budget_; }

 private:
  std::mt19937_64 random_;
  uint64_t budget_ = 0, used_ = 0;
};

}  // namespace

DecodedKernel generate_kernel(uint64_t seed) {
  SeededChoices choices(seed);
  return decode_kernel(choices, {.race_free = true});
}

}  // namespace pb::workbench
