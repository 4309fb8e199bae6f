// `passbench compile` and `passbench compare-lowerings`: SPIR-V, MSL and GLSL for a kernel, and
// what each adstack lowering costs (workbench/workspace/compile.h does the work).
#pragma once

#include <cstdint>
#include <string>

#include "codegen/spirv/optimizer_report.h"

namespace pb::cli {

// Options shared by both commands: the pipeline, the lowering and the optimizer.
struct CodegenArgs {
  std::string file;
  std::string dump;    // which dump of a multi-dump log (--dump); "" = the last
  std::string passes;  // empty: the fixture's pipeline when FILE is a fixture, else none
  bool passes_given = false;
  std::string storage, count, push, bounds;  // empty: the default (or what --lowering says)
  std::string lowering;                      // extra parse_lowering pairs: "float64=on,capacity=32"
  std::string float64 = "auto", int64 = "auto";
  uint64_t max_id_bound = codegen::spirv::kDefaultMaxIdBound;
  bool no_intermediate_dce = false;
  bool no_compact_ids = false;
  bool fallback = false;        // --spirv-opt-fallback
  bool measure_passes = false;  // --measure-passes
};

struct CompileArgs {
  CodegenArgs codegen;
  std::string target;  // spirv, spvasm, msl, glsl
  bool no_optimize = false;
  std::string report;            // --spirv-opt-report FILE.json
  bool table = false;            // --spirv-opt-table
  std::string output;            // -o: a file, or a directory (one file per task); empty: stdout
  int opt_level = 2;             // --target=llvm: O0..O3
  int64_t part_statements = -1;  // --target=llvm: as run --part-statements
};
int cmd_compile(const CompileArgs& a);
// --target=llvm: the kernel's LLVM module before and after optimization (llvm_compile_command.cpp).
int cmd_compile_llvm(const CompileArgs& a);

struct CompareArgs {
  CodegenArgs codegen;
  bool json = false;
};
int cmd_compare_lowerings(const CompareArgs& a);

}  // namespace pb::cli
