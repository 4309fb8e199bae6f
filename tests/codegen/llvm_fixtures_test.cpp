// Every fixture that runs carries out its own request (its run, gradient run or tangent run, with
// its seeds and run options) on the LLVM CPU backend and matches the reference interpreter in
// every output: fields with their gradient and dual fields, ndarrays, sparse activity, returned
// values, printed lines. Floats match within 1e-5 relative (f32) or 1e-12 (f64), integers exactly,
// unless the fixture declares a difference (`backends.cpu`, docs/fixtures.md). A fixture whose
// run must fail must fail on the CPU too. A check that compared nothing fails.
#include "tests/fixture_backend_check.h"

namespace pb::workbench {
namespace {

class CpuFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(CpuFixture, MatchesTheInterpreter) { pb::test::check_fixture_on(GetParam(), Backend::cpu); }

INSTANTIATE_TEST_SUITE_P(Fixtures, CpuFixture, ::testing::ValuesIn(pb::test::running_fixture_names()),
                         pb::test::fixture_test_name);

}  // namespace
}  // namespace pb::workbench
