// Statement lines of the text form. See docs/ir-format.md for the grammar.
#include <fmt/format.h>

#include <cctype>

#include "ir/parser_impl.h"
#include "ir/type_rules.h"
#include "ir/visitor.h"

namespace pb::ir::detail {

namespace {
// Words that start statements passbench does not model yet (older spellings of SNode, offload...).
bool is_known_unsupported(const std::string& w) {
  static const char* const words[] = {"shift",
                                      "get_root",
                                      "snode",
                                      "get_ch",
                                      "rand",
                                      "bls",
                                      "block_local",
                                      "matrix",
                                      "kernel_return",
                                      "call",
                                      "func",
                                      "ref",
                                      "global_temp",
                                      "thread_local",
                                      "decorate",
                                      "clear_list",
                                      "list_gen",
                                      "internal_func_call",
                                      "external_tensor_shape"};
  for (const char* x : words)
    if (w.rfind(x, 0) == 0) return true;
  return false;
}
}  // namespace

void Parser::unsupported(const std::string& word, size_t pos) {
  cur_.fail_at(
      pos, fmt::format("unsupported statement '{}' at line {}", word, cur_.line()),
      "docs/ir-format.md lists the statements passbench reads; dump the kernel at another stage, or file an issue "
      "with this dump");
}

Stmt* Parser::ref() {
  cur_.skip_blanks();
  size_t pos = cur_.pos();
  int id = cur_.read_ref();
  auto it = ids_.find(id);
  if (it == ids_.end())
    cur_.fail_at(pos, fmt::format("undefined statement ${}", id),
                 "statements must be defined before they are used, in text order");
  return it->second;
}

// `$12` or the older `[$12[0]]` / ` [$12[0]]` form of a local address.
Stmt* Parser::legacy_local_ref() {
  cur_.skip_blanks();
  if (!cur_.try_consume("[")) return ref();
  Stmt* s = ref();
  cur_.expect("[", "in a legacy local address");
  size_t pos = cur_.pos();
  if (cur_.read_int() != 0) cur_.fail_at(pos, "vector lanes other than 0 are not supported");
  cur_.expect("]");
  cur_.expect("]");
  return s;
}

bool Parser::names_container(const std::string& name, DataType hint) const {
  if (k_.find_field(name) || hint.scalar != ScalarKind::unknown) return false;
  return k_.find_space(name) || (hint.gen && scalar_of_snode_name(name) == ScalarKind::unknown);
}

FieldId Parser::field_for(const std::string& name, DataType hint, size_t pos) {
  if (auto id = k_.find_field(name)) return *id;
  check_name(name, pos);
  // Undeclared: infer from the pointer type hint, else from the SNode name's suffix.
  ScalarKind dtype = hint.scalar;
  if (dtype == ScalarKind::unknown) dtype = scalar_of_snode_name(name);
  if (dtype == ScalarKind::unknown)
    cur_.fail_at(pos, fmt::format("type of field '{}' is unknown", name),
                 "declare it in the header: `field NAME : f32[N]`");
  Field f;
  f.name = name;
  f.dtype = dtype;
  f.tensor = hint.tensor;
  return k_.add_field(std::move(f));
}

std::unique_ptr<Stmt> Parser::parse_stmt() {
  DataType hint = parse_type_hint();
  cur_.skip_blanks();
  size_t id_pos = cur_.pos();
  if (!hint.known() && cur_.try_keyword("print")) {  // printed without a name: take a fresh one
    auto s = parse_print();
    unnamed_.push_back(s.get());
    cur_.expect_line_end();
    return s;
  }
  if (!hint.known() && cur_.try_keyword("decorate")) {  // no number of its own either
    auto s = parse_decoration();
    unnamed_.push_back(s.get());
    cur_.expect_line_end();
    return s;
  }
  if (!hint.known() && std::isdigit(static_cast<unsigned char>(cur_.peek()))) return parse_assert();
  if (!cur_.at_ref()) {
    std::string word = cur_.read_word();
    if (word == "for" && !hint.known()) {  // Taichi 0.5 prints `for $V in range(...) {` unnumbered
      auto s = parse_for(false);
      unnamed_.push_back(s.get());
      cur_.expect("{", "to open the block");
      cur_.expect_line_end();
      return s;
    }
    if (!word.empty() && is_known_unsupported(word)) unsupported(word, id_pos);
    cur_.fail_at(id_pos, "expected a statement (`$N = ...` or `$N : ...`)");
  }
  int id = cur_.read_ref();
  if (ids_.count(id))
    cur_.fail_at(id_pos, fmt::format("statement ${} is defined twice", id), "statement numbers must be unique");
  cur_.skip_blanks();
  bool separator = cur_.try_consume("=") || cur_.try_consume(":");
  if (!separator && !cur_.try_keyword("continue")) cur_.fail("expected '=' or ':' after the statement number");
  if (!separator) {  // `$N continue`, optionally `(scope=$S)`
    bool scoped = false;
    if (cur_.try_consume("(")) {
      cur_.skip_blanks();
      if (!cur_.try_keyword("scope")) cur_.fail("expected `scope=$N` after `continue (`");
      cur_.expect("=", "after `scope`");
      cur_.skip_blanks();
      size_t scope_pos = cur_.pos();
      int scope = cur_.read_ref();
      cur_.expect(")", "to close the scope");
      // The reference sets the scope to the loop the continue skips; one of its printers printed
      // the continue's own number there instead.
      const Stmt* innermost = open_scopes_.empty() ? nullptr : open_scopes_.back();
      if (innermost && innermost->id >= 0 && scope != innermost->id && scope != id)
        cur_.fail_at(scope_pos,
                     fmt::format("`continue (scope=${})`: the innermost loop around it is ${}, and a continue "
                                 "skips the rest of that loop's body",
                                 scope, innermost->id),
                     fmt::format("write `(scope=${})`, or restructure the loops", innermost->id));
      scoped = true;
    }
    auto s = std::make_unique<ContinueStmt>(scoped);
    s->id = id;
    ids_[id] = s.get();
    k_.note_id(id);
    cur_.expect_line_end();
    return s;
  }
  cur_.skip_blanks();
  size_t word_pos = cur_.pos();
  std::string word = cur_.read_word();
  if (word == "shuffle") {  // Taichi 0.5 `shuffle $X[0]`: lane 0 of a one-lane value is the value
    Stmt* x = ref();
    cur_.expect("[");
    size_t lane_pos = cur_.pos();
    if (cur_.read_int() != 0) cur_.fail_at(lane_pos, "vector lanes other than 0 are not supported");
    cur_.expect("]");
    cur_.expect_line_end();
    ids_[id] = x;  // later uses of $N read $X
    return nullptr;
  }
  std::unique_ptr<Stmt> s;
  if (word.empty()) {
    if (cur_.at_ref()) {
      s = parse_relation_access();
    } else {
      if (cur_.peek() != '[') cur_.fail("expected a statement name");
      s = parse_matrix_init(hint);
      if (!s) s = parse_lookup(word_pos);
    }
  }
  if (!s) s = parse_lowered(word, hint, word_pos);
  if (!s) s = parse_more(word, hint, word_pos);
  if (!s) s = parse_mesh(word, hint, word_pos);
  if (!s) s = parse_value(word, hint, word_pos);
  if (!s) s = parse_effect(word, hint, word_pos);
  if (!s) {
    if (is_known_unsupported(word)) unsupported(word, word_pos);
    cur_.fail_at(word_pos, fmt::format("unknown statement '{}'", word),
                 "see docs/ir-format.md for the statements passbench reads");
  }
  s->id = id;
  ids_[id] = s.get();
  k_.note_id(id);
  // Statements that carry their type as an attribute keep the hint; the rest are typed by the
  // rules, and a hint that disagrees is kept for the verifier to report.
  auto rule = type_rule(*s, k_);
  // Older dumps hint pointers (alloca, global ptr) with their element type.
  if (rule.type.pointer && hint.known() && !hint.pointer && hint.scalar == rule.type.scalar) hint.pointer = true;
  if (!rule.type.known() && rule.error.empty())
    s->type = {};
  else
    s->type = hint.known() ? hint : rule.type;
  if (!s->is_container() || isa<OffloadedStmt>(s.get())) {
    cur_.expect_line_end();
  } else {
    cur_.expect("{", "to open the block");
    cur_.expect_line_end();
  }
  return s;
}

std::unique_ptr<Stmt> Parser::parse_value(const std::string& word, DataType hint, size_t word_pos) {
  if (word == "const") {
    if (hint.known() && !hint.is_value())
      cur_.fail_at(word_pos, fmt::format("a constant has a scalar type, not <{}>", to_string(hint)),
                   "write its scalar type: `<f32> $N = const 0`");
    bool bracket = cur_.try_consume("[");
    cur_.skip_blanks();
    size_t pos = cur_.pos();
    std::string text = cur_.read_until(bracket ? "]" : " \t#", "a constant value");
    if (bracket) cur_.expect("]");
    ScalarKind kind = hint.scalar;
    if (kind == ScalarKind::unknown)
      kind = text.find_first_of(".eEn") != std::string::npos ? ScalarKind::f32 : ScalarKind::i32;
    if (hint.is_tensor())
      cur_.fail_at(word_pos, fmt::format("a constant has a scalar type, not <{}>", to_string(hint)),
                   "build a tensor from scalar constants: `<[Tensor (2) f32]> $N = [$a, $b]`");
    if (text == "true" || text == "false") kind = hint.known() ? hint.scalar : ScalarKind::u1;
    auto v = Value::parse(kind, text);
    if (!v) cur_.fail_at(pos, fmt::format("'{}' is not a valid {} constant", text, scalar_name(kind)));
    return std::make_unique<ConstStmt>(*v);
  }
  if (word == "argload" || word == "arg" || word == "argaddr") {
    cur_.expect("[");
    int idx = static_cast<int>(cur_.read_int_in(0, kMaxArgIndex, "argument index"));
    if (cur_.peek() == ',') unsupported("argload of a struct argument member", word_pos);
    cur_.expect("]");
    return std::make_unique<ArgLoadStmt>(idx, hint);
  }
  if (word == "alloca") {
    if (!hint.known()) cur_.fail_at(word_pos, "alloca needs a type hint such as <*f32>");
    return std::make_unique<AllocaStmt>(hint.pointee());
  }
  if (word == "local") {
    if (!cur_.try_keyword("load")) return nullptr;  // local store: an effect
    cur_.expect("[");
    Stmt* src = legacy_local_ref();
    cur_.expect("]");
    return std::make_unique<LocalLoadStmt>(src);
  }
  if (word == "global") {
    if (cur_.try_keyword("load")) {
      bool vol = cur_.try_keyword("volatile");
      auto s = std::make_unique<GlobalLoadStmt>(ref());
      s->is_volatile = vol;
      return s;
    }
    if (!cur_.try_keyword("ptr")) return nullptr;  // global store: an effect
    cur_.expect("[");
    cur_.skip_blanks();
    size_t pos = cur_.pos();
    std::string name = cur_.read_until("]", "a field name");
    cur_.expect("]");
    // A pointer to a container SNode's cell (`<*gen> ... global ptr [S1pointer]`): the operand of
    // an SNode op before lower_access.
    bool container = names_container(name, hint);
    if (container) check_name(name, pos);
    FieldId f = container ? FieldId{-1} : field_for(name, hint, pos);
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
    if (container) return std::make_unique<SNodePtrStmt>(name, idx, activate);
    return std::make_unique<GlobalPtrStmt>(f, idx, activate);
  }
  if (word == "external_ptr") {
    bool angled = cur_.try_consume("<");  // Taichi <= 0.6: `external_ptr <$1>, [$0]`
    Stmt* base = ref();
    if (angled) cur_.expect(">");
    cur_.expect(",");
    cur_.expect("[");
    std::vector<Stmt*> idx;
    if (!cur_.try_consume("]")) {
      do idx.push_back(ref());
      while (cur_.try_consume(","));
      cur_.expect("]");
    }
    auto s = std::make_unique<ExternalPtrStmt>(base, idx);
    if (cur_.try_consume(",")) {
      cur_.expect("(");
      do s->element_shape.push_back(static_cast<int>(cur_.read_int_in(1, 1 << 20, "element extent")));
      while (cur_.try_consume(","));
      cur_.expect(")");
    }
    if (cur_.try_consume("layout=")) {
      size_t layout_pos = cur_.pos();
      s->layout = cur_.read_word();
      if (s->layout != "AOS" && s->layout != "SOA") cur_.fail_at(layout_pos, "an ndarray layout is AOS or SOA");
    }
    if (cur_.try_consume("is_grad=")) s->is_grad = cur_.try_keyword("true") || (cur_.expect("false"), false);
    if (cur_.try_consume("is_dual=")) s->is_dual = cur_.try_keyword("true") || (cur_.expect("false"), false);
    if (s->is_grad && s->is_dual)
      cur_.fail_at(word_pos, "an external_ptr addresses the gradient or the dual array, not both",
                   "keep one of is_grad=true and is_dual=true");
    if (!s->element_shape.empty()) unsupported("external_ptr with an element shape (tensor)", word_pos);
    return s;
  }
  if (word == "atomic") {
    cur_.skip_blanks();
    size_t pos = cur_.pos();
    std::string opname = cur_.read_word();
    auto op = atomic_op_from_name(opname);
    if (!op)
      cur_.fail_at(pos, fmt::format("unknown atomic op '{}'", opname),
                   "atomic ops are add sub mul min max bit_and bit_or bit_xor");
    cur_.expect("(");
    Stmt* dest = ref();
    cur_.expect(",");
    Stmt* val = ref();
    cur_.expect(")");
    return std::make_unique<AtomicOpStmt>(*op, dest, val);
  }
  if (word == "select") {
    cur_.expect("(");
    Stmt* c = ref();
    cur_.expect(",");
    Stmt* a = ref();
    cur_.expect(",");
    Stmt* b = ref();
    cur_.expect(")");
    return std::make_unique<TernaryOpStmt>(c, a, b);
  }
  if (word == "loop") {
    cur_.skip_blanks();
    Stmt* loop = nullptr;
    if (cur_.at_ref()) {
      loop = ref();
    } else {  // Taichi <= 0.6: `loop index 0`, the innermost enclosing loop
      if (open_loops_.empty()) cur_.fail_at(word_pos, "`loop index` outside a loop");
      loop = open_loops_.back();
    }
    cur_.expect("index");
    if (cur_.try_keyword("linear")) return std::make_unique<LoopLinearIndexStmt>(loop);
    int axis = static_cast<int>(cur_.read_int_in(0, kMaxRank - 1, "loop axis"));
    return std::make_unique<LoopIndexStmt>(loop, axis);
  }
  if (word == "stack") {
    if (cur_.try_keyword("alloc")) {
      if (!hint.is_value()) cur_.fail_at(word_pos, "stack alloc needs an element type hint such as <f32>");
      cur_.expect("(");
      cur_.expect("max_size=");
      int64_t n = cur_.read_int();
      auto s = std::make_unique<AdStackAllocaStmt>(hint.scalar, n);
      if (cur_.try_consume(",")) {  // `(max_size=0, size=2 + n[])`
        cur_.expect("size=", "after ',' in a stack alloc");
        s->size = parse_size_expr(cur_);
      }
      cur_.expect(")", "to close the stack alloc's attributes");
      return s;
    }
    if (cur_.try_keyword("load")) {
      cur_.expect("top");
      if (cur_.try_keyword("adj")) return std::make_unique<AdStackLoadTopAdjStmt>(ref());
      return std::make_unique<AdStackLoadTopStmt>(ref());
    }
    return nullptr;
  }
  if (auto op = unary_op_from_name(word)) {
    DataType target;
    if (is_cast(*op)) {
      cur_.expect("<", "before the cast's target type");
      size_t pos = cur_.pos();
      target = parse_type_name(cur_.read_until(">", "a type"), pos);
      cur_.expect(">");
      if (target.pointer) cur_.fail_at(pos, "casts to pointer types are not supported");
    }
    auto s = std::make_unique<UnaryOpStmt>(*op, ref());
    if (is_cast(*op)) s->type = target;
    if (is_cast(*op) && hint.known() && hint != target)
      cur_.fail_at(word_pos,
                   fmt::format("type hint <{}> disagrees with the cast target {}", to_string(hint), to_string(target)));
    if (*op == UnaryOp::logic_not) s->type = hint;
    return s;
  }
  if (auto op = binary_op_from_name(word)) {
    Stmt* l = ref();
    cur_.try_consume(",");  // some dumps separate binary operands with a comma
    Stmt* r = ref();
    auto s = std::make_unique<BinaryOpStmt>(*op, l, r);
    if (is_comparison(*op)) s->type = hint;
    return s;
  }
  return nullptr;
}

std::unique_ptr<Stmt> Parser::parse_effect(const std::string& word, DataType, size_t) {
  if (word == "local") {  // "local load" was taken by parse_value
    cur_.expect("store", "after 'local'");
  }
  if (word == "local" || word == "global") {
    cur_.skip_blanks();
    if (word == "global") cur_.expect("store", "after 'global'");
    cur_.expect("[");
    Stmt* dest = word == "local" ? legacy_local_ref() : ref();
    cur_.expect("<-");
    Stmt* val = ref();
    cur_.expect("]");
    if (word == "local") return std::make_unique<LocalStoreStmt>(dest, val);
    return std::make_unique<GlobalStoreStmt>(dest, val);
  }
  if (word == "if") return std::make_unique<IfStmt>(ref());
  if (word == "for") return parse_for(false);
  if (word == "reversed") {
    cur_.expect("for");
    return parse_for(true);
  }
  if (word == "struct") {
    cur_.expect("for");
    return parse_struct_for();
  }
  if (word == "while") {
    if (cur_.try_keyword("true")) return std::make_unique<WhileStmt>();
    cur_.expect("control", "after 'while'");
    Stmt* mask = cur_.try_keyword("nullptr") ? nullptr : ref();
    cur_.expect(",");
    return std::make_unique<WhileControlStmt>(mask, ref());
  }
  if (word == "continue") return std::make_unique<ContinueStmt>();
  if (word == "stack") {
    if (cur_.try_keyword("push")) {
      Stmt* s = ref();
      cur_.expect(",");
      cur_.expect("val");
      cur_.expect("=");
      return std::make_unique<AdStackPushStmt>(s, ref());
    }
    if (cur_.try_keyword("pop")) return std::make_unique<AdStackPopStmt>(ref());
    if (cur_.try_keyword("acc")) {
      cur_.expect("adj");
      Stmt* s = ref();
      cur_.expect(",");
      cur_.expect("val");
      cur_.expect("=");
      return std::make_unique<AdStackAccAdjointStmt>(s, ref());
    }
    cur_.fail("unknown stack statement", "stack statements are alloc, push, pop, load top, load top adj, acc adj");
  }
  if (word == "print") return parse_print();
  return nullptr;
}

// `15 : assert $14, "raw text", $3`: a bare number and an unescaped message that may span
// lines; the message ends at the last quote followed by an argument list or the line end.
std::unique_ptr<Stmt> Parser::parse_assert() {
  size_t id_pos = cur_.pos();
  int id = static_cast<int>(cur_.read_int_in(0, kMaxStmtId, "statement number"));
  if (ids_.count(id)) cur_.fail_at(id_pos, fmt::format("statement {} is defined twice", id));
  cur_.expect(":");
  cur_.expect("assert");
  Stmt* c = ref();
  std::string msg;
  std::vector<Stmt*> args;
  if (cur_.try_consume(",")) {
    cur_.expect("\"", "to open the assert message");
    msg = cur_.read_raw_message();
    while (cur_.try_consume(",")) args.push_back(ref());
  }
  auto s = std::make_unique<AssertStmt>(c, msg, args);
  s->id = id;
  ids_[id] = s.get();
  k_.note_id(id);
  cur_.expect_line_end();
  return s;
}

std::unique_ptr<Stmt> Parser::parse_for(bool reversed) {
  // Taichi 0.5 names a variable the loop writes its index to: `for $V in range(...)`.
  cur_.skip_blanks();
  size_t var_pos = cur_.pos();
  Stmt* loop_var = cur_.at_ref() ? ref() : nullptr;
  if (loop_var && !isa<AllocaStmt>(loop_var))
    cur_.fail_at(var_pos, "the variable of a `for $V in range(...)` loop must be an alloca");
  cur_.expect("in");
  cur_.expect("range");
  cur_.expect("(");
  Stmt* b = ref();
  cur_.expect(",");
  Stmt* e = ref();
  if (cur_.try_consume(",")) {  // older dumps: `range($1, $2, step 1)`
    cur_.expect("step");
    cur_.skip_blanks();
    size_t step_pos = cur_.pos();
    if (cur_.read_int() != 1) cur_.fail_at(step_pos, "only step 1 ranges are supported");
  }
  cur_.expect(")");
  auto s = std::make_unique<RangeForStmt>(b, e);
  s->reversed = reversed;
  if (loop_var) loop_vars_[s.get()] = loop_var;
  for (;;) {
    cur_.skip_blanks();
    if (cur_.peek() == '{' || cur_.peek() == '\n' || cur_.at_end()) break;
    if (cur_.try_consume("(")) {  // older dumps: `(vectorize 1)`, `(bit_vectorize -1)`
      cur_.read_until(")", "a loop attribute");
      cur_.expect(")");
    } else if (cur_.try_consume("block_dim=")) {
      s->block_dim = cur_.try_keyword("adaptive") ? 0 : static_cast<int>(cur_.read_int_in(0, INT32_MAX, "block_dim"));
    } else if (cur_.try_consume("loop_name=")) {
      // A word, as the JSON form (and the offloaded task's line) takes it.
      size_t name_pos = cur_.pos();
      s->loop_name = cur_.read_word();
      if (s->loop_name.empty() ||
          (!cur_.at_end() && std::string_view(" \t\r\n{").find(cur_.peek()) == std::string_view::npos))
        cur_.fail_at(name_pos, "a loop name is a word (letters, digits, '_', '.')");
    } else {
      cur_.fail(fmt::format("unexpected '{}' in a for header", std::string(cur_.rest_of_line())));
    }
  }
  return s;
}

std::unique_ptr<Stmt> Parser::parse_struct_for() {
  cur_.expect("in");
  cur_.skip_blanks();
  size_t space_pos = cur_.pos();
  std::string space = cur_.read_until(" \t{", "an index space or field name");
  check_name(space, space_pos);
  if (!k_.find_space(space) && !k_.find_field(space)) {
    // Header-less dump: the space's shape comes from a field declared in it or from the inputs.
    IndexSpace sp;
    sp.name = space;
    k_.spaces.push_back(sp);
  }
  auto s = std::make_unique<StructForStmt>(space);
  for (;;) {
    cur_.skip_blanks();
    if (cur_.peek() == '{' || cur_.peek() == '\n' || cur_.at_end()) break;
    if (cur_.try_consume("noneblock_dim=")) {
      s->none_marker = true;
      s->block_dim = cur_.try_keyword("adaptive") ? 0 : static_cast<int>(cur_.read_int_in(0, INT32_MAX, "block_dim"));
    } else if (cur_.try_consume("block_dim=")) {
      s->block_dim = cur_.try_keyword("adaptive") ? 0 : static_cast<int>(cur_.read_int_in(0, INT32_MAX, "block_dim"));
    } else if (cur_.try_consume("(")) {
      cur_.read_until(")", "a loop attribute");
      cur_.expect(")");
    } else {
      cur_.fail(fmt::format("unexpected '{}' in a struct for header", std::string(cur_.rest_of_line())));
    }
  }
  return s;
}

std::unique_ptr<Stmt> Parser::parse_print() {
  auto s = std::make_unique<PrintStmt>();
  cur_.skip_blanks();
  if (std::isalpha(static_cast<unsigned char>(cur_.peek())) || cur_.peek() == '_') {
    // Taichi <= 0.6: `print NAME, $x` printed "[debug] NAME = value" and a newline.
    std::string label = cur_.read_word();
    cur_.expect(",", "after the printed name");
    s->add_text("[debug] " + label + " = ");
    s->add_value(ref());
    s->add_text("\n");
    return s;
  }
  do {
    cur_.skip_blanks();
    if (cur_.peek() == '"')
      s->add_text(cur_.read_string());
    else
      s->add_value(ref());
  } while (cur_.try_consume(","));
  return s;
}

}  // namespace pb::ir::detail
