// Autodiff stacks in the reference interpreter (docs/autodiff.md, "Autodiff stacks").
#include "interp_test_util.h"
#include "runtime/core/stack_capacity.h"

namespace pb::runtime::test {
namespace {

TEST(InterpStack, PushPopLoadTopAndAdjoints) {
  auto r = run_text(R"(kernel {
  <f32> $1 = const 1
  <f32> $2 = const 2
  <f32> $3 = const 3
  <f32> $4 = const 4
  <f32> $5 = stack alloc (max_size=4)
  <f32> $6 : stack push $5, val = $1
  <f32> $7 : stack push $5, val = $2
  <f32> $8 = stack load top $5
  <f32> $9 = stack load top adj $5
  <f32> $10 : stack acc adj $5, val = $3
  <f32> $11 : stack acc adj $5, val = $4
  <f32> $12 = stack load top adj $5
  <f32> $13 : stack pop $5
  <f32> $14 = stack load top $5
  <f32> $15 = stack load top adj $5
  <f32> $16 : stack acc adj $5, val = $1
  <f32> $17 : stack push $5, val = $3
  <f32> $18 = stack load top adj $5
  <f32> $19 : stack pop $5
  <f32> $20 = stack load top adj $5
  print $8, " ", $9, " ", $12, " ", $14, " ", $15, " ", $18, " ", $20
}
)");
  // top 2 with adj 0; adj 3+4=7; after pop top 1 with adj 0; push zeroes the new adj; the
  // adjoint of entry 1 survives the push/pop above it.
  EXPECT_EQ(r.result.printed, "2 0 7 1 0 0 1");
}

TEST(InterpStack, IntegerStacksHoldValues) {
  auto r = run_text(R"(kernel {
  <i32> $1 = const 7
  <i32> $2 = stack alloc (max_size=1)
  <i32> $3 : stack push $2, val = $1
  <i32> $4 = stack load top $2
  print $4
}
)");
  EXPECT_EQ(r.result.printed, "7");
}

TEST(InterpStack, StackAllocReinitialisesEachTimeItExecutes) {
  // max_size=1 suffices because every iteration's alloc empties the stack again.
  auto r = run_text(R"(kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    $4 : for in range($0, $1) block_dim=adaptive {
      <i32> $5 = stack alloc (max_size=1)
      <i32> $6 : stack push $5, val = $3
      <i32> $7 = stack load top $5
      print $7
    }
  }
}
)");
  EXPECT_EQ(r.result.printed, "000111222");
}

TEST(InterpStack, OverflowNamesTheStackAndItsSize) {
  std::string msg = run_error(R"(kernel "grad" {
  <i32> $0 = const 0
  <i32> $1 = argload[0]
  <f32> $2 = const 1
  <f32> $3 = stack alloc (max_size=2)
  <f32> $4 : stack push $3, val = $2
  $5 : for in range($0, $1) block_dim=adaptive {
    <f32> $6 : stack push $3, val = $2
  }
}
)",
                              {{"args", {2}}});
  EXPECT_CONTAINS(msg, "autodiff stack overflow: stack $3 (`<f32> $3 = stack alloc (max_size=2)`) in kernel \"grad\"");
  EXPECT_CONTAINS(msg, "exceeded max_size=2");
  EXPECT_CONTAINS(msg, "<f32> $6 : stack push $3, val = $2");
  EXPECT_CONTAINS(msg, "ad_stack_size");
  EXPECT_CONTAINS(msg, "determine_ad_stack_size");
}

TEST(InterpStack, ExactlyFullIsNotAnOverflow) {
  EXPECT_EQ(run_error(R"(kernel {
  <f32> $2 = const 1
  <f32> $3 = stack alloc (max_size=2)
  <f32> $4 : stack push $3, val = $2
  <f32> $5 : stack push $3, val = $2
}
)"),
            "<no error>");
}

TEST(InterpStack, UnderflowNamesTheStackAndTheOperation) {
  auto text = [](const std::string& op) {
    return R"(kernel "k" {
  <f32> $1 = const 1
  <f32> $2 = stack alloc (max_size=2)
  <f32> $3 : stack push $2, val = $1
  <f32> $4 : stack pop $2
  )" + op + R"(
}
)";
  };
  struct Case {
    std::string line, what;
  };
  for (const Case& c : {Case{"<f32> $5 : stack pop $2", "pop"}, Case{"<f32> $5 = stack load top $2", "load top"},
                        Case{"<f32> $5 = stack load top adj $2", "load top adj"},
                        Case{"<f32> $5 : stack acc adj $2, val = $1", "acc adj"}}) {
    std::string msg = run_error(text(c.line));
    EXPECT_CONTAINS(msg, "autodiff stack underflow: " + c.what + " on the empty stack $2");
    EXPECT_CONTAINS(msg, "(max_size=2)");
    EXPECT_CONTAINS(msg, c.line);
    EXPECT_CONTAINS(msg, "kernel \"k\"");
  }
}

TEST(InterpStack, UnsizedStackIsAnError) {
  std::string msg = run_error(R"(kernel "k" {
  <f32> $1 = stack alloc (max_size=0)
}
)");
  EXPECT_CONTAINS(msg, "stack $1 has no size (max_size=0): run determine_ad_stack_size or give a fixed ad_stack_size");
  EXPECT_CONTAINS(msg, "kernel \"k\"");
}

TEST(InterpStack, ReverseLoopReplaysForwardValuesInReverse) {
  // The shape autodiff produces: a forward loop pushes, a reversed loop reads and pops.
  auto r = run_text(R"(field x : f32[3]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 3
  <f32> $2 = const 0
  <f32> $3 = stack alloc (max_size=4)
  <f32> $4 : stack push $3, val = $2
  $5 : for in range($0, $1) block_dim=adaptive {
    <i32> $6 = loop $5 index 0
    <*f32> $7 = global ptr [x], index [$6] activate=true
    <f32> $8 = global load $7
    <f32> $9 : stack push $3, val = $8
  }
  $10 : reversed for in range($0, $1) block_dim=adaptive {
    <f32> $11 = stack load top $3
    $20 : print $11, " "
    <f32> $12 : stack pop $3
  }
  <f32> $13 = stack load top $3
  $21 : print $13
}
)",
                    {{"fields", {{"x", {{"data", {1.5, 2.5, 3.5}}}}}}});
  EXPECT_EQ(r.result.printed, "3.5 2.5 1.5 0");
}

// A sized stack's capacity follows the field its size reads, also when the kernel writes that
// field between two executions of the alloc: the cached capacity is dropped at the write.
TEST(InterpStack, SizedCapacityFollowsWritesToTheFieldItReads) {
  auto r = run_text(R"(field n : i32[1]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 1
  <i32> $2 = const 3
  $3 : for in range($0, $2) block_dim=adaptive {
    <*i32> $4 = global ptr [n], index [$0] activate=true
    <i32> $5 = global load $4
    <f32> $6 = stack alloc (max_size=0, size=n[0])
    $7 : for in range($0, $5) block_dim=adaptive {
      <i32> $8 = loop $7 index 0
      <f32> $9 = cast_value<f32> $8
      <f32> $10 : stack push $6, val = $9
    }
    <i32> $11 = add $5 $1
    $12 : global store [$4 <- $11]
  }
}
)",
                    {{"fields", {{"n", {{"data", {1}}}}}}});
  EXPECT_EQ(r.at("n").as_i64(), 4);
  EXPECT_EQ(r.result.stack_capacity.at(6), 3);
  EXPECT_EQ(r.result.max_stack_depth.at(6), 3);
}

// Counted work: an alloc inside a loop evaluates its size once, not once per iteration, while
// the loop writes only buffers the size does not read.
TEST(InterpStack, SizedCapacityIsEvaluatedOncePerWriteToWhatItReads) {
  auto k = ir::parse_kernel(R"(field m : i32[4]
field y : f32[4]
kernel {
  <f32> $0 = stack alloc (max_size=0, size=max(i1 in range(0, 4): m[i1]))
}
)");
  State st = make_state(*k, {{"fields", {{"m", {{"data", {1, 5, 2, 3}}}}}}});
  std::vector<Buffer*> bufs = {&st.fields.at("m"), &st.fields.at("y")};
  const auto& alloc = static_cast<const ir::AdStackAllocaStmt&>(*k->root().front());
  detail::StackCapacities caps;
  caps.bind(*k, st, bufs);
  auto text = [] { return std::string("stack"); };
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(caps.capacity(alloc, *k, st, bufs, text), 5);
    caps.note_write(&st.fields.at("y").data[static_cast<size_t>(i % 4)]);
  }
  EXPECT_EQ(caps.evaluations(), 1u);
  caps.note_write(&st.fields.at("m").data[3]);
  st.fields.at("m").data[3] = ir::Value::from_int(ir::ScalarKind::i32, 9);
  EXPECT_EQ(caps.capacity(alloc, *k, st, bufs, text), 9);
  EXPECT_EQ(caps.evaluations(), 2u);
}

}  // namespace
}  // namespace pb::runtime::test
