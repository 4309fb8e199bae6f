// The process's interned quant types and tensor shapes (ir/quant.h, ir/tensor_type.h): a
// DataType names them by id, so every image that reads DataTypes must look ids up in the same
// tables. A loaded module (libpassbench_cpu.so, runtime/cpu/module_api.h) has copies of this code
// and adopts its host's tables before it reads any kernel.
#pragma once

#include <deque>
#include <mutex>
#include <vector>

#include "ir/quant.h"

namespace pb::ir {

struct TypeTables {
  std::mutex mutex;
  std::deque<QuantType> quants;         // id = index + 1; a deque keeps references stable
  std::deque<std::vector<int>> shapes;  // tensor shapes, id = index + 1
};

// This image's tables, or the ones adopted.
TypeTables& type_tables();
// From now on, this image looks ids up in `host` (which outlives it).
void adopt_type_tables(TypeTables* host);

}  // namespace pb::ir
