// Statement lines of the offloaded stage: tasks, global temporaries, the SNode access chain,
// bit_extract, return (docs/ir-format.md, docs/ir-grammar-reference.md).
#include <fmt/format.h>

#include "ir/parser_impl.h"

namespace pb::ir::detail {

namespace {
constexpr const char* kTaskRemedy = "see docs/ir-format.md, \"Offloaded tasks\"";

// At the end of the line (blanks, an optional comment, then a newline or the end), not consuming.
bool line_ends(Cursor& cur) {
  cur.skip_blanks();
  char c = cur.peek();
  return cur.at_end() || c == '\n' || c == '\r' || c == '#' || (c == '/' && cur.peek(1) == '/');
}
}  // namespace

std::unique_ptr<Stmt> Parser::parse_lowered(const std::string& word, DataType hint, size_t word_pos) {
  if (word == "offloaded") return parse_offloaded();
  if (word == "global") {
    size_t back = cur_.pos();
    if (!cur_.try_keyword("tmp")) return nullptr;
    if (!cur_.try_keyword("var")) {
      cur_.reset(back);
      return nullptr;
    }
    cur_.expect("(");
    cur_.expect("offset");
    cur_.expect("=");
    int64_t offset = cur_.read_int_in(0, INT32_MAX, "temporary offset");
    cur_.expect("B");
    cur_.expect(")");
    if (hint.gen || !hint.known())
      cur_.fail_at(word_pos, "a global temporary needs a pointer type hint",
                   "write it as `<*i32> $N = global tmp var (offset = 0 B)`");
    return std::make_unique<GlobalTemporaryStmt>(DataType::pointer_to(hint.scalar), offset);  // older dumps hint <i32>
  }
  if (word == "thread") {
    cur_.expect("local");
    cur_.expect("ptr");
    cur_.expect("(");
    cur_.expect("offset");
    cur_.expect("=");
    int64_t offset = cur_.read_int_in(0, INT32_MAX, "thread-local offset");
    cur_.expect("B");
    cur_.expect(")");
    if (hint.gen || !hint.known())
      cur_.fail_at(word_pos, "a thread local ptr needs a pointer type hint",
                   "write it as `<*i32> $N = thread local ptr (offset = 0 B)`");
    return std::make_unique<ThreadLocalPtrStmt>(DataType::pointer_to(hint.scalar), offset);  // older dumps hint <i32>
  }
  if (word == "get") {
    if (cur_.try_keyword("root")) {
      size_t form_pos = cur_.pos();
      std::string form = line_ends(cur_) ? "" : cur_.read_until("#/\r\n", "what follows get root");
      cur_.check_utf8(form_pos, cur_.pos());
      if (!form.empty() && form != "nullptr" && form.front() != '[')
        cur_.fail("expected `nullptr`, `[S0root][root]` or the end of the line after `get root`");
      return std::make_unique<GetRootStmt>(form);
    }
    cur_.expect("child", "after `get` (get root, get child)");
    cur_.expect("[");
    cur_.skip_blanks();
    size_t from_pos = cur_.pos();
    std::string from = cur_.read_until("-]", "the parent SNode");
    check_name(from, from_pos);
    cur_.expect("->");
    cur_.skip_blanks();
    size_t to_pos = cur_.pos();
    std::string to = cur_.read_until("]", "the child SNode");
    check_name(to, to_pos);
    cur_.expect("]");
    auto s = std::make_unique<GetChStmt>(from, to, ref());
    if (!hint.pointer) cur_.fail_at(word_pos, "get child needs a pointer type hint (<*gen> or <*f32>)");
    if (!hint.gen) field_for(to, hint, to_pos);  // a place: its field, declared or inferred
    return s;
  }
  if (word == "linearized") {
    cur_.expect("(");
    cur_.expect("ind");
    cur_.expect("{");
    std::vector<Stmt*> inds;
    if (!cur_.try_consume("}")) {
      do inds.push_back(ref());
      while (cur_.try_consume(","));
      cur_.expect("}");
    }
    cur_.expect(",");
    cur_.expect("stride");
    cur_.expect("{");
    std::vector<int64_t> strides;
    if (!cur_.try_consume("}")) {
      do strides.push_back(cur_.read_int_in(1, INT32_MAX, "stride"));
      while (cur_.try_consume(","));
      cur_.expect("}");
    }
    cur_.expect(")");
    return std::make_unique<LinearizeStmt>(inds, std::move(strides));
  }
  if (word == "offset") {
    Stmt* in = ref();
    cur_.expect("+");
    return std::make_unique<IntegerOffsetStmt>(in, cur_.read_int_in(INT32_MIN, INT32_MAX, "offset"));
  }
  if (word == "bit_extract") {
    cur_.expect("(");
    Stmt* in = ref();
    if (cur_.try_consume("+")) {  // Taichi <= 0.6: bit_extract($x + 0, 0~4)
      cur_.read_int_in(0, 0, "bit_extract lane offset");
      cur_.expect(",");
      int b = static_cast<int>(cur_.read_int_in(0, 64, "first bit"));
      cur_.expect("~");
      int e = static_cast<int>(cur_.read_int_in(0, 64, "end bit"));
      cur_.expect(")");
      auto s = std::make_unique<BitExtractStmt>(in, b, e);
      s->legacy = true;
      return s;
    }
    cur_.expect(")");
    cur_.expect("bit_range=[");
    int b = static_cast<int>(cur_.read_int_in(0, 64, "first bit"));
    cur_.expect(",");
    int e = static_cast<int>(cur_.read_int_in(0, 64, "end bit"));
    cur_.expect(")");
    return std::make_unique<BitExtractStmt>(in, b, e);
  }
  if (word == "return" || (word == "kernel" && cur_.try_keyword("return"))) {
    std::vector<Stmt*> values;
    cur_.skip_blanks();
    if (cur_.at_ref()) {
      do values.push_back(ref());
      while (cur_.try_consume(","));
    }
    return std::make_unique<ReturnStmt>(values);
  }
  return nullptr;
}

// `[S1dense][dense]::lookup($25, $26) activate = false`, after the statement name.
std::unique_ptr<Stmt> Parser::parse_lookup(size_t pos) {
  cur_.expect("[");
  cur_.skip_blanks();
  size_t name_pos = cur_.pos();
  std::string snode = cur_.read_until("]", "an SNode name");
  cur_.expect("]");
  if (!cur_.try_consume("[")) unsupported("[...] (matrix init)", pos);
  size_t type_pos = cur_.pos();
  std::string type = cur_.read_until("]", "an SNode type");
  cur_.check_utf8(type_pos, cur_.pos());
  // The JSON token rule (ir/json.cpp, check_token): a bare token holds no '#'.
  if (type.find('#') != std::string::npos) cur_.fail_at(type_pos, "'#' inside an SNode type");
  cur_.expect("]");
  check_name(snode, name_pos);
  cur_.expect("::lookup(");
  Stmt* parent = ref();
  cur_.expect(",");
  Stmt* index = ref();
  cur_.expect(")");
  bool activate = false;
  if (cur_.try_keyword("activate")) {
    cur_.expect("=");
    activate = cur_.try_keyword("true");
    if (!activate) cur_.expect("false");
  }
  return std::make_unique<SNodeLookupStmt>(snode, type, parent, index, activate);
}

void Parser::parse_task_bound(OffloadedStmt& t, TaskBound& b) {
  cur_.skip_blanks();  // at_ref() does not skip blanks
  if (cur_.at_ref()) {
    t.add_bound_operand(b, ref());
  } else if (cur_.try_consume("tmp(")) {
    cur_.expect("offset=");
    b = {TaskBound::Kind::temporary, cur_.read_int_in(0, INT32_MAX, "temporary offset")};
    cur_.expect("B");
    cur_.expect(")");
  } else {
    b = {TaskBound::Kind::constant, cur_.read_int_in(INT32_MIN, INT32_MAX, "range bound")};
  }
}

// After `offloaded`: the task type and its attributes, up to the end of the line (or the `{` of
// Taichi <= 0.6, which opens the body directly).
std::unique_ptr<Stmt> Parser::parse_offloaded() {
  cur_.skip_blanks();
  size_t type_pos = cur_.pos();
  std::string type = line_ends(cur_) || cur_.peek() == '{' ? "serial" : cur_.read_word();
  std::unique_ptr<OffloadedStmt> t;
  if (type == "serial") {
    t = std::make_unique<OffloadedStmt>(TaskType::serial);
  } else if (type == "range_for") {
    t = std::make_unique<OffloadedStmt>(TaskType::range_for);
    cur_.expect("(");
    parse_task_bound(*t, t->begin);
    cur_.expect(",");
    parse_task_bound(*t, t->end);
    cur_.expect(")");
  } else if (type == "struct_for") {
    t = std::make_unique<OffloadedStmt>(TaskType::struct_for);
    cur_.expect("(");
    cur_.skip_blanks();
    size_t at = cur_.pos();
    t->snode = cur_.read_until(")", "the SNode a struct_for walks");
    check_name(t->snode, at);
    if (!k_.find_space(t->snode) && !k_.find_field(t->snode)) {
      // Header-less dump: the SNode's shape comes from the inputs' "spaces" (or a field in it).
      IndexSpace sp;
      sp.name = t->snode;
      k_.spaces.push_back(sp);
    }
    cur_.expect(")");
  } else if (type == "mesh_for") {  // `mesh_for(verts -> edges) num_patches=8`
    t = std::make_unique<OffloadedStmt>(TaskType::mesh_for);
    cur_.expect("(");
    cur_.skip_blanks();
    size_t at = cur_.pos();
    auto element = [&](const std::string& name) {
      auto e = mesh_element_from_name(name);
      if (!e)
        cur_.fail_at(at, fmt::format("unknown mesh element type '{}'", name),
                     "mesh element types are verts, edges, faces, cells");
      return *e;
    };
    t->mesh_from = element(cur_.read_word());
    cur_.expect("->");
    cur_.skip_blanks();
    at = cur_.pos();
    if (!cur_.try_keyword("Unknown")) t->mesh_to = element(cur_.read_word());
    cur_.expect(")");
    cur_.expect("num_patches=");
    t->num_patches = static_cast<int>(cur_.read_int_in(0, INT32_MAX, "num_patches"));
  } else if (type == "listgen") {
    t = std::make_unique<OffloadedStmt>(TaskType::listgen);
    cur_.skip_blanks();
    size_t at = cur_.pos();
    t->parent_snode = cur_.read_until("-", "the parent SNode");
    check_name(t->parent_snode, at);
    cur_.expect("->");
    cur_.skip_blanks();
    at = cur_.pos();
    t->snode = cur_.read_until(" \t{", "the SNode");
    check_name(t->snode, at);
  } else if (type == "clear_list") {  // Taichi <= 0.6: a task of its own
    t = std::make_unique<OffloadedStmt>(TaskType::clear_list);
    cur_.skip_blanks();
    size_t at = cur_.pos();
    t->snode = cur_.read_until(" \t{", "the SNode");
    check_name(t->snode, at);
  } else if (type == "garbage") {
    t = std::make_unique<OffloadedStmt>(TaskType::gc);
    cur_.expect("collect");
    cur_.skip_blanks();
    size_t at = cur_.pos();
    t->snode = cur_.read_until(" \t{", "the SNode");
    check_name(t->snode, at);
  } else {
    cur_.fail_at(type_pos, fmt::format("unknown offloaded task type '{}'", type),
                 "task types are serial (nothing printed), range_for, struct_for, mesh_for, listgen, garbage collect, "
                 "clear_list");
  }
  for (;;) {
    cur_.skip_blanks();
    if (line_ends(cur_) || cur_.peek() == '{') break;
    size_t at = cur_.pos();
    if (cur_.try_consume("grid_dim=")) {
      t->grid_dim = static_cast<int>(cur_.read_int_in(0, INT32_MAX, "grid_dim"));
    } else if (cur_.try_consume("block_dim=")) {
      t->block_dim = cur_.try_keyword("adaptive") ? 0 : static_cast<int>(cur_.read_int_in(0, INT32_MAX, "block_dim"));
    } else if (cur_.try_consume("bls=")) {
      size_t bls_pos = cur_.pos();
      t->bls = cur_.read_until(" \t{", "the block-local storage");
      cur_.check_utf8(bls_pos, cur_.pos());
      if (t->bls.find('#') != std::string::npos) cur_.fail_at(bls_pos, "'#' inside the block-local storage");
    } else if (cur_.try_consume("loop_name=")) {
      t->loop_name = cur_.read_word();
    } else if (cur_.try_consume("gdw_level=")) {
      t->gdw_level = static_cast<int>(cur_.read_int_in(-1, INT32_MAX, "gdw_level"));
    } else {
      cur_.fail_at(at, fmt::format("unexpected '{}' in an offloaded task's line", std::string(cur_.rest_of_line())),
                   kTaskRemedy);
    }
  }
  if (const char* what = t->uncarried_attribute())
    cur_.fail_at(type_pos, fmt::format("a {} task has no {}", type == "garbage" ? "garbage collect" : type, what),
                 kTaskRemedy);
  legacy_task_brace_ = cur_.try_consume("{");
  return t;
}

// The blocks after an offloaded task's line: `tls prologue {`, `body prologue {` (mesh_for only),
// `bls prologue {`, `body {`, `bls_epilogue {`, `tls_epilogue {`, each closed by `}` at the task's
// indent; or, for Taichi <= 0.6, the body directly after the line's `{`.
void Parser::parse_task_blocks(OffloadedStmt& t, bool legacy_brace) {
  if (!t.has_body()) {
    if (legacy_brace) cur_.fail("a listgen or gc task has no body", kTaskRemedy);
    return;
  }
  if (legacy_brace) {
    parse_block(*t.body);
    cur_.expect("}");
    cur_.expect_line_end();
    return;
  }
  struct Named {
    const char* text;
    std::unique_ptr<Block>* slot;
  };
  // Taichi <= 0.7 names the thread-local blocks `prologue` and `epilogue`.
  const Named names[] = {{"tls prologue", &t.tls_prologue},
                         {"prologue", &t.tls_prologue},
                         {"body prologue", &t.mesh_prologue},
                         {"bls prologue", &t.bls_prologue},
                         {"body", &t.body},
                         {"bls_epilogue", &t.bls_epilogue},
                         {"tls_epilogue", &t.tls_epilogue},
                         {"epilogue", &t.tls_epilogue}};
  bool seen_body = false;
  size_t next = 0;
  for (;;) {
    if (!cur_.skip_to_content()) break;
    size_t at = cur_.pos();
    const Named* found = nullptr;
    for (size_t i = next; i < std::size(names) && !found; ++i)
      if (cur_.try_consume(names[i].text)) {
        cur_.skip_blanks();
        if (cur_.peek() == '{') {
          found = &names[i];
          next = i + 1;
        } else {
          cur_.reset(at);
        }
      }
    if (!found) break;
    if (found->slot == &t.mesh_prologue && t.task != TaskType::mesh_for)
      cur_.fail_at(at, "only a mesh_for task has a body prologue", kTaskRemedy);
    cur_.expect("{");
    cur_.expect_line_end();
    if (!*found->slot) *found->slot = std::make_unique<Block>(&t);
    parse_block(**found->slot);
    cur_.expect("}");
    cur_.expect_line_end();
    seen_body = seen_body || found->slot == &t.body;
  }
  if (!seen_body) cur_.fail("an offloaded task's line is followed by its `body {` block", kTaskRemedy);
}

}  // namespace pb::ir::detail
