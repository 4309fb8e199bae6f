// Host state (make_state, state_to_json) and run options (shuffle, f64).
#include <sstream>

#include "interp_test_util.h"
#include "passes/scalarize.h"

namespace pb::runtime::test {
namespace {

using nlohmann::json;

const char* const kOrderDependent = R"(field x : f32[16]
field total : f32[]
field last : i32[]
kernel {
  <i32> $0 = const 0
  <i32> $1 = const 16
  $2 : for in range($0, $1) block_dim=adaptive {
    <i32> $3 = loop $2 index 0
    <*f32> $4 = global ptr [x], index [$3] activate=true
    <f32> $5 = global load $4
    <*f32> $6 = global ptr [total], index [] activate=true
    <f32> $7 = atomic add($6, $5)
    <*i32> $8 = global ptr [last], index [] activate=true
    $9 : global store [$8 <- $3]
    print $3, " "
  }
}
)";

json sixteen_powers_of_two() {
  json data = json::array();
  for (int i = 0; i < 16; ++i) data.push_back(1 << i);  // exact in f32 whatever the order
  return {{"fields", {{"x", {{"data", data}}}}}};
}

TEST(InterpOptions, ShuffleChangesTheOrderButNotAnOrderIndependentResult) {
  auto in_order = run_text(kOrderDependent, sixteen_powers_of_two());
  RunOptions shuffled;
  shuffled.shuffle = true;
  shuffled.seed = 7;
  auto a = run_text(kOrderDependent, sixteen_powers_of_two(), shuffled);
  auto b = run_text(kOrderDependent, sixteen_powers_of_two(), shuffled);
  shuffled.seed = 8;
  auto c = run_text(kOrderDependent, sixteen_powers_of_two(), shuffled);

  EXPECT_EQ(in_order.at("last").as_i64(), 15);
  EXPECT_EQ(in_order.result.printed, "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 ");
  EXPECT_NE(a.result.printed, in_order.result.printed);
  EXPECT_EQ(a.result.printed, b.result.printed);  // deterministic per seed
  EXPECT_NE(a.result.printed, c.result.printed);
  // The order-dependent result follows the order: the last index written is the last one run.
  auto last_run = [](const Ran& r) {
    return std::stoll(r.result.printed.substr(r.result.printed.rfind(' ', r.result.printed.size() - 2)));
  };
  EXPECT_EQ(a.at("last").as_i64(), last_run(a));
  EXPECT_EQ(c.at("last").as_i64(), last_run(c));
  EXPECT_TRUE(a.at("last").as_i64() != 15 || c.at("last").as_i64() != 15);
  // Every index runs exactly once, and the order-independent sum is unchanged.
  std::vector<int> seen(16, 0);
  std::istringstream words(a.result.printed);
  for (int i; words >> i;) ++seen.at(static_cast<size_t>(i));
  EXPECT_EQ(seen, std::vector<int>(16, 1));
  for (const auto* r : {&in_order, &a, &c}) EXPECT_EQ(r->at("total").as_f32(), 65535.0f);
}

TEST(InterpOptions, F64ComputesF32AsDouble) {
  const char* text = R"(field out : f32[]
kernel {
  <f32> $1 = const 1
  <f32> $2 = const 1e-10
  <f32> $3 = add $1 $2
  <f32> $4 = sub $3 $1
  <*f32> $5 = global ptr [out], index [] activate=true
  $6 : global store [$5 <- $4]
}
)";
  auto single = run_text(text);
  EXPECT_EQ(single.field("out").dtype, ir::ScalarKind::f32);
  EXPECT_EQ(single.at("out").as_f32(), 0.0f);

  RunOptions o;
  o.f64 = true;
  auto dbl = run_text(text, nullptr, o);
  EXPECT_EQ(dbl.field("out").dtype, ir::ScalarKind::f64);  // results keep double precision
  EXPECT_NEAR(dbl.at("out").as_f64(), 1e-10, 1e-16);
  EXPECT_EQ(dbl.at("out").as_f64(), (1.0 + static_cast<double>(1e-10f)) - 1.0);  // the constant's f32 value

  // A later f32 run narrows the buffers back.
  run_kernel(*dbl.kernel, dbl.state, {});
  EXPECT_EQ(dbl.field("out").dtype, ir::ScalarKind::f32);
  EXPECT_EQ(dbl.at("out").as_f32(), 0.0f);
}

// -0.6923828 is printed for the f32 -709/1024: --f64 adds the f32 value, not the double nearest
// to its shortest decimal.
TEST(InterpOptions, F64WidensConstantsExactly) {
  const char* text = R"(field out : f32[]
kernel {
  <f32> $1 = const -0.6923828
  <*f32> $2 = global ptr [out], index [] activate=true
  $3 : global store [$2 <- $1]
}
)";
  RunOptions o;
  o.f64 = true;
  auto dbl = run_text(text, nullptr, o);
  EXPECT_EQ(dbl.at("out").as_f64(), -709.0 / 1024.0);
}

// A tensor passed by value runs as written, and scalarized through element arguments bound from
// the same state, which gets its own arguments back afterwards.
TEST(InterpArgs, TensorPassedByValueRunsAsWrittenAndByElement) {
  const char* text = R"(field y : f32[2]
arg 1 : [Tensor (2) f32]
kernel {
  <[Tensor (2) f32]> $0 = argload[1]
  <[Tensor (2) f32]> $1 = mul $0 $0
  <f32> $2 = get_element($1, 0)
  <f32> $3 = get_element($1, 1)
  <i32> $4 = const 0
  <i32> $5 = const 1
  <*f32> $6 = global ptr [y], index [$4] activate=true
  $7 : global store [$6 <- $2]
  <*f32> $8 = global ptr [y], index [$5] activate=true
  $9 : global store [$8 <- $3]
}
)";
  json inputs = {{"args", {0, {1.5, -3.0}}}};
  auto as_written = run_text(text, inputs);
  EXPECT_EQ(as_written.at("y", 0).as_f32(), 2.25f);
  EXPECT_EQ(as_written.at("y", 1).as_f32(), 9.0f);

  auto scalar = as_written.kernel->clone();
  passes::scalarize(*scalar);
  ASSERT_EQ(scalar->args.size(), 2u);
  EXPECT_EQ(scalar->args[1].element_of, 1);
  EXPECT_EQ(scalar->args[1].element, 1);
  State st = make_state(*as_written.kernel, inputs);
  run_kernel(*scalar, st);
  EXPECT_EQ(st.fields.at("y").data.at(1).as_f32(), 9.0f);
  EXPECT_EQ(st.args.size(), 2u);  // the element arguments were the run's only
  EXPECT_TRUE(st.args[1].is_tensor);

  EXPECT_TRUE(contains(run_error(text, json{{"args", {0, 1.5}}}), "argument 1 is a tensor"));
}

TEST(InterpOptions, F64WidensFieldInputsAndScalarArgs) {
  const char* text = R"(field x : f32[2]
arg 0 : f32
kernel {
  <f32> $1 = argload[0]
  <i32> $2 = const 1
  <*f32> $3 = global ptr [x], index [$2] activate=true
  <f32> $4 = global load $3
  <f32> $5 = mul $4 $1
  $6 : global store [$3 <- $5]
}
)";
  RunOptions o;
  o.f64 = true;
  auto r = run_text(text, {{"fields", {{"x", {{"data", {1, 3}}}}}}, {"args", {0.5}}}, o);
  EXPECT_EQ(r.field("x").dtype, ir::ScalarKind::f64);
  EXPECT_EQ(r.at("x", 0).as_f64(), 1.0);
  EXPECT_EQ(r.at("x", 1).as_f64(), 1.5);
}

std::string state_error(const std::string& text, const json& inputs) {
  try {
    make_state(*ir::parse_kernel(text), inputs);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(InterpState, ErrorsNameTheFieldAndTheRemedy) {
  const char* decl = "field x : f32[2] grad x_grad\nfield n : i32[]\nfield b : u1[2]\nkernel {\n}\n";
  std::string unknown = state_error(decl, {{"fields", {{"y", {{"data", {1}}}}}}});
  EXPECT_CONTAINS(unknown, "field 'y'");
  EXPECT_CONTAINS(unknown, "the kernel's fields are: x, x_grad, n, b");
  std::string length = state_error(decl, {{"fields", {{"x", {{"data", {1, 2, 3}}}}}}});
  EXPECT_CONTAINS(length, "field 'x' data: 3 value(s)");
  EXPECT_CONTAINS(length, "shape [2] has 2 element(s)");
  EXPECT_CONTAINS(state_error(decl, {{"fields", {{"x", {{"data", {1, "a"}}}}}}}), "is not a number");
  EXPECT_CONTAINS(state_error(decl, {{"fields", {{"n", {{"data", 1.5}}}}}}), "is not an integer");
  EXPECT_CONTAINS(state_error(decl, {{"fields", {{"n", {{"data", 3000000000LL}}}}}}), "out of range for i32");
  EXPECT_CONTAINS(state_error(decl, {{"fields", {{"b", {{"data", {2, 0}}}}}}}), "out of range for u1");
  EXPECT_CONTAINS(state_error(decl, {{"fields", {{"n", {{"grad", {1}}}}}}}), "has no grad field");
  EXPECT_CONTAINS(state_error(decl, {{"fields", {{"x", {{"dta", {1, 2}}}}}}}), "unknown key 'dta'");
  EXPECT_CONTAINS(state_error(decl, {{"feilds", json::object()}}), "unknown key 'feilds'");
  EXPECT_CONTAINS(state_error(decl, {{"fields", {{"x", {{"shape", {3}}}}}}}), "the kernel declares [2]");
  EXPECT_EQ(state_error(decl, {{"fields", {{"b", {{"data", {true, 0}}}}}}}), "<no error>");
}

TEST(InterpState, AFieldUsedWithoutAShapeNeedsOneFromTheInputs) {
  const char* dump = R"(kernel {
  <i32> $0 = const 1
  <*f32> $1 = global ptr [S2place<f32>], index [$0] activate=true
  <f32> $2 = global load $1
}
)";
  std::string msg = state_error(dump, nullptr);
  EXPECT_CONTAINS(msg, "field 'S2place<f32>' is used by the kernel but its shape is unknown");
  EXPECT_CONTAINS(msg, "\"shape\"");
  EXPECT_CONTAINS(state_error(dump, {{"fields", {{"S2place<f32>", {{"data", {{1, 2}, {3, 4}}}}}}}}),
                  "indexes it with 1 index(es)");
  auto st = make_state(*ir::parse_kernel(dump), {{"fields", {{"S2place<f32>", {{"data", {1, 2, 3}}}}}}});
  EXPECT_EQ(st.fields.at("S2place<f32>").shape, ir::Shape{3});
  auto zeros = make_state(*ir::parse_kernel(dump), {{"fields", {{"S2place<f32>", {{"shape", {5}}}}}}});
  EXPECT_EQ(zeros.fields.at("S2place<f32>").data.size(), 5u);
}

TEST(InterpState, NestedDataGradAndArgs) {
  const char* text = R"(field m : f32[2, 2] grad m_grad
field z : f32[3]
arg 0 : i32
arg 1 : ndarray<f32, 2>
kernel {
  <i32> $1 = argload[0]
}
)";
  auto k = ir::parse_kernel(text);
  auto st = make_state(*k, {{"fields", {{"m", {{"data", {{1, 2}, {3, 4}}}, {"grad", {5, 6, 7, 8}}}}}},
                            {"args", {3, {{"data", {{1, 2, 3}, {4, 5, 6}}}}}}});
  EXPECT_EQ(st.fields.at("m").data[2].as_f32(), 3.0f);
  EXPECT_EQ(st.fields.at("m_grad").data[3].as_f32(), 8.0f);
  EXPECT_EQ(st.fields.at("z").data.size(), 3u);  // unspecified fields start at zero
  EXPECT_EQ(st.args.at(0).scalar.as_i64(), 3);
  EXPECT_EQ(st.args.at(1).array.shape, (ir::Shape{2, 3}));
  ASSERT_TRUE(st.args.at(1).grad.has_value());  // a float ndarray's gradient starts at zero
  EXPECT_EQ(st.args.at(1).grad->shape, (ir::Shape{2, 3}));
  EXPECT_EQ(st.args.at(1).grad->data[4].as_f32(), 0.0f);
  EXPECT_CONTAINS(state_error(text, {{"fields", {{"m", {{"data", {{1, 2, 3}, {4}}}}}}}}), "ragged");
  EXPECT_CONTAINS(state_error(text, {{"args", {3}}}), "argument 1 is missing");
  EXPECT_CONTAINS(state_error(text, {{"args", {3, {{"data", {1, 2}}}}}}),
                  "1 dimension(s), but the kernel indexes it with 2");
  EXPECT_CONTAINS(state_error(text, {{"args", {3, {{"data", {{1}}}}, 4}}}),
                  "inputs give 3 argument(s) but the kernel has 2");
  EXPECT_CONTAINS(state_error(text, {{"args", {0.5, {{"data", {{1}}}}}}}), "argument 0: 0.5 is not an integer");
}

TEST(InterpState, StateToJsonListsPrimalsWithTheirCompanions) {
  const char* text = R"(field x : f32[2] grad x_grad
field n : i32[]
field b : u1[2]
arg 0 : ndarray<f32, 1>
kernel {
  <*f32> $1 = argload[0]
}
)";
  auto k = ir::parse_kernel(text);
  json inputs = {
      {"fields",
       {{"x", {{"data", {0.1, "nan"}}, {"grad", {1, "-inf"}}}}, {"n", {{"data", -4}}}, {"b", {{"data", {1, 0}}}}}},
      {"args", {{{"data", {2.5}}, {"grad", {0.5}}}}}};
  auto st = make_state(*k, inputs);
  json j = state_to_json(*k, st);
  EXPECT_FALSE(j["fields"].contains("x_grad"));
  EXPECT_EQ(j["fields"]["x"]["shape"], json({2}));
  EXPECT_EQ(j["fields"]["x"]["data"][0].get<double>(), static_cast<double>(0.1f));
  EXPECT_EQ(j["fields"]["x"]["data"][1], "nan");
  EXPECT_EQ(j["fields"]["x"]["grad"], json({1.0, "-inf"}));
  EXPECT_TRUE(j["fields"]["n"]["data"][0].is_number_integer());
  EXPECT_EQ(j["fields"]["n"]["data"], json({-4}));
  EXPECT_EQ(j["fields"]["n"]["shape"], json::array());
  EXPECT_EQ(j["fields"]["b"]["data"], json({1, 0}));
  EXPECT_EQ(j["ndarrays"]["arg0"]["data"], json({2.5}));
  EXPECT_EQ(j["ndarrays"]["arg0"]["grad"], json({0.5}));
  // The output reads back as inputs (fields) and gives the same state.
  json again = state_to_json(*k, make_state(*k, {{"fields", j["fields"]}, {"args", {j["ndarrays"]["arg0"]}}}));
  EXPECT_EQ(again, j);
  // No ndarray arguments: no "ndarrays" key.
  auto plain = ir::parse_kernel("field n : i32[]\nkernel {\n}\n");
  EXPECT_FALSE(state_to_json(*plain, make_state(*plain, nullptr)).contains("ndarrays"));
}

}  // namespace
}  // namespace pb::runtime::test

namespace pb::runtime {
namespace {

// A field too large to allocate is an error naming it and its bytes (std::bad_alloc before);
// a shape whose element count overflows is refused the same way (undefined behaviour before).
TEST(InterpState, FieldTooLargeToAllocateIsAnError) {
  auto huge = ir::parse_kernel("field x : f32[100000000000]\nkernel {\n}\n");
  try {
    make_state(*huge, nlohmann::json::object());
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("field 'x' of shape [100000000000] needs 1600000000000 bytes"),
              std::string::npos)
        << e.what();
  }
  auto overflow = ir::parse_kernel("field x : f32[4294967296, 4294967296]\nkernel {\n}\n");
  EXPECT_THROW(make_state(*overflow, nlohmann::json::object()), UserError);
  EXPECT_EQ(num_elements({int64_t{1} << 32, int64_t{1} << 32}), INT64_MAX);
}

}  // namespace
}  // namespace pb::runtime
