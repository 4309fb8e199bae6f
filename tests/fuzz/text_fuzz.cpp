// Target: CHI IR text. parse -> verify -> print -> parse -> print must agree (and the JSON of
// what verifies reads back); a parse error or a kernel the verifier rejects is fine.
#include "ir/diagnostic.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "tests/fuzz/fuzz_support.h"

using namespace pb;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::count_execution();
  std::unique_ptr<ir::Kernel> k;
  try {
    k = ir::parse_kernel(fuzz::as_text(data, size), "<fuzz>");
  } catch (const UserError&) {
    fuzz::count("parse error");
    return 0;
  }
  if (!ir::verify(*k).empty()) {
    fuzz::count("parsed, verifier error");
    return 0;
  }
  fuzz::count("verified (round trip checked)");
  fuzz::check_round_trip(*k);
  return 0;
}
