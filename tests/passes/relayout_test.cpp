// relayout moves statements, never changes them: every fixture's pipeline, run one pass at a
// time with a relayout after each, prints the same IR after every pass as the plain run, and
// every link the move rewrites (neighbours, blocks, owners, operands, use lists) is consistent.
#include "ir/relayout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ir/builder.h"
#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "tests/every_kind_samples.h"
#include "tests/fixture_params.h"
#include "workbench/workspace/fixture_backends.h"

namespace pb {
namespace {

using namespace ir;

// Every link relayout rewrites, checked both ways.
void expect_links_consistent(const Kernel& k) {
  walk(k.root(), [&](Stmt& s) {
    Block* b = s.parent();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(s.prev() ? s.prev()->next() : b->front(), &s);
    EXPECT_EQ(s.next() ? s.next()->prev() : b->back(), &s);
    for (size_t i = 0; i < s.num_operands(); ++i) {
      const Stmt* op = s.operand(i);
      if (!op) continue;
      bool found = false;
      for (const Stmt::Use& u : op->uses()) found = found || (u.user() == &s && u.slot() == i);
      EXPECT_TRUE(found) << "operand " << i << " of $" << s.id << " does not list it as a user";
    }
    for (const Stmt::Use& u : s.uses()) EXPECT_EQ(u.user()->operand(u.slot()), &s) << "a use of $" << s.id;
    if (s.is_container())
      for (const Block* child : s.blocks())
        if (child) {
          EXPECT_EQ(child->owner(), &s);
        }
  });
}

class RelayoutFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(RelayoutFixture, EveryPassGivesTheSameIrWithARelayoutAfterIt) {
  auto fx = test::read_fixture(GetParam());
  std::unique_ptr<Kernel> plain;
  try {
    plain =
        workbench::fixture_kernel(fx, (std::filesystem::path(PASSBENCH_SOURCE_DIR) / "fixtures" / GetParam()).string());
  } catch (const UserError& e) {
    FAIL() << "the fixture declares no parse or verify error: " << e.what();
  }
  auto moved = plain->clone();
  ir::relayout(*moved);
  expect_links_consistent(*moved);
  ASSERT_EQ(print_kernel(*moved), print_kernel(*plain));
  if (test::declared_error_stage(fx) == "pipeline") return;  // its pipeline is the bad input it pins
  passes::Pipeline pipeline = passes::parse_pipeline(fx.value("pipeline", "simplify,dce"));
  passes::RunOptions ro;
  ro.capture = passes::Capture::none;
  for (const passes::PipelineEntry& e : pipeline.entries) {
    passes::Pipeline one{{e}};
    bool plain_failed = passes::run_pipeline(*plain, one, ro).failed;
    bool moved_failed = passes::run_pipeline(*moved, one, ro).failed;
    ASSERT_EQ(moved_failed, plain_failed) << "after " << e.to_string();
    if (plain_failed) return;
    size_t count = 0;
    walk(moved->root(), [&](Stmt&) { ++count; });
    EXPECT_LE(ir::relayout(*moved), count);
    expect_links_consistent(*moved);
    ASSERT_EQ(print_kernel(*moved), print_kernel(*plain)) << "after " << e.to_string();
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RelayoutFixture, ::testing::ValuesIn(test::readable_fixture_names()),
                         test::fixture_test_name);

// Statements of one size class land side by side in pre-order, whatever order they were made in.
TEST(Relayout, StatementsEndUpAdjacentInPreOrder) {
  Kernel k;
  Builder b(k);
  std::vector<Stmt*> consts;
  consts.reserve(3000);
  for (int i = 0; i < 3000; ++i) consts.push_back(b.const_i32(i));
  // Interleave allocations, then free every other one, so the pool's free lists are scattered.
  std::vector<Stmt*> adds;
  for (int i = 0; i + 1 < 3000; i += 2) adds.push_back(b.binary(BinaryOp::add, consts[i], consts[i + 1]));
  for (size_t i = 0; i < adds.size(); i += 2) adds[i]->parent()->erase(adds[i]);
  // And move the last constants to the front: tree order and memory order now disagree.
  for (int i = 0; i < 500; ++i) k.root().insert_before(k.root().front(), k.root().detach(consts[2999 - i]));
  size_t moved = ir::relayout(k);
  EXPECT_EQ(moved, k.count_statements());
  expect_links_consistent(k);
  size_t pairs = 0, adjacent = 0;
  Stmt* prev_const = nullptr;
  for (Stmt* s : k.root()) {
    if (!isa<ConstStmt>(s)) continue;
    if (prev_const) {
      ++pairs;
      adjacent += reinterpret_cast<uintptr_t>(s) - reinterpret_cast<uintptr_t>(prev_const) == sizeof(ConstStmt);
    }
    prev_const = s;
  }
  // Only a slab boundary (64 KiB, ~400 constants) separates neighbours.
  EXPECT_GE(adjacent * 100, pairs * 97) << adjacent << " of " << pairs;
}

// Every kind moves, those holding a std::string included: a short string lives in the object's
// own small buffer, so moving its bytes (memcpy) would leave it pointing into the freed old
// statement. The strings must read back and lie inside the new objects.
TEST(Relayout, MovesEveryKindThroughItsMoveConstructor) {
  for (const char* text : {test::kLowered, test::kOffloaded, test::kInterpreterOnly, test::kReadOnly, test::kTensor,
                           test::kMesh, test::kMeshOffloaded}) {
    auto k = parse_kernel(text, "sample.chi");
    std::vector<const void*> before;
    walk(k->root(), [&](Stmt& s) { before.push_back(&s); });
    EXPECT_EQ(ir::relayout(*k), before.size());
    expect_links_consistent(*k);
    EXPECT_EQ(print_kernel(*k), text);
    EXPECT_TRUE(verify(*k).empty());
    size_t i = 0, strings = 0;
    walk(k->root(), [&](Stmt& s) {
      EXPECT_NE(static_cast<const void*>(&s), before[i++]) << "$" << s.id << " did not move";
      const auto* obj = reinterpret_cast<const char*>(&s);
      const size_t bytes = visit(s, [](auto& o) { return sizeof(o); });
      auto inside = [&](const std::string& str) {
        ++strings;
        // A short string keeps its characters in the object (libstdc++ holds up to 15 there).
        if (str.size() < 16) {
          EXPECT_TRUE(str.data() >= obj && str.data() < obj + bytes) << "a string of $" << s.id;
        }
      };
      if (auto* e = dyn_cast<ExternalPtrStmt>(&s)) inside(e->layout);
      if (auto* r = dyn_cast<RangeForStmt>(&s)) inside(r->loop_name);
      if (auto* a = dyn_cast<AssertStmt>(&s)) inside(a->message);
      if (auto* f = dyn_cast<StructForStmt>(&s)) inside(f->space);
      if (auto* o = dyn_cast<OffloadedStmt>(&s)) inside(o->bls);
      if (auto* g = dyn_cast<GetChStmt>(&s)) inside(g->to);
      if (auto* o = dyn_cast<SNodeOpStmt>(&s)) inside(o->snode);
      if (auto* f = dyn_cast<InternalFuncStmt>(&s)) inside(f->func_name);
      if (auto* m = dyn_cast<MeshForStmt>(&s)) inside(m->scratch_pad);
    });
    EXPECT_GT(strings, 0u);
  }
}

// A kind whose move would fall back to its copy constructor cannot be relocated: relayout's
// per-kind static_assert rejects it at compile time.
class CopyOnlyStmt : public StmtOf<CopyOnlyStmt, StmtKind::Assert> {
 public:
  CopyOnlyStmt() = default;
  CopyOnlyStmt(const CopyOnlyStmt& o) : StmtOf(o), name(o.name) {}
  std::string name;
};
class MovableStmt : public StmtOf<MovableStmt, StmtKind::Assert> {
 public:
  MovableStmt(Stmt* op, std::string n) : name(std::move(n)) {
    add_operand(op);
    type = DataType::of(ScalarKind::i32);
  }
  std::string name;
};
static_assert(!RelocatableStmt<CopyOnlyStmt>);
static_assert(RelocatableStmt<MovableStmt>);
static_assert(RelocatableStmt<AssertStmt> && RelocatableStmt<OffloadedStmt> && RelocatableStmt<IfStmt>);

// Moving a statement relocates it: block links, operands' use entries and users' slots follow,
// a short string comes along inside the new object, and the old one is left empty.
TEST(Relayout, MovingAStatementRelocatesIt) {
  Kernel k;
  Builder b(k);
  Stmt* c = b.const_i32(1);
  auto* old = k.root().emplace_back<MovableStmt>(c, "short");
  Stmt* user = b.binary(BinaryOp::add, old, old);
  auto* moved = new MovableStmt(std::move(*old));
  EXPECT_EQ(c->next(), moved);
  EXPECT_EQ(moved->prev(), c);
  EXPECT_EQ(moved->next(), user);
  EXPECT_EQ(user->prev(), moved);
  EXPECT_EQ(moved->parent(), &k.root());
  EXPECT_EQ(user->operand(0), moved);
  EXPECT_EQ(user->operand(1), moved);
  ASSERT_EQ(c->num_uses(), 1u);
  EXPECT_EQ(c->uses()[0].user(), moved);
  EXPECT_EQ(moved->operand(0), c);
  EXPECT_EQ(moved->num_uses(), 2u);
  EXPECT_EQ(moved->name, "short");
  const char* chars = moved->name.data();
  const auto* bytes = reinterpret_cast<const char*>(moved);
  EXPECT_TRUE(chars >= bytes && chars < bytes + sizeof(MovableStmt));
  EXPECT_EQ(old->parent(), nullptr);
  EXPECT_EQ(old->num_operands(), 0u);
  EXPECT_EQ(old->num_uses(), 0u);
  delete old;  // the block owns `moved` now
  expect_links_consistent(k);
  EXPECT_EQ(k.root().size(), 3u);
}

// Relayouts on two threads at once share the fresh slabs: both kernels come out intact.
TEST(Relayout, OverlappingOnTwoThreads) {
  auto fx = test::read_fixture("autodiff_stacks/atomic_add_0d_every_iteration_f32.fixture.json");
  auto original = test::fixture_kernel(fx, "autodiff_stacks/atomic_add_0d_every_iteration_f32.fixture.json");
  const std::string text = print_kernel(*original);
  // Cloned here: a clone registers uses on the original's statements while it remaps them.
  std::unique_ptr<Kernel> a = original->clone(), b = original->clone();
  auto work = [](Kernel* k) {
    for (int i = 0; i < 200; ++i) ir::relayout(*k);
  };
  std::thread ta(work, a.get()), tb(work, b.get());
  ta.join();
  tb.join();
  for (Kernel* k : {a.get(), b.get()}) {
    expect_links_consistent(*k);
    EXPECT_EQ(print_kernel(*k), text);
    EXPECT_TRUE(verify(*k).empty());
  }
}

}  // namespace
}  // namespace pb
