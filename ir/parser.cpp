#include "ir/parser.h"

#include <fmt/format.h>

#include "ir/parser_impl.h"
#include "ir/tensor_type.h"
#include "ir/type_rules.h"

namespace pb::ir {
namespace detail {

void Parser::parse_file() {
  if (!cur_.skip_to_content()) cur_.fail("empty input: expected `kernel {`", "give a file that holds a kernel dump");
  while (!cur_.try_keyword("kernel")) {
    if (cur_.peek() == '[') {  // a print_ir log line such as `[I 11/22/26 ...] [k] Simplified I:`
      while (!cur_.at_line_end()) cur_.read_until("\n", "");
      if (!cur_.skip_to_content()) cur_.fail("expected `kernel {` after the log line");
      continue;
    }
    parse_header_line();
    if (!cur_.skip_to_content()) cur_.fail("expected `kernel {` after the header");
  }
  cur_.skip_blanks();
  if (cur_.peek() == '"') {
    k_.name = cur_.read_string();
  } else if (cur_.peek() != '{') {
    cur_.skip_blanks();
    size_t name_pos = cur_.pos();
    k_.name = cur_.read_until(" \t{", "a kernel name or '{'");
    cur_.check_utf8(name_pos, cur_.pos());  // printed quoted, and carried by JSON
  }
  cur_.expect("{", "to open the kernel");
  cur_.expect_line_end();
  parse_block(k_.root());
  cur_.expect("}", "to close the kernel");
  cur_.expect_line_end();
  if (cur_.skip_to_content()) cur_.fail("unexpected text after the end of the kernel");
  for (Stmt* s : unnamed_) s->id = k_.fresh_id();
}

Shape Parser::parse_shape() {
  cur_.expect("[", "to start a shape");
  Shape s;
  if (cur_.try_consume("]")) return s;
  do {
    cur_.skip_blanks();
    size_t pos = cur_.pos();
    int64_t n = cur_.read_int();
    if (n <= 0) cur_.fail_at(pos, "shape dimensions must be positive");
    s.push_back(n);
  } while (cur_.try_consume(","));
  cur_.expect("]", "to end the shape");
  return s;
}

void Parser::check_name(const std::string& name, size_t pos) {
  if (auto problem = name_problem(name)) cur_.fail_at(pos, *problem, kNameRemedy);
}

DataType Parser::parse_type_name(const std::string& raw, size_t pos) {
  std::string t = raw;
  auto strip = [&](const std::string& suffix) {
    if (t.size() > suffix.size() && t.compare(t.size() - suffix.size(), suffix.size(), suffix) == 0) {
      t.resize(t.size() - suffix.size());
      return true;
    }
    return false;
  };
  // Older Taichi: "f32 x1" or "u1  x1" (a value), "f32*x1" (a pointer).
  bool legacy_pointer = strip("*x1");
  if (!legacy_pointer) strip("x1");
  while (!t.empty() && t.back() == ' ') t.pop_back();
  if (t.find("Tensor") != std::string::npos) {
    auto dt = parse_type(t);
    if (!dt)
      cur_.fail_at(
          pos, fmt::format("malformed tensor type '{}'", raw),
          "write `[Tensor (N, ...) T]` with extents of at least 1, a primitive element type T and at most 65536 "
          "elements");
    return *dt;
  }
  if (t.find(" x") != std::string::npos || t.find("*x") != std::string::npos)
    cur_.fail_at(pos, fmt::format("unsupported type '{}': vector (SIMD lane) values are out of scope", raw),
                 "dump the kernel with one lane (Taichi's vectorization off)");
  if (t == "gen" && legacy_pointer) return DataType::gen_pointer();  // Taichi 0.6: `<gen*x1>`
  auto dt = parse_type(t);
  if (!dt) {
    if (!t.empty() && t[0] == '^')
      cur_.fail_at(pos, fmt::format("unsupported type '{}': bit pointers are out of scope", raw));
    cur_.fail_at(pos, fmt::format("unknown type '{}'", raw),
                 "types are f16 f32 f64 i8 i16 i32 i64 u1 u8 u16 u32 u64, quant types (qi4, qfx(...), ...) and "
                 "pointers *T");
  }
  if (legacy_pointer) dt->pointer = true;
  return *dt;
}

DataType Parser::parse_type_hint() {
  cur_.skip_blanks();
  size_t pos = cur_.pos();
  if (!cur_.try_consume("<")) return {};
  std::string text = cur_.read_until(">", "a type");
  cur_.expect(">", "to close the type hint");
  return parse_type_name(text, pos + 1);
}

DataType Parser::parse_header_type(const char* what) {
  cur_.skip_blanks();
  size_t pos = cur_.pos();
  bool tensor = cur_.peek() == '[';
  std::string text = tensor ? cur_.read_until("]", what) + "]" : cur_.read_word();
  if (tensor) cur_.expect("]", "to close the tensor type");
  auto t = parse_type(text);
  if (!t || t->pointer || t->quant != 0)
    cur_.fail_at(pos, fmt::format("unknown {} '{}'", what, text),
                 "use f16 f32 f64 i8 i16 i32 i64 u1 u8 u16 u32 u64, or a tensor of one: [Tensor (3) f32]");
  return *t;
}

void Parser::parse_field_decl() {
  cur_.skip_blanks();
  size_t pos = cur_.pos();
  Field f;
  f.name = cur_.read_until(" \t:", "a field name");
  check_name(f.name, pos);
  if (k_.find_field(f.name)) cur_.fail_at(pos, fmt::format("field '{}' is declared twice", f.name));
  f.declared = true;
  cur_.expect(":", "after the field name");
  cur_.skip_blanks();
  DataType cell = parse_header_type("field type");
  f.dtype = cell.scalar;
  f.tensor = cell.tensor;
  f.shape = parse_shape();
  std::string grad, dual;
  for (;;) {
    if (cur_.try_keyword("grad")) {
      cur_.skip_blanks();
      size_t at = cur_.pos();
      grad = cur_.read_until(" \t", "the gradient field's name");
      check_name(grad, at);
    } else if (cur_.try_keyword("dual")) {
      cur_.skip_blanks();
      size_t at = cur_.pos();
      dual = cur_.read_until(" \t", "the dual field's name");
      check_name(dual, at);
    } else if (cur_.try_keyword("in")) {
      cur_.skip_blanks();
      size_t space_pos = cur_.pos();
      f.space = cur_.read_until(" \t", "an index space name");
      if (!k_.find_space(f.space))
        cur_.fail_at(space_pos, fmt::format("index space '{}' is not declared", f.space),
                     "declare it first: `dense NAME : [N]`");
    } else {
      break;
    }
  }
  cur_.expect_line_end();
  Field copy = f;
  FieldId id = k_.add_field(std::move(f));
  auto companion = [&](const std::string& name, bool is_grad) {
    if (name.empty()) return;
    if (k_.find_field(name))
      cur_.fail_at(pos, fmt::format("companion field '{}' of '{}' is declared twice", name, copy.name));
    Field c = copy;
    c.name = name;
    c.grad.reset();
    c.dual.reset();
    c.primal = id;
    FieldId cid = k_.add_field(std::move(c));
    (is_grad ? k_.field(id).grad : k_.field(id).dual) = cid;
  };
  companion(grad, true);
  companion(dual, false);
}

void Parser::parse_header_line() {
  size_t pos = cur_.pos();
  if (cur_.try_keyword("field")) return parse_field_decl();
  std::optional<SNodeKind> snode_kind;
  for (size_t i = 0; i < std::size(kSNodeKindNames) && !snode_kind; ++i)
    if (cur_.try_keyword(kSNodeKindNames[i])) snode_kind = static_cast<SNodeKind>(i);
  if (snode_kind) {
    IndexSpace sp;
    sp.kind = *snode_kind;
    cur_.skip_blanks();
    size_t name_pos = cur_.pos();
    sp.name = cur_.read_until(" \t:", "an index space name");
    check_name(sp.name, name_pos);
    if (k_.find_space(sp.name)) cur_.fail_at(pos, fmt::format("index space '{}' is declared twice", sp.name));
    cur_.expect(":", "after the index space name");
    sp.shape = parse_shape();
    sp.declared = true;
    if (cur_.try_keyword("in")) {
      cur_.skip_blanks();
      size_t parent_pos = cur_.pos();
      sp.parent = cur_.read_until(" \t", "the parent index space's name");
      k_.spaces.push_back(sp);
      if (auto problem = nesting_problem(k_))
        cur_.fail_at(parent_pos, *problem, "declare the parent first, with a shape that divides this one's");
      k_.spaces.pop_back();
    }
    cur_.expect_line_end();
    k_.spaces.push_back(std::move(sp));
    return;
  }
  if (cur_.try_keyword("arg")) {
    ArgDecl a;
    a.index = static_cast<int>(cur_.read_int_in(0, kMaxArgIndex, "argument index"));
    if (k_.find_arg(a.index)) cur_.fail_at(pos, fmt::format("argument {} is declared twice or negative", a.index));
    cur_.expect(":", "after the argument index");
    cur_.skip_blanks();
    if (cur_.try_consume("ndarray<")) {
      a.ndarray = true;
      DataType element = parse_header_type("ndarray element type");
      a.dtype = element.scalar;
      a.tensor = element.tensor;
      cur_.expect(",", "between the ndarray element type and its dimension count");
      cur_.skip_blanks();
      size_t ndim_pos = cur_.pos();
      a.ndim = static_cast<int>(cur_.read_int_in(0, kMaxRank, "ndarray rank"));
      if (a.ndim < 0) cur_.fail_at(ndim_pos, "an ndarray has zero or more dimensions");
      cur_.expect(">", "to close ndarray<T, N>");
    } else if (cur_.peek() == '[') {
      DataType t = parse_header_type("argument type");
      a.dtype = t.scalar;
      a.tensor = t.tensor;
    } else {
      size_t tpos = cur_.pos();
      std::string t = cur_.read_word();
      auto kind = scalar_from_name(t);
      if (!kind)
        cur_.fail_at(tpos, fmt::format("unknown argument type '{}'", t),
                     "use a scalar type, a tensor type ([Tensor (2) f32]) or ndarray<T, N>");
      a.dtype = *kind;
      if (cur_.try_keyword("element")) parse_element_of(a);
    }
    cur_.expect_line_end();
    for (const ArgDecl& e : k_.args)
      if (e.index == a.element_of || e.element_of == a.index)
        cur_.fail_at(pos, "an argument that stands for an element of another is declared with that other",
                     "the tensor argument is the caller's: declare it, or its elements, not both");
    k_.args.push_back(a);
    return;
  }
  std::string word = cur_.read_word();
  cur_.fail_at(pos,
               word.empty() ? "expected `kernel {` or a header line (field, dense, pointer, bitmasked, dynamic, arg)"
                            : fmt::format("unknown header line '{}'", word),
               "a file is optional `field`/`dense`/`pointer`/`bitmasked`/`dynamic`/`arg` lines followed by `kernel {`");
}

// `element E of arg N` after a scalar argument's type: it is element E of the caller's tensor
// argument N.
void Parser::parse_element_of(ArgDecl& a) {
  a.element = static_cast<int>(cur_.read_int_in(0, kMaxTensorElements - 1, "element index"));
  cur_.skip_blanks();
  size_t at = cur_.pos();
  if (!cur_.try_keyword("of") || !cur_.try_keyword("arg"))
    cur_.fail_at(at, "expected `of arg N` after the element index", "write `arg 3 : f32 element 1 of arg 2`");
  a.element_of = static_cast<int>(cur_.read_int_in(0, kMaxArgIndex, "argument index"));
}

void Parser::parse_block(Block& b) {
  for (;;) {
    if (!cur_.skip_to_content()) cur_.fail("unexpected end of input: a block is not closed", "add the missing '}'");
    if (cur_.peek() == '}') return;
    size_t pos = cur_.pos();
    auto s = parse_stmt();
    if (!s) continue;
    Stmt* raw = b.push_back(std::move(s));
    if (!raw->is_container()) continue;
    if (depth_ + 1 > kMaxNestingDepth)
      cur_.fail_at(pos, fmt::format("blocks nest more than {} deep", kMaxNestingDepth),
                   "no kernel a compiler emits nests this deep; split the kernel or flatten the nesting");
    parse_container_body(*raw);
  }
}

void Parser::parse_container_body(Stmt& s) {
  ++depth_;
  const auto* task = dyn_cast<OffloadedStmt>(&s);
  bool loop = isa<RangeForStmt>(&s) || isa<StructForStmt>(&s) || isa<MeshForStmt>(&s) ||
              (task && (task->is_loop_task() || task->task == TaskType::mesh_for));
  const bool scope = loop || isa<WhileStmt>(&s);
  if (loop) open_loops_.push_back(&s);
  if (scope) open_scopes_.push_back(&s);
  struct Leave {
    int& depth;
    std::vector<Stmt*>& loops;
    std::vector<Stmt*>& scopes;
    bool loop, scope;
    ~Leave() {
      --depth;
      if (loop) loops.pop_back();
      if (scope) scopes.pop_back();
    }
  } leave{depth_, open_loops_, open_scopes_, loop, scope};
  if (auto* t = dyn_cast<OffloadedStmt>(&s)) {
    parse_task_blocks(*t, legacy_task_brace_);
    return;
  }
  auto blocks = s.blocks();
  if (auto var = loop_vars_.find(&s); var != loop_vars_.end()) {
    // A Taichi 0.5 loop stores its index into its variable at the top of every iteration.
    auto* index = blocks[0]->push_back(std::make_unique<LoopIndexStmt>(&s, 0));
    index->type = DataType::of(ScalarKind::i32);
    auto* store = blocks[0]->push_back(std::make_unique<LocalStoreStmt>(var->second, index));
    store->type = type_rule(*store, k_).type;
    unnamed_.push_back(index);
    unnamed_.push_back(store);
  }
  parse_block(*blocks[0]);
  cur_.expect("}");
  if (auto* i = dyn_cast<IfStmt>(&s)) {
    if (cur_.try_keyword("else")) {
      cur_.expect("{", "after else");
      cur_.expect_line_end();
      parse_block(i->ensure_false_block());
      cur_.expect("}");
    }
  }
  cur_.expect_line_end();
}

}  // namespace detail

std::unique_ptr<Kernel> parse_kernel(std::string_view text, const std::string& file) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a UTF-8 byte-order mark
  auto k = std::make_unique<Kernel>();
  detail::Parser p(text, file, *k);
  p.parse_file();
  return k;
}

}  // namespace pb::ir
