// Which memory a statement reads and writes: locals and autodiff stacks by their alloca, fields
// by field, ndarrays by argument. Passes that move statements use it to keep every read seeing
// the write it saw before the move.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_set>

#include "ir/kernel.h"
#include "ir/stmt.h"

namespace pb::passes {

class MemoryFootprint {
 public:
  // Which locations a footprint records: locals (allocas, autodiff stacks), which every kernel
  // launch starts afresh, or global memory (fields, ndarrays), which a reverse kernel finds as the
  // forward kernel left it. A pointer of unknown origin counts in both.
  enum class Scope { locals, globals, all };
  explicit MemoryFootprint(Scope scope = Scope::all) : scope_(scope) {}

  // Adds what `s` itself reads and writes (not what the statements of its blocks do).
  void add(const ir::Stmt& s);
  // Adds `s` and every statement nested in it.
  void add_tree(const ir::Stmt& s);
  // A write of one that the other reads or writes.
  bool conflicts(const MemoryFootprint& other) const;
  bool reads_anything() const { return reads_unknown_ || !reads_.empty(); }
  bool touches_anything() const { return reads_anything() || writes_unknown_ || !writes_.empty(); }
  // A location this one reads that `other` writes.
  bool reads_what_is_written_by(const MemoryFootprint& other) const;
  // The first location both touch where at least one writes, for messages ("field 'x'").
  std::string shared_location(const MemoryFootprint& other, const ir::Kernel& k) const;

 private:
  void read(const ir::Stmt* ptr);
  void write(const ir::Stmt* ptr);
  bool records(uint64_t key) const;
  Scope scope_;
  std::unordered_set<uint64_t> reads_, writes_;
  bool reads_unknown_ = false, writes_unknown_ = false;  // through a pointer of unknown origin
};

}  // namespace pb::passes
