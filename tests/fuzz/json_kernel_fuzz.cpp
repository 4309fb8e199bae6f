// Target: the JSON form of a kernel. JSON -> kernel -> verify, then text and JSON round trips of
// what verifies (JSON -> text -> JSON included); a reader or verifier error is fine.
#include <nlohmann/json.hpp>

#include "ir/diagnostic.h"
#include "ir/json.h"
#include "ir/verifier.h"
#include "tests/fuzz/fuzz_support.h"

using namespace pb;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::count_execution();
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    fuzz::count("not JSON");
    return 0;
  }
  std::unique_ptr<ir::Kernel> k;
  try {
    k = ir::from_json(j);
  } catch (const UserError&) {
    fuzz::count("JSON reader error");
    return 0;
  }
  if (!ir::verify(*k).empty()) {
    fuzz::count("read, verifier error");
    return 0;
  }
  fuzz::count("verified (round trip checked)");
  fuzz::check_round_trip(*k);
  return 0;
}
