// Target: CHI IR text as users paste it. The dump layer (logs, prefixes, wrapped lines, bare
// lists) then parse (and the layout a header-less access chain shows) -> verify -> print -> parse -> print must agree
// (and the JSON of what verifies reads back); a parse error or a kernel the verifier rejects is fine, and a located
// error must point into the original text.
#include "ir/diagnostic.h"
#include "ir/dump_source.h"
#include "ir/parser.h"
#include "ir/snode.h"
#include "ir/verifier.h"
#include "tests/fuzz/fuzz_support.h"

using namespace pb;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::count_execution();
  std::unique_ptr<ir::Kernel> k;
  std::string_view text = fuzz::as_text(data, size);
  try {
    ir::PreparedDump prepared = ir::prepare_dump(text, "", "<fuzz>");
    try {
      k = ir::parse_kernel(prepared.parser_input(text), "<fuzz>");
      ir::declare_chain_layout(*k);  // as workbench/workspace/load.cpp reads a dump
    } catch (const UserError& e) {
      if (!prepared.unchanged && e.diagnostic().line > 0) (void)prepared.relocate(e.diagnostic(), text);
      throw;
    }
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
