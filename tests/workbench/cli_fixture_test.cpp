// `passbench fixture check` and `fixture update` on the bundled fixtures and on temporary ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace fs = std::filesystem;
using pb::test::run_cli;
using pb::test::slurp;
using pb::test::source_path;

namespace {

// A scratch copy of one bundled fixture (and its kernel) that a test may edit.
fs::path scratch_fixture(const std::string& dir, const std::string& name) {
  fs::path tmp = fs::temp_directory_path() / ("pb_fixture_test_" + std::to_string(::getpid())) / name;
  fs::create_directories(tmp);
  for (const auto& e : fs::directory_iterator(source_path("fixtures/" + dir)))
    if (e.path().filename().string().rfind(name, 0) == 0 || e.path().extension() == ".chi")
      fs::copy_file(e.path(), tmp / e.path().filename(), fs::copy_options::overwrite_existing);
  return tmp / (name + ".fixture.json");
}

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(slurp(p.string())); }
void write_json(const fs::path& p, const nlohmann::json& j) { std::ofstream(p) << j.dump(2) << "\n"; }

TEST(FixtureCheck, BundledFixturesPass) {
  auto r = run_cli("fixture check " + source_path("fixtures"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" 0 failed"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL "), std::string::npos) << r.out;
}

TEST(FixtureCheck, AtLeastFifteenFixturesAreBundled) {
  auto r = run_cli("fixture check " + source_path("fixtures"));
  size_t count = 0;
  for (size_t p = r.out.find("PASS "); p != std::string::npos; p = r.out.find("PASS ", p + 1)) ++count;
  EXPECT_GE(count, 15u) << r.out;
}

TEST(FixtureCheck, WrongIrExpectationFailsWithADiff) {
  auto fx = scratch_fixture("interp", "decay_loop_n10");
  auto j = read_json(fx);
  ASSERT_TRUE(j["expect"]["ir"].is_array());  // one string per line
  bool replaced = false;
  for (auto& line : j["expect"]["ir"]) {
    std::string text = line;
    if (auto at = text.find("const 0.95"); at != std::string::npos) {
      text.replace(at, 10, "const 0.96");
      line = text;
      replaced = true;
    }
  }
  ASSERT_TRUE(replaced);
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("FAIL "), std::string::npos);
  EXPECT_NE(r.out.find("-  <f32> $3 = const 0.96"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("+  <f32> $3 = const 0.95"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 passed, 1 failed"), std::string::npos) << r.out;
}

TEST(FixtureCheck, WrongValueFailsNamingTheElement) {
  auto fx = scratch_fixture("interp", "decay_loop_n10");
  auto j = read_json(fx);
  j["expect"]["values"]["fields"]["y"]["data"][0] = 0.7;
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("y.data[0]: expected 0.7"), std::string::npos) << r.out;
}

TEST(FixtureCheck, ExpectedErrorThatDoesNotHappenFails) {
  auto fx = scratch_fixture("interp", "decay_loop_n10");
  auto j = read_json(fx);
  j["expect"]["error"] = {{"stage", "run"}, {"contains", "overflow"}};
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("but everything succeeded"), std::string::npos) << r.out;
}

TEST(FixtureCheck, WrongErrorSubstringFails) {
  auto fx = scratch_fixture("errors", "adstack_overflow");
  auto j = read_json(fx);
  j["expect"]["error"]["contains"] = "max_size=5";
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("max_size=4"), std::string::npos) << r.out;
}

TEST(FixtureUpdate, RewritesExpectationsSoCheckPasses) {
  auto fx = scratch_fixture("interp", "decay_loop_n10");
  auto j = read_json(fx);
  j["expect"]["values"]["fields"]["y"]["data"][0] = 0.7;
  j["expect"]["ir"] = "stale";
  write_json(fx, j);
  ASSERT_EQ(run_cli("fixture check " + fx.string()).exit_code, 1);
  auto u = run_cli("fixture update " + fx.string());
  EXPECT_EQ(u.exit_code, 0) << u.out;
  EXPECT_NE(u.out.find("UPDATED"), std::string::npos) << u.out;
  auto after = read_json(fx);
  EXPECT_TRUE(after["expect"]["ir"].is_array());  // rewritten as lines
  EXPECT_NEAR(after["expect"]["values"]["fields"]["y"]["data"][0].get<double>(), 0.67898955, 1e-6);
  EXPECT_EQ(after["expect"]["tolerance"], j["expect"]["tolerance"]);
  EXPECT_EQ(run_cli("fixture check " + fx.string()).exit_code, 0);
  auto again = run_cli("fixture update " + fx.string());
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;
}

TEST(FixtureUpdate, KeepsAMatchingHandWrittenErrorSubstring) {
  auto fx = scratch_fixture("errors", "adstack_overflow");
  run_cli("fixture update " + fx.string());
  EXPECT_EQ(read_json(fx)["expect"]["error"]["contains"],
            read_json(source_path("fixtures/errors/adstack_overflow.fixture.json"))["expect"]["error"]["contains"]);
}

TEST(FixtureCheck, MissingFixturePathIsExit2) {
  auto r = run_cli("fixture check /nonexistent.fixture.json");
  EXPECT_NE(r.exit_code, 0);
  auto empty = fs::temp_directory_path() / ("pb_empty_" + std::to_string(::getpid()));
  fs::create_directories(empty);
  EXPECT_EQ(run_cli("fixture check " + empty.string()).exit_code, 2);
}

}  // namespace

namespace {

// A misspelled key fails naming the key and the nearest valid one; it was ignored (and the
// fixture passed) before the schema was checked.
struct Misspelling {
  const char* name;
  const char* path;  // where to put the misspelled key: "", "expect", "expect.tolerance", "grad"
  const char* key;
  const char* message;  // what the error must say
};

class FixtureSchema : public ::testing::TestWithParam<Misspelling> {};

TEST_P(FixtureSchema, UnknownKeyNamesTheNearestValidOne) {
  auto fx = scratch_fixture("autodiff", "binary_mul_f32");
  auto j = read_json(fx);
  nlohmann::json* at = &j;
  std::string path = GetParam().path;
  for (size_t from = 0; !path.empty();) {
    size_t dot = path.find('.', from);
    std::string part = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    at = &(*at)[part];
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  (*at)[GetParam().key] = 1;
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find(GetParam().message), std::string::npos) << r.out << r.err;
}

INSTANTIATE_TEST_SUITE_P(
    Keys, FixtureSchema,
    ::testing::Values(
        Misspelling{"Expekt", "", "expekt", "unknown key \"expekt\"; did you mean \"expect\"?"},
        Misspelling{"Pipline", "", "pipline", "unknown key \"pipline\"; did you mean \"pipeline\"?"},
        Misspelling{"Valuez", "expect", "valuez", "unknown key \"expect.valuez\"; did you mean \"values\"?"},
        Misspelling{"Rell", "expect.tolerance", "rell", "unknown key \"expect.tolerance.rell\"; did you mean \"rel\"?"},
        Misspelling{"Sead", "grad", "sead", "unknown key \"grad.sead\"; did you mean \"seed\"?"}),
    [](const ::testing::TestParamInfo<Misspelling>& p) { return std::string(p.param.name); });

TEST(FixtureSchema, MissingRequiredKeyIsAnError) {
  auto fx = scratch_fixture("autodiff", "binary_mul_f32");
  auto j = read_json(fx);
  j["gradcheck"].erase("loss");
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("\"gradcheck\" needs \"loss\""), std::string::npos) << r.out;
}

// Every element at a kink (or no element): the gradcheck compared nothing, which is no pass.
TEST(FixtureCheck, GradcheckThatComparesNothingFails) {
  auto fx = scratch_fixture("autodiff", "binary_max_f32");
  auto j = read_json(fx);
  auto& data = j["inputs"]["fields"];
  ASSERT_TRUE(data.contains("a") && data.contains("b")) << data.dump();
  data["b"]["data"] = data["a"]["data"];  // max(a, a): every element on the kink
  j["gradcheck"]["wrt"] = {"a", "b"};
  j.erase("grad");
  j["expect"].erase("values");
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("gradcheck: nothing compared"), std::string::npos) << r.out;
  j["gradcheck"]["expect_nothing_compared"] = true;
  write_json(fx, j);
  r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

// A fixture whose loop runs 0 times leaves its stacks with only the pushes beside the alloc: it
// does not test them, so it fails unless it says the empty case is its purpose (it passed before,
// the gradient being 0 on both sides).
TEST(FixtureCheck, StacksLeftUnexercisedFail) {
  auto fx = scratch_fixture("autodiff_stacks", "atomic_add_0d_every_iteration_f32");
  auto j = read_json(fx);
  j["inputs"]["fields"]["n"]["data"] = {0};
  j["expect"].erase("values");
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("stack(s) $22 got no push inside a loop or if"), std::string::npos) << r.out;
  j["expect_unexercised_stacks"] = true;
  write_json(fx, j);
  r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  j["inputs"]["fields"]["n"]["data"] = {1};  // one iteration exercises it: the claim is now false
  write_json(fx, j);
  r = run_cli("fixture check " + fx.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("says \"expect_unexercised_stacks\", but every stack was pushed"), std::string::npos) << r.out;
}

}  // namespace

namespace {

// check and update compare the same things: update on the bundled fixtures (a clean tree)
// rewrites nothing. It rewrote 175 of 316 before, because it wrote every statistic while check
// compared only the ones a fixture names.
TEST(FixtureUpdate, OnACleanTreeChangesNothing) {
  fs::path tmp = fs::temp_directory_path() / ("pb_fixture_clean_" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::copy(source_path("fixtures"), tmp, fs::copy_options::recursive);
  auto r = run_cli("fixture update " + tmp.string());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  size_t compared = 0;
  for (const auto& e : fs::recursive_directory_iterator(tmp)) {
    if (!e.is_regular_file()) continue;
    auto rel = fs::relative(e.path(), tmp);
    EXPECT_EQ(slurp(e.path().string()), slurp(source_path("fixtures/" + rel.string()))) << rel;
    ++compared;
  }
  EXPECT_GT(compared, 300u);
  fs::remove_all(tmp);
}

}  // namespace

namespace {

// --filter keeps the fixtures whose path contains the text; -q prints only failures and the
// summary; -j runs several at once and prints in the same order as one job.
TEST(FixtureCheck, FilterQuietAndJobs) {
  auto dir = source_path("fixtures");
  auto r = run_cli("fixture check " + dir + " --filter sibling_loops");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS "), std::string::npos);
  for (size_t p = r.out.find("PASS "); p != std::string::npos; p = r.out.find("PASS ", p + 1))
    EXPECT_NE(r.out.substr(p, r.out.find('\n', p) - p).find("sibling_loops"), std::string::npos);
  r = run_cli("fixture check " + dir + " --filter sibling_loops -q");
  EXPECT_EQ(r.out.find("PASS "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" 0 failed"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("fixture check " + dir + " -j 2").out, run_cli("fixture check " + dir).out);
  r = run_cli("fixture check " + dir + " --filter no_such_fixture");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no fixture path contains 'no_such_fixture'"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// Expected IR is a list of lines (a change shows as changed lines in a diff); the older single
// string still reads, and update rewrites it as lines.
TEST(FixtureFormat, IrAsOneStringStillReadsAndUpdateWritesLines) {
  auto fx = scratch_fixture("interp", "decay_loop_n10");
  auto j = read_json(fx);
  ASSERT_TRUE(j["expect"]["ir"].is_array());
  std::string text;
  for (const auto& line : j["expect"]["ir"]) text += line.get<std::string>() + "\n";
  j["expect"]["ir"] = text;
  write_json(fx, j);
  EXPECT_EQ(run_cli("fixture check " + fx.string()).exit_code, 0);
  EXPECT_EQ(run_cli("fixture update " + fx.string()).exit_code, 0);
  EXPECT_TRUE(read_json(fx)["expect"]["ir"].is_array());
  EXPECT_EQ(read_json(fx)["expect"]["ir"].size(), std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

namespace {

// backends.cpu.expect: the cpu's values are compared with the fixture's stated values for the
// cpu, not with the interpreter's.
TEST(FixtureCheck, PerBackendExpectationsReplaceTheInterpretersValues) {
  auto fx = scratch_fixture("interp", "f32_cancellation");
  auto j = read_json(fx);
  nlohmann::json y = j["expect"]["values"]["fields"]["y"]["data"];
  nlohmann::json other = y;
  other[0] = other[0].get<double>() + 1;
  j["backends"]["cpu"] = {{"known_difference", "test: a value only the cpu gives"}, {"expect", {{"y", other}}}};
  write_json(fx, j);
  auto r = run_cli("fixture check " + fx.string() + " --backend=cpu");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("DIFFERS"), std::string::npos) << r.out;
  j["backends"]["cpu"]["expect"]["y"] = y;
  write_json(fx, j);
  r = run_cli("fixture check " + fx.string() + " --backend=cpu");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  j["backends"]["cpu"]["expect"] = {{"nope", y}};
  write_json(fx, j);
  r = run_cli("fixture check " + fx.string() + " --backend=cpu");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("backends.cpu.expect.nope"), std::string::npos) << r.out << r.err;
}

}  // namespace
