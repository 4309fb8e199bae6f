// The reverse-mode stages' analyses, errors and verifier results. IR in, IR out, one file per
// stage: tests/passes/*.chi. Gradient values are checked against finite differences by the
// autodiff fixtures (passbench fixture check).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "ir/diagnostic.h"
#include "pass_test_util.h"
#include "passes/autodiff/independent_blocks.h"
#include "passes/pass_manager.h"

using namespace pb;

namespace {

std::string error_of(const std::string& text, const std::string& pipeline) {
  auto k = test::parse(text);
  auto run = passes::run_pipeline(*k, passes::parse_pipeline(pipeline));
  return run.failed ? run.records[run.failed_index].failure : "";
}

const char* kRaw = R"(field out : f32[8] grad out_grad
kernel {
  <i32> $0 = const 1
  <i32> $1 = const 8
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <i32> $4 = sub $3 $0
    <*f32> $5 = global ptr [out], index [$4] activate=true
    <f32> $6 = global load $5
    <*f32> $7 = global ptr [out], index [$3] activate=true
    $8 : global store [$7 <- $6]
  }
}
)";

TEST(CheckGlobalRaw, ReadAtAnotherIndexOfTheWrittenFieldIsAnError) {
  auto e = error_of(kRaw, "check_global_access");
  EXPECT_NE(e.find("field 'out' is written at one index and read at another"), std::string::npos) << e;
  EXPECT_NE(e.find("write: `$8 : global store [$7 <- $6]`"), std::string::npos) << e;
  EXPECT_NE(e.find("read:  `<f32> $6 = global load $5`"), std::string::npos) << e;
}

TEST(CheckGlobalRaw, SameIndexAndConstantIndicesAreFine) {
  std::string same = kRaw;
  same.replace(same.find("index [$4]"), 10, "index [$3]");
  // out[i] = out[i] is no cross-iteration read; it is a proven finding of the reference's rule.
  EXPECT_EQ(error_of(same, "check_global_access{findings=warn}"), "");
  EXPECT_NE(error_of(same, "check_global_access").find("global data access rule: field 'out' is read and then written"),
            std::string::npos);
  // A field without a gradient is not checked.
  std::string nograd = kRaw;
  nograd.replace(nograd.find(" grad out_grad"), 14, "");
  EXPECT_EQ(error_of(nograd, "check_global_access"), "");
}

const char* kSiblings = R"(field n : i32[]
field a : f32[4] grad a_grad
field s : f32[4] grad s_grad
field w : f32[4] grad w_grad
field o : f32[4] grad o_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 1
  $2 : for in range($0, $1) block_dim=adaptive {
    <*i32> $3 = global ptr [n], index [] activate=true
    <i32> $4 = global load $3
    $5 : for in range($0, $4) block_dim=adaptive {
      <i32> $6 = loop $5 index 0
      <*f32> $7 = global ptr [a], index [$6] activate=true
      <f32> $8 = global load $7
      <*f32> $9 = global ptr [s], index [$6] activate=true
      $10 : global store [$9 <- $8]
    }
    <i32> $11 = global load $3
    $12 : for in range($0, $11) block_dim=adaptive {
      <i32> $13 = loop $12 index 0
      <*f32> $14 = global ptr [s], index [$13] activate=true
      <f32> $15 = global load $14
      <*f32> $16 = global ptr [w], index [$13] activate=true
      <f32> $17 = global load $16
      <f32> $18 = mul $15 $17
      <*f32> $19 = global ptr [o], index [$13] activate=true
      $20 : global store [$19 <- $18]
    }
  }
}
)";

TEST(IndependentBlocks, RootWithoutLoopsAndLoopBodies) {
  auto root = test::parse("field y : f32[] grad g\nkernel {\n  <f32> $0 = const 1\n}\n");
  auto ibs = passes::find_independent_blocks(*root);
  ASSERT_EQ(ibs.size(), 1u);
  EXPECT_EQ(ibs[0], &root->root());
  auto k = test::parse(kSiblings);
  ibs = passes::find_independent_blocks(*k);
  ASSERT_EQ(ibs.size(), 2u);  // the two inner loop bodies, not the outer range(1) body
  EXPECT_EQ(ibs[0]->owner()->id, 5);
  EXPECT_EQ(ibs[1]->owner()->id, 12);
}

TEST(IndependentBlocks, ABodyTouchingAnOuterLocalIsNotIndependent) {
  auto k = test::parse(R"(field x : f32[4] grad x_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <*f32> $3 = alloca
    $4 : for in range($0, $1) block_dim=adaptive {
      <i32> $5 = loop $4 index 0
      <*f32> $6 = global ptr [x], index [$5] activate=true
      <f32> $7 = global load $6
      <f32> $8 : local store [$3 <- $7]
    }
  }
}
)");
  auto ibs = passes::find_independent_blocks(*k);
  ASSERT_EQ(ibs.size(), 1u);
  EXPECT_EQ(ibs[0]->owner()->id, 2);
}

TEST(MakeAdjoint, OutputVerifiesExceptDominanceWhichBackupSsaRestores) {
  auto k = test::parse(kSiblings);
  auto run = passes::run_pipeline(*k, passes::parse_pipeline("reverse_outer_loops,make_adjoint,backup_ssa"));
  EXPECT_FALSE(run.failed) << (run.failed ? run.records[run.failed_index].failure : "");
  EXPECT_EQ(test::verify_text(*k), "");
}

struct Rejected {
  const char* name;
  std::string body;  // statements inside `for i in range(4)` with x, y (grad) and i = $3
  const char* message;
};

class MakeAdjointRejects : public testing::TestWithParam<Rejected> {};

TEST_P(MakeAdjointRejects, WithAClearMessage) {
  std::string text =
      "field x : f32[4] grad x_grad\nfield y : f32[] grad y_grad\nkernel {\n  <i32> $0 = const 0\n  <i32> $1 = const "
      "4\n"
      "  $2 : for in range($0, $1) block_dim=adaptive {\n    <i32> $3 = loop $2 index 0\n"
      "    <*f32> $4 = global ptr [x], index [$3] activate=true\n    <f32> $5 = global load $4\n"
      "    <*f32> $6 = global ptr [y], index [] activate=true\n" +
      GetParam().body + "  }\n}\n";
  auto e = error_of(text, "reverse_ad");
  EXPECT_NE(e.find(GetParam().message), std::string::npos) << e;
}

void PrintTo(const Rejected& r, std::ostream* os) { *os << r.name; }

INSTANTIATE_TEST_SUITE_P(
    Constructs, MakeAdjointRejects,
    testing::Values(
        Rejected{"atomic_max", "    <f32> $7 = atomic max($6, $5)\n", "atomic max on the differentiable field 'y'"},
        Rejected{"atomic_mul", "    <f32> $7 = atomic mul($6, $5)\n", "atomic mul on the differentiable field 'y'"},
        Rejected{"atomic_old_value",
                 "    <f32> $7 = atomic add($6, $5)\n    <f32> $8 = mul $7 $5\n    <f32> $9 = atomic add($6, $8)\n",
                 "the old value an atomic on a differentiable field or ndarray returns is used"},
        Rejected{"while", "    $7 : while true {\n      <*i32> $8 = alloca\n      $9 : while control $8, $3\n    }\n",
                 "while loops and continue have no reverse"},
        Rejected{"continue", "    $7 continue\n", "while loops and continue have no reverse"}),
    [](const testing::TestParamInfo<Rejected>& p) { return std::string(p.param.name); });

// A value carried through a loop needs a stack: without stacks that is a clear error naming the
// value and the loop; with them (the default) the same kernel differentiates.
constexpr const char* kCarried = R"(field x : f32[4] grad x_grad
field y : f32[] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [y], index [] activate=true
    <*f32> $7 = alloca
    <f32> $8 : local store [$7 <- $5]
    $9 : for in range($0, $1) block_dim=adaptive {
      <f32> $10 = local load [$7]
      <f32> $11 = sin $10
      <f32> $12 : local store [$7 <- $11]
    }
    <f32> $13 = local load [$7]
    <f32> $14 = atomic add($6, $13)
  }
}
)";

TEST(MakeAdjoint, CarriedValueWithoutStacksIsAClearError) {
  auto e = error_of(kCarried, "reverse_ad{use_stack=false}");
  EXPECT_NE(e.find("needs an autodiff stack"), std::string::npos) << e;
  EXPECT_NE(e.find("$10 = local load [$7]"), std::string::npos) << e;
}

// A statement no backend compiles (loop_unique, ...) is refused by check_global_access, reverse_ad's
// first pass, naming it; make_adjoint alone refuses it by the same trait.
TEST(MakeAdjoint, NoBackendKindsAreRefusedNamingTheStatement) {
  constexpr const char* kUnique = R"(field x : f32[4] grad x_grad
field y : f32[] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <i32> $4 = loop_unique($3)
    <*f32> $5 = global ptr [x], index [$4] activate=true
    <f32> $6 = global load $5
    <*f32> $7 = global ptr [y], index [] activate=true
    <f32> $8 = atomic add($7, $6)
  }
}
)";
  for (const char* pipeline : {"reverse_ad", "make_adjoint"}) {
    auto e = error_of(kUnique, pipeline);
    EXPECT_NE(e.find("autodiff does not differentiate this statement"), std::string::npos) << pipeline << e;
    EXPECT_NE(e.find("<i32> $4 = loop_unique($3)"), std::string::npos) << pipeline << e;
  }
}

// An atomic on a local returns the old value: reverse_ad demotes atomics on locals of the
// iteration to load, op, store first, in every variant, so min/max/mul and a used old value
// differentiate; make_adjoint alone refuses both instead of losing the old value's gradient.
constexpr const char* kLocalAtomic = R"(field x : f32[4] grad x_grad
field y : f32[4] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = alloca
    <f32> $7 = sin $5
    <f32> $8 : local store [$6 <- $7]
    <f32> $9 = atomic OP($6, $5)
    <f32> $10 = mul $9 $9
    <*f32> $11 = global ptr [y], index [$3] activate=true
    $12 : global store [$11 <- $10]
  }
}
)";

TEST(ReverseAd, AtomicsOnLocalsAreDemotedBeforeDifferentiating) {
  EXPECT_EQ(passes::parse_pipeline("reverse_ad").entries[1].to_string(), "demote_atomics{locals_only=true}");
  for (const char* op : {"add", "sub", "min", "max", "mul"}) {
    std::string text = kLocalAtomic;
    text.replace(text.find("OP"), 2, op);
    for (const char* pipeline : {"reverse_ad", "reverse_ad{use_stack=false}", "cleanup,reverse_ad"})
      EXPECT_EQ(error_of(text, pipeline), "") << op << " " << pipeline;
    auto e = error_of(text, "make_adjoint");
    std::string want = std::string(op) == "add" || std::string(op) == "sub"
                           ? "the old value an atomic on a local returns is used"
                           : fmt::format("atomic {} on a local is not differentiable", op);
    EXPECT_NE(e.find(want), std::string::npos) << op << e;
    EXPECT_NE(e.find("demote"), std::string::npos) << op << e;
  }
}

TEST(MakeAdjoint, CarriedValueWithStacksDifferentiates) {
  auto k = test::parse(kCarried);
  auto run = passes::run_pipeline(*k, passes::parse_pipeline("reverse_ad"));
  ASSERT_FALSE(run.failed) << run.records[run.failed_index].failure;
  EXPECT_EQ(test::verify_text(*k), "");  // its stack and size: tests/passes/determine_ad_stack_size.chi
}

TEST(MakeAdjoint, DifferentiableWriteOutsideEveryBlockIsRejected) {
  auto e = error_of(R"(field x : f32[4] grad x_grad
field y : f32[] grad y_grad
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 4
  <f32> $2 = const 1
  <*f32> $3 = global ptr [y], index [] activate=true
  $4 : global store [$3 <- $2]
  $5 : for in range($0, $1) block_dim=adaptive {
    <i32> $6 = loop $5 index 0
    <*f32> $7 = global ptr [x], index [$6] activate=true
    <f32> $8 = global load $7
    <f32> $9 = atomic add($3, $8)
  }
}
)",
                    "reverse_ad");
  EXPECT_NE(e.find("cannot differentiate `$4 : global store [$3 <- $2]`"), std::string::npos) << e;
  EXPECT_NE(e.find("outside every loop body"), std::string::npos) << e;
}

}  // namespace

// v = x; v = v * v, n times, in an if in a loop: each value is shared by the next one's two
// operands. backup_ssa clones each once per anchor block, not once per path (2^n before).
std::string squaring_chain(int n) {
  std::string t = "field x : f32[4] grad x_grad\nfield c : i32[4]\nfield y : f32[4] grad y_grad\nkernel {\n";
  t += "  <i32> $0 = const 0\n  <i32> $1 = const 4\n  $3 : for in range($0, $1) block_dim=adaptive {\n";
  t += "    <i32> $4 = loop $3 index 0\n    <*f32> $5 = global ptr [x], index [$4] activate=true\n";
  t += "    <f32> $6 = global load $5\n    <*i32> $7 = global ptr [c], index [$4] activate=true\n";
  t += "    <i32> $8 = global load $7\n    <u1> $9 = cmp_gt $8 $0\n    $10 : if $9 {\n";
  int prev = 6, id = 11;
  for (int i = 0; i < n; ++i, prev = id++) t += fmt::format("      <f32> ${} = mul ${} ${}\n", id, prev, prev);
  t += fmt::format("      <*f32> ${} = global ptr [y], index [$4] activate=true\n", id);
  t += fmt::format("      ${} : global store [${} <- ${}]\n    }}\n  }}\n}}\n", id + 1, id, prev);
  return t;
}

TEST(BackupSsa, SharedValuesAreClonedOncePerBlockNotPerPath) {
  for (int n : {4, 18, 20}) {
    auto k = test::parse(squaring_chain(n));
    auto run = passes::run_pipeline(*k, passes::parse_pipeline("reverse_ad"));
    ASSERT_FALSE(run.failed) << run.records[run.failed_index].failure;
    int64_t cloned = -1;
    for (const auto& rec : run.records)
      if (rec.pass == "backup_ssa")
        for (const auto& [name, value] : rec.stats)
          if (name == "cloned") cloned = value;
    EXPECT_GE(cloned, 0);
    EXPECT_LE(cloned, 2 * n) << "n = " << n;
    EXPECT_EQ(test::verify_text(*k), "");
  }
}
