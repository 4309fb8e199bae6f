// Every kernel of fixtures/**/*.fixture.json, as written and after the fixture's pipeline,
// compiles under all 16 adstack lowerings and every module passes spirv-val (compile validates).
// Kernels with f64/i64 values compile with the capability options on, and are rejected naming
// the statement without them. Kernels that cannot be lowered are listed in kRejected with the
// reason; fixtures whose kernel does not parse or verify (negative fixtures) are skipped.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/snode.h"
#include "ir/type_uses.h"
#include "ir/verifier.h"
#include "ir/visitor.h"
#include "passes/pass_manager.h"
#include "passes/pipeline.h"
#include "spirv_test_util.h"
#include "tests/fixture_params.h"
#include "workbench/workspace/fixture_backends.h"

namespace pb::codegen::spirv {
namespace {

struct Rejection {
  std::string contains;    // a substring of the error
  bool heap_only = false;  // rejected only with storage=heap
};

// fixture (relative to fixtures/), with "#pipeline" for the kernel after its pipeline.
const std::map<std::string, Rejection> kRejected = {
    // Adaptive stacks (max_size=0) before determine_ad_stack_size: nothing to size them with.
    {"autodiff_sizing/arg_bound_sin_chain.fixture.json", {"the stack has no size"}},
    {"autodiff_sizing/balanced_iteration_block.fixture.json", {"the stack has no size"}},
    {"autodiff_sizing/field_bound_sum_sin.fixture.json", {"the stack has no size"}},
    {"autodiff_sizing/nested_loops_times_field.fixture.json", {"the stack has no size"}},
    {"autodiff_sizing/sibling_loops_add.fixture.json", {"the stack has no size"}},
    {"autodiff_sizing/static_loop_squaring.fixture.json", {"the stack has no size"}},
    {"autodiff_sizing/triangular_loops.fixture.json", {"the stack has no size"}},
    {"autodiff_sizing/while_loop_unbounded.fixture.json", {"the stack has no size"}},
    {"errors/stack_unsized.fixture.json", {"the stack has no size"}},
    // A stack allocated at the kernel root and pushed inside a parallel loop: stacks are per
    // invocation, so one stack cannot be shared by the loop's iterations.
    {"errors/adstack_overflow.fixture.json", {"allocated at the kernel root outside this task"}},
    {"passes/dce_run_error_after_pipeline.fixture.json", {"allocated at the kernel root outside this task"}},
    {"passes/dce_run_error_after_pipeline.fixture.json#pipeline", {"allocated at the kernel root outside this task"}},
};

bool has_f64_atomic(const ir::Kernel& k) {
  bool found = false;
  ir::walk(k.root(),
           [&](ir::Stmt& s) { found |= ir::isa<ir::AtomicOpStmt>(&s) && s.type.scalar == ir::ScalarKind::f64; });
  return found;
}

bool uses_kind(const ir::Kernel& k, std::initializer_list<ir::ScalarKind> kinds) {
  bool found = false;
  auto hit = [&](ir::ScalarKind s) {
    for (auto x : kinds) found |= s == x;
  };
  // Statements only: a declared field no statement touches gets no binding (pointers to a
  // field carry its element type, so used fields count).
  ir::walk(k.root(), [&](ir::Stmt& s) { hit(s.type.scalar); });
  return found;
}

// A stack of a type the heap storage cannot hold (32- and 64-bit values and u1 live there).
bool has_non_heap_stack(const ir::Kernel& k) {
  bool found = false;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    if (!ir::isa<ir::AdStackAllocaStmt>(&s)) return;
    auto t = s.type.scalar;
    found |= t != ir::ScalarKind::u1 && ir::bit_width(t) != 32 && ir::bit_width(t) != 64;
  });
  return found;
}
constexpr const char* kHeapStackError = "heap stacks hold 32- and 64-bit values";

// Compiles `k` under all 16 lowerings; returns a failure description or "".
std::string compile_all(const ir::Kernel& k, const std::string& key) {
  LoweringOptions base;
  base.float64 = uses_kind(k, {ir::ScalarKind::f64});
  // f64 atomics are 64-bit compare-exchange loops: they need Int64 too.
  base.int64 = uses_kind(k, {ir::ScalarKind::i64, ir::ScalarKind::u64}) || has_f64_atomic(k);
  std::string failures;
  auto rejected = kRejected.find(key);
  bool heap_rejects = has_non_heap_stack(k);
  for (const LoweringOptions& o : all_stack_lowerings(base)) {
    if (heap_rejects && o.storage == StackStorage::heap) {
      try {
        compile(k, o);
        failures += fmt::format("\n{}: compiled a non-f32/i32/u1 stack on the heap", lowering_name(o));
      } catch (const UserError& e) {
        if (std::string(e.what()).find(kHeapStackError) == std::string::npos)
          failures += fmt::format("\n{}: rejected with another error: {}", lowering_name(o), e.what());
      }
      continue;
    }
    bool expect_reject =
        rejected != kRejected.end() && (!rejected->second.heap_only || o.storage == StackStorage::heap);
    try {
      CompiledKernel ck = compile(k, o);
      if (expect_reject) failures += fmt::format("\n{}: expected a rejection, compiled", lowering_name(o));
      for (const TaskInfo& t : ck.tasks)
        if (t.spirv.size() < 5) failures += fmt::format("\n{}: task {} has no module", lowering_name(o), t.name);
    } catch (const UserError& e) {
      if (!expect_reject)
        failures += fmt::format("\n{}: rejected: {}", lowering_name(o), e.what());
      else if (std::string(e.what()).find(rejected->second.contains) == std::string::npos)
        failures += fmt::format("\n{}: rejected with another error: {}", lowering_name(o), e.what());
    } catch (const InternalError& e) {
      failures += fmt::format("\n{}: internal error: {}", lowering_name(o), e.what());
      break;
    }
  }
  // Without the capability options, 64-bit kernels are rejected naming a statement.
  if (base.float64 || base.int64) {
    try {
      compile(k, LoweringOptions{});
      failures += "\nwithout float64/int64: compiled, expected a capability error";
    } catch (const UserError& e) {
      std::string m = e.what();
      bool heap_error = heap_rejects && m.find(kHeapStackError) != std::string::npos;
      if (!heap_error && (m.find("capabilit") == std::string::npos || m.find("cannot lower `") == std::string::npos))
        failures += "\nwithout float64/int64: unexpected error: " + m;
    } catch (const InternalError& e) {
      failures += fmt::format("\nwithout float64/int64: internal error: {}", e.what());
    }
  }
  return failures;
}

// A kernel using f16 or a quant type is refused up front, naming the first use. Returns whether
// `k` is one.
bool refused_for_its_types(const ir::Kernel& k) {
  auto use = ir::first_type_use_outside(k, compiles_type);
  if (!use) return false;
  try {
    compile(k, LoweringOptions{});
    ADD_FAILURE() << "a kernel using " << *use << " compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("does not compile f16 or quant types yet: " + *use), std::string::npos)
        << e.what();
  }
  return true;
}

// A kernel with a tensor type is refused up front, naming the first use and scalarize. Returns
// whether `k` is one.
bool refused_for_tensors(const ir::Kernel& k) {
  auto use = ir::first_type_use_outside(k, [](ir::DataType t) { return !t.is_tensor(); });
  if (!use) return false;
  try {
    compile(k, LoweringOptions{});
    ADD_FAILURE() << "a kernel using " << *use << " compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("uses a tensor type: " + *use), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("scalarize"), std::string::npos) << e.what();
  }
  return true;
}

// A mesh kernel is refused (passbench has no mesh model), naming the mesh for or the statement
// that carries the mesh. Returns whether `k` is one.
bool refused_for_mesh(const ir::Kernel& k) {
  bool mesh = false;
  ir::walk(k.root(), [&](ir::Stmt& s) {
    const auto* t = ir::dyn_cast<ir::OffloadedStmt>(&s);
    mesh = mesh || ir::is_mesh(s.kind()) || (t && t->task == ir::TaskType::mesh_for);
  });
  if (!mesh) return false;
  try {
    compile(k, LoweringOptions{});
    ADD_FAILURE() << "a mesh kernel compiled";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("passbench has no mesh model"), std::string::npos) << e.what();
    // The interpreter refuses mesh kernels too: the remedy must not send the user there.
    EXPECT_EQ(e.diagnostic().remedy, ir::kMeshKernelRemedy) << e.what();
  }
  return true;
}

class SpirvFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(SpirvFixture, CompilesUnderEveryLowering) {
  auto fx = pb::test::read_fixture(GetParam());
  std::unique_ptr<ir::Kernel> k;
  try {
    k = workbench::fixture_kernel(fx, (std::filesystem::path(PASSBENCH_SOURCE_DIR) / "fixtures" / GetParam()).string());
  } catch (const UserError& e) {
    FAIL() << "the fixture declares no parse or verify error: " << e.what();
  }
  ir::declare_chain_layout(*k);  // a header-less dump's sparse layout, as the workbench reads one
  // A tensor kernel is refused; its pipeline (scalarize first) makes one that compiles.
  if (refused_for_mesh(*k)) return;
  if (!refused_for_tensors(*k)) {
    if (refused_for_its_types(*k)) return;
    EXPECT_EQ(compile_all(*k, GetParam()), "");
  }
  std::string pipeline = fx.value("pipeline", "");
  if (pipeline.empty()) return;
  auto after = k->clone();
  passes::RunOptions run_options;
  run_options.capture = passes::Capture::none;
  try {
    auto run = passes::run_pipeline(*after, passes::parse_pipeline(pipeline), run_options);
    if (run.failed) return;  // the fixture pins a pass failure; nothing new to compile
  } catch (const UserError&) {
    return;  // the fixture pins a bad pipeline
  }
  EXPECT_EQ(compile_all(*after, GetParam() + "#pipeline"), "") << "after pipeline " << pipeline;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, SpirvFixture, ::testing::ValuesIn(pb::test::readable_fixture_names()),
                         pb::test::fixture_test_name);

}  // namespace
}  // namespace pb::codegen::spirv
