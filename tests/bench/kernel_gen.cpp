#include "kernel_gen.h"

#include <fmt/format.h>

#include <random>

#include "ir/builder.h"

namespace pb::bench {

using namespace ir;

namespace {

struct Gen {
  Kernel& k;
  Builder b;
  std::mt19937_64 rng;
  FieldId x, y;
  size_t emitted = 0;

  Gen(Kernel& kernel, uint64_t seed) : k(kernel), b(kernel), rng(seed), x(f32_field("x")), y(f32_field("y")) {}

  FieldId f32_field(const char* name) {
    return k.add_field({.name = name,
                        .dtype = ScalarKind::f32,
                        .shape = ir::Shape{1024},
                        .grad = {},
                        .dual = {},
                        .primal = {},
                        .space = "",
                        .declared = true});
  }

  size_t pick(size_t n) { return static_cast<size_t>(rng() % n); }

  // One "chunk" of ~12 statements: a load, constants (some duplicated), arithmetic with
  // foldable parts, a dead chain, a store.
  void chunk(Stmt* index) {
    Stmt* ptr = b.global_ptr(x, {index});
    Stmt* v = b.global_load(ptr);
    Stmt* c1 = b.const_f32(static_cast<float>(pick(7) + 1) * 0.5f);
    Stmt* c2 = b.const_f32(2.0f);
    Stmt* folded = b.binary(BinaryOp::mul, c1, c2);  // constant: folds
    Stmt* t = b.binary(BinaryOp::mul, v, folded);
    Stmt* one = b.const_f32(1.0f);
    Stmt* same = b.binary(BinaryOp::mul, t, one);  // identity
    Stmt* s = b.unary(UnaryOp::sin, same);
    b.unary(UnaryOp::cos, t);                        // dead
    Stmt* dup = b.binary(BinaryOp::mul, v, folded);  // CSE with t
    Stmt* sum = b.binary(BinaryOp::add, s, dup);
    b.global_store(b.global_ptr(y, {index}), sum);
    emitted += 14;
  }
};

}  // namespace

std::unique_ptr<Kernel> generate_kernel(KernelShape shape, size_t statements, uint64_t seed) {
  auto k = std::make_unique<Kernel>();
  k->name = shape == KernelShape::StraightLine ? "straight_line" : "loop_nested";
  Gen g(*k, seed);
  if (shape == KernelShape::StraightLine) {
    while (g.emitted < statements) {
      Stmt* idx = g.b.const_i32(static_cast<int32_t>(g.pick(1024)));
      ++g.emitted;
      g.chunk(idx);
    }
    return k;
  }
  // Loop nests of depth 3 (i: 4, j: 4, k: 8 trips), each innermost body holding a few chunks.
  while (g.emitted < statements) {
    InsertionGuard guard(g.b);
    Stmt* zero = g.b.const_i32(0);
    Stmt* n4 = g.b.const_i32(4);
    Stmt* n8 = g.b.const_i32(8);
    auto* outer = g.b.range_for(zero, n4);
    g.b.set_insertion_point_end(*outer->body);
    auto* mid = g.b.range_for(zero, n4);
    g.b.set_insertion_point_end(*mid->body);
    auto* inner = g.b.range_for(zero, n8);
    g.b.set_insertion_point_end(*inner->body);
    Stmt* i = g.b.loop_index(inner);
    g.emitted += 7;
    for (int c = 0; c < 8 && g.emitted < statements; ++c) g.chunk(i);
  }
  return k;
}

std::string carried_loop_kernel(int64_t n, double scale, double shift) {
  return fmt::format(R"(field x : f32[{0}] grad x_grad
field n : i32[{0}]
field y : f32[{0}] grad y_grad
kernel "carried" {{
  <i32> $0 = const 0
  <i32> $1 = const {0}
  <f32> $2 = const {1}
  <f32> $3 = const {2}
  $4 : for in range($0, $1) block_dim=adaptive {{
    <i32> $5 = loop $4 index 0
    <*f32> $6 = global ptr [x], index [$5] activate=true
    <f32> $7 = global load $6
    <*f32> $8 = alloca
    <f32> $9 : local store [$8 <- $7]
    <*i32> $10 = global ptr [n], index [$5] activate=true
    <i32> $11 = global load $10
    $12 : for in range($0, $11) block_dim=adaptive {{
      <f32> $13 = local load [$8]
      <f32> $14 = sin $13
      <f32> $15 = mul $14 $2
      <f32> $16 = add $15 $3
      <f32> $17 : local store [$8 <- $16]
    }}
    <f32> $18 = local load [$8]
    <*f32> $19 = global ptr [y], index [$5] activate=true
    $20 : global store [$19 <- $18]
  }}
}}
)",
                     n, scale, shift);
}

}  // namespace pb::bench
