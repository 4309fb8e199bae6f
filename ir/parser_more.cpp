// Statement lines of the kinds no backend compiles (ir::has_no_backend): loop_unique,
// assume_in_range, decorate, external_tensor_shape_along_axis, SNode ops, rand, internal call,
// block corner index, block local ptr, ref, call, bit_struct_store (docs/ir-format.md).
#include <fmt/format.h>

#include <algorithm>
#include <climits>

#include "ir/parser_impl.h"
#include "ir/tensor_type.h"

namespace pb::ir::detail {

namespace {
// A `+N` or `-N` written right after a statement reference (assume_in_range's bounds).
int64_t read_signed_offset(Cursor& cur) {
  if (cur.peek() != '+' && cur.peek() != '-') cur.fail("expected `+N` or `-N` after the base");
  bool plus = cur.try_consume("+");
  return cur.read_int_in(plus ? 0 : INT32_MIN, INT32_MAX, "range bound offset");
}
}  // namespace

std::unique_ptr<Stmt> Parser::parse_matrix_init(DataType hint) {
  size_t i = 1;
  while (cur_.peek(i) == ' ') ++i;
  if (cur_.peek(i) != '$') return nullptr;
  cur_.expect("[");
  std::vector<Stmt*> values;
  do values.push_back(ref());
  while (cur_.try_consume(","));
  cur_.expect("]", "to close the tensor's elements");
  DataType t = hint;
  if (!t.known() && values.front() && values.front()->type.is_scalar_value()) {
    int n = static_cast<int>(values.size());
    if (auto id = intern_tensor_shape(std::span<const int>(&n, 1)))
      t = DataType::tensor_of(values.front()->type.scalar, *id);
  }
  return std::make_unique<MatrixInitStmt>(values, t);
}

std::unique_ptr<Stmt> Parser::parse_more(const std::string& word, DataType hint, size_t word_pos) {
  if (word == "get_element") {
    cur_.expect("(");
    Stmt* src = ref();
    std::vector<int> index;
    while (cur_.try_consume(","))
      index.push_back(static_cast<int>(cur_.read_int_in(0, kMaxTensorElements, "element index")));
    if (index.empty()) cur_.fail("get_element needs an element index: `get_element($x, 0)`");
    cur_.expect(")");
    return std::make_unique<GetElementStmt>(src, std::move(index));
  }
  if (word == "shift") {
    cur_.expect("ptr");
    cur_.expect("[");
    Stmt* origin = ref();
    cur_.expect("+");
    Stmt* offset = ref();
    cur_.expect("]");
    return std::make_unique<MatrixPtrStmt>(origin, offset);
  }
  if (word == "matrix") {
    cur_.expect("of");
    if (cur_.try_keyword("matrix")) {
      cur_.expect("ptr");
      cur_.expect("[");
      std::vector<Stmt*> ptrs;
      do ptrs.push_back(ref());
      while (cur_.try_consume(","));
      cur_.expect("]");
      return std::make_unique<MatrixOfMatrixPtrStmt>(ptrs);
    }
    cur_.expect("global");
    cur_.expect("ptr");
    cur_.expect("[");
    std::vector<FieldId> fields;
    do {
      cur_.skip_blanks();
      size_t pos = cur_.pos();
      std::string name = cur_.read_until(",]", "a field name");
      fields.push_back(field_for(name, hint.element().as_pointer(), pos));
    } while (cur_.try_consume(","));
    cur_.expect("]");
    cur_.expect(",");
    cur_.expect("index");
    cur_.expect("[");
    std::vector<Stmt*> idx;
    if (!cur_.try_consume("]")) {
      do idx.push_back(ref());
      while (cur_.try_consume(","));
      cur_.expect("]");
    }
    bool activate = true;
    if (cur_.try_consume("activate=")) {
      if (cur_.try_keyword("false"))
        activate = false;
      else
        cur_.expect("true");
    }
    return std::make_unique<MatrixOfGlobalPtrStmt>(std::move(fields), idx, activate);
  }
  if (word == "loop_unique") {
    cur_.expect("(");
    auto s = std::make_unique<LoopUniqueStmt>(ref());
    if (cur_.try_consume(",")) {
      cur_.expect("covers=[");
      do {
        cur_.expect("S", "before an SNode id in covers");
        s->covers.push_back(static_cast<int>(cur_.read_int_in(0, INT32_MAX, "SNode id")));
      } while (cur_.try_consume(","));
      cur_.expect("]");
    }
    cur_.expect(")");
    return s;
  }
  if (word == "assume_in_range") {
    cur_.expect("(");
    Stmt* base = ref();
    int64_t low = read_signed_offset(cur_);
    cur_.expect("<=");
    Stmt* in = ref();
    cur_.expect("<");
    cur_.skip_blanks();
    size_t base_pos = cur_.pos();
    if (ref() != base) cur_.fail_at(base_pos, "both bounds of assume_in_range must name the same base statement");
    int64_t high = read_signed_offset(cur_);
    cur_.expect(")");
    return std::make_unique<RangeAssumptionStmt>(in, base, low, high);
  }
  if (word == "external_tensor_shape_along_axis") {
    int axis = static_cast<int>(cur_.read_int_in(0, kMaxRank - 1, "axis"));
    cur_.expect(",");
    cur_.expect("arg_id");
    std::vector<int> arg_id;
    bool bracketed = cur_.try_consume("[");
    if (bracketed) {
      do arg_id.push_back(static_cast<int>(cur_.read_int_in(0, kMaxArgIndex, "argument index")));
      while (cur_.try_consume(","));
      cur_.expect("]");
    } else {
      arg_id.push_back(static_cast<int>(cur_.read_int_in(0, kMaxArgIndex, "argument index")));
    }
    auto s = std::make_unique<ExternalTensorShapeAlongAxisStmt>(axis, std::move(arg_id));
    s->bracketed = bracketed;
    return s;
  }
  if (word == "rand") {
    cur_.expect("(");
    cur_.expect(")");
    if (!hint.is_value()) cur_.fail_at(word_pos, "rand needs a scalar type hint", "write it as `<f32> $N = rand()`");
    return std::make_unique<RandStmt>(hint);
  }
  if (word == "internal") {
    cur_.expect("call");
    cur_.skip_blanks();
    size_t name_pos = cur_.pos();
    std::string name = cur_.read_word();
    if (name.empty()) cur_.fail_at(name_pos, "expected the name of the internal function");
    return std::make_unique<InternalFuncStmt>(name, parse_arguments("(", ")"));
  }
  if (word == "loop") {  // `loop $L block corner index K`; `loop $L index K` is parser_stmts.cpp's
    size_t back = cur_.pos();
    cur_.skip_blanks();
    if (!cur_.at_ref()) return nullptr;
    Stmt* loop = ref();
    if (!cur_.try_keyword("block")) {
      cur_.reset(back);
      return nullptr;
    }
    cur_.expect("corner");
    cur_.expect("index");
    return std::make_unique<BlockCornerIndexStmt>(loop, static_cast<int>(cur_.read_int_in(0, kMaxRank - 1, "axis")));
  }
  if (word == "block") {
    cur_.expect("local");
    cur_.expect("ptr");
    cur_.expect("(");
    cur_.expect("offset");
    cur_.expect("=");
    Stmt* offset = ref();
    cur_.expect(")");
    if (!hint.pointer || hint.gen)
      cur_.fail_at(word_pos, "a block local ptr needs a pointer type hint",
                   "write it as `<*f32> $N = block local ptr (offset = $o)`");
    auto s = std::make_unique<BlockLocalPtrStmt>(offset);
    s->type = hint;
    return s;
  }
  if (word == "ref") {
    cur_.expect("(");
    Stmt* var = ref();
    cur_.expect(")");
    return std::make_unique<ReferenceStmt>(var);
  }
  if (word == "call") {
    std::string func = cur_.read_string();
    cur_.expect(",");
    cur_.expect("args");
    cur_.expect("=");
    auto s = std::make_unique<FuncCallStmt>(func, parse_arguments("{", "}"));
    s->type = hint;  // the function's return type, as the hint says
    return s;
  }
  if (word == "bit_struct_store" || (word == "atomic" && cur_.try_keyword("bit_struct_store"))) {
    Stmt* ptr = ref();
    cur_.expect(",");
    cur_.expect("ch_ids=[");
    std::vector<int> ch_ids;
    if (!cur_.try_consume("]")) {
      do ch_ids.push_back(static_cast<int>(cur_.read_int_in(0, INT32_MAX, "channel id")));
      while (cur_.try_consume(","));
      cur_.expect("]");
    }
    cur_.expect(",");
    cur_.expect("values=");
    cur_.skip_blanks();
    size_t values_pos = cur_.pos();
    std::vector<Stmt*> values = parse_arguments("[", "]");
    if (values.size() != ch_ids.size())
      cur_.fail_at(values_pos,
                   fmt::format("bit_struct_store has {} channel id(s) but {} value(s)", ch_ids.size(), values.size()));
    return std::make_unique<BitStructStoreStmt>(ptr, std::move(ch_ids), values, word == "atomic");
  }
  if (std::find(std::begin(kSNodeOpNames), std::end(kSNodeOpNames), word) != std::end(kSNodeOpNames)) {
    cur_.expect("[", fmt::format("before the SNode that {} works on", word));
    cur_.skip_blanks();
    size_t name_pos = cur_.pos();
    std::string snode = cur_.read_until("]", "an SNode name");
    check_name(snode, name_pos);
    cur_.expect("]");
    Stmt* ptr = nullptr;
    Stmt* val = nullptr;
    if (cur_.try_keyword("ptr")) {
      cur_.expect("=");
      ptr = ref();
    }
    if (cur_.try_consume(",")) {
      cur_.expect("val");
      cur_.expect("=");
      val = ref();
    }
    return std::make_unique<SNodeOpStmt>(word, snode, ptr, val);
  }
  return nullptr;
}

// `OPEN$a, $bCLOSE`, possibly empty.
std::vector<Stmt*> Parser::parse_arguments(std::string_view open, std::string_view close) {
  cur_.expect(open);
  std::vector<Stmt*> args;
  if (cur_.try_consume(close)) return args;
  do args.push_back(ref());
  while (cur_.try_consume(","));
  cur_.expect(close);
  return args;
}

// `decorate $X : Loop-unique N` or `decorate $X : ... size = N`; the line carries no number.
std::unique_ptr<Stmt> Parser::parse_decoration() {
  Stmt* target = ref();
  cur_.expect(":");
  bool unique = cur_.try_keyword("Loop-unique");
  if (!unique) {
    cur_.expect("...", "after `decorate $X :` (Loop-unique N or ... size = N)");
    cur_.expect("size");
    cur_.expect("=");
  }
  int64_t n = cur_.read_int_in(0, INT32_MAX, unique ? "decoration" : "decoration size");
  return std::make_unique<DecorationStmt>(target, unique, n);
}

}  // namespace pb::ir::detail
