// The reader half of ir/json.h (the writer is ir/json_write.cpp).
#include "ir/json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "ir/diagnostic.h"
#include "ir/tensor_type.h"
#include "ir/type_rules.h"
#include "ir/visitor.h"

namespace pb::ir {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& msg) {
  throw UserError(fmt::format("invalid kernel JSON at {}: {}", path, msg));
}

template <class T>
T get(const json& j, const char* key, const std::string& path) {
  if (!j.is_object() || !j.contains(key)) bad(path, fmt::format("missing \"{}\"", key));
  try {
    return j.at(key).get<T>();
  } catch (const json::exception& e) {
    bad(path + "." + key, e.what());
  }
}

// An integer member within [lo, hi]: a float (1e34), a huge or a negative number is an error
// naming the path, never a conversion with undefined behaviour.
int64_t get_int(const json& j, const char* key, const std::string& path, int64_t lo, int64_t hi) {
  if (!j.is_object() || !j.contains(key)) bad(path, fmt::format("missing \"{}\"", key));
  const json& v = j.at(key);
  if (!v.is_number_integer()) bad(path + "." + key, fmt::format("{} is not an integer", v.dump()));
  if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi)
                             : (v.get<int64_t>() < lo || v.get<int64_t>() > hi))
    bad(path + "." + key, fmt::format("{} is outside {}..{}", v.dump(), lo, hi));
  return v.get<int64_t>();
}

// A list of integer members, each within [lo, hi] (same guarantees as get_int).
std::vector<int64_t> get_int_list(const json& j, const char* key, const std::string& path, int64_t lo, int64_t hi) {
  if (!j.is_object() || !j.contains(key)) bad(path, fmt::format("missing \"{}\"", key));
  const json& list = j.at(key);
  if (!list.is_array()) bad(path + "." + key, fmt::format("{} is not a list", list.dump()));
  std::vector<int64_t> out;
  out.reserve(list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    json one = {{"item", list[i]}};
    out.push_back(get_int(one, "item", fmt::format("{}.{}[{}]", path, key, i), lo, hi));
  }
  return out;
}

template <class T>
T get_or(const json& j, const char* key, T fallback, const std::string& path) {
  if (!j.contains(key)) return fallback;
  return get<T>(j, key, path);
}

// A name the text form prints bare (SNodes, index spaces): the name rule of ir/kernel.h.
std::string name_of(const json& j, const char* key, const std::string& path) {
  auto v = get<std::string>(j, key, path);
  if (auto p = name_problem(v)) bad(path + "." + key, *p);
  return v;
}

// A token the text form prints bare and reads back up to one of `stops` (or the line's end), with
// blanks around it dropped: refused when it could not come back unchanged.
void check_token(const std::string& v, std::string_view stops, const std::string& where) {
  bool edges = !v.empty() && (v.front() == ' ' || v.front() == '\t' || v.back() == ' ' || v.back() == '\t');
  if (v.empty() || edges || v.find_first_of("\n\r#") != std::string::npos ||
      v.find_first_of(stops) != std::string::npos)
    bad(where,
        fmt::format("\"{}\" does not print back (it is empty, or holds a line break, '#' or one of \"{}\")", v, stops));
}

// `loop_name=` reads a word (letters, digits, `_`, `.`).
void check_loop_name(const std::string& v, const std::string& path) {
  for (char c : v)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.')
      bad(path + ".loop_name", fmt::format("\"{}\" is not a word (letters, digits, '_', '.')", v));
}

// A mesh element type (`verts`, `edges`, `faces`, `cells`).
MeshElement mesh_element_of(const json& j, const char* key, const std::string& path) {
  auto v = get<std::string>(j, key, path);
  auto e = mesh_element_from_name(v);
  if (!e) bad(path + "." + key, fmt::format("unknown mesh element type '{}' (verts, edges, faces, cells)", v));
  return *e;
}

struct Reader {
  Kernel& k;
  std::unordered_map<int, Stmt*> ids;

  Stmt* ref(int id, const std::string& path) {
    auto it = ids.find(id);
    if (it == ids.end()) bad(path, fmt::format("operand ${} is not defined before its use", id));
    return it->second;
  }

  void block(const json& a, Block& b, const std::string& path, int depth = 0) {
    if (!a.is_array()) bad(path, "a block must be an array of statements");
    if (depth > kMaxNestingDepth)
      bad(path,
          fmt::format("blocks nest more than {} deep; no kernel a compiler emits nests this deep", kMaxNestingDepth));
    for (size_t i = 0; i < a.size(); ++i) {
      std::string p = fmt::format("{}[{}]", path, i);
      auto s = stmt(a[i], p);
      Stmt* raw = b.push_back(std::move(s));
      if (auto* f = dyn_cast<IfStmt>(raw)) {
        block(a[i].at("then"), *f->true_block, p + ".then", depth + 1);
        if (a[i].contains("else")) block(a[i]["else"], f->ensure_false_block(), p + ".else", depth + 1);
      } else if (auto* t = dyn_cast<OffloadedStmt>(raw)) {
        std::unique_ptr<Block>* slots[] = {&t->tls_prologue, &t->mesh_prologue, &t->bls_prologue,
                                           &t->body,         &t->bls_epilogue,  &t->tls_epilogue};
        for (size_t j = 0; j < std::size(slots); ++j) {
          if (!a[i].contains(kTaskBlockKeys[j])) {
            if (slots[j] != &t->body) slots[j]->reset();
            continue;
          }
          if (slots[j] == &t->mesh_prologue && t->task != TaskType::mesh_for)
            bad(p + ".mesh_prologue", "only a mesh_for task has a body prologue");
          if (!*slots[j]) *slots[j] = std::make_unique<Block>(raw);
          block(a[i][kTaskBlockKeys[j]], **slots[j], p + "." + kTaskBlockKeys[j], depth + 1);
        }
      } else if (raw->is_container()) {
        if (!a[i].contains("body")) bad(p, "missing \"body\"");
        block(a[i]["body"], *raw->blocks()[0], p + ".body", depth + 1);
      }
    }
  }

  std::unique_ptr<OffloadedStmt> offloaded(const json& j, const std::string& path, const std::vector<Stmt*>& ops) {
    auto name = get<std::string>(j, "task", path);
    std::optional<TaskType> task;
#define PB_X(n) \
  if (name == #n) task = TaskType::n;
    PB_TASK_TYPES(PB_X)
#undef PB_X
    if (!task) bad(path + ".task", fmt::format("unknown task type '{}'", name));
    auto t = std::make_unique<OffloadedStmt>(*task);
    size_t used = 0;
    auto bound = [&](const char* key, TaskBound& b) {
      const std::string p = path + "." + key;
      const json& v = j.contains(key) ? j.at(key) : json();
      if (v.is_object() && v.contains("const")) {
        b = {TaskBound::Kind::constant, get_int(v, "const", p, INT32_MIN, INT32_MAX)};
      } else if (v.is_object() && v.contains("tmp_offset")) {
        b = {TaskBound::Kind::temporary, get_int(v, "tmp_offset", p, 0, INT32_MAX)};
      } else if (v.is_object() && v.contains("operand")) {
        if (used >= ops.size()) bad(p, "names an operand the statement does not have");
        t->add_bound_operand(b, ops[used++]);
      } else {
        bad(p, "a range_for bound is {\"const\": N}, {\"tmp_offset\": N} or {\"operand\": I}");
      }
    };
    if (*task == TaskType::range_for) {
      bound("begin", t->begin);
      bound("end", t->end);
    }
    if (used != ops.size()) bad(path, "offloaded has operands that no bound uses");
    t->grid_dim = static_cast<int>(get_int(j, "grid_dim", path, 0, INT32_MAX));
    t->block_dim = static_cast<int>(get_int(j, "block_dim", path, 0, INT32_MAX));
    t->snode = j.contains("snode") ? name_of(j, "snode", path) : "";
    t->parent_snode = j.contains("parent_snode") ? name_of(j, "parent_snode", path) : "";
    t->bls = get_or<std::string>(j, "bls", "none", path);
    check_token(t->bls, " \t{", path + ".bls");
    t->loop_name = get_or<std::string>(j, "loop_name", "", path);
    check_loop_name(t->loop_name, path);
    t->gdw_level = j.contains("gdw_level") ? static_cast<int>(get_int(j, "gdw_level", path, -1, INT32_MAX)) : -1;
    const bool mesh = *task == TaskType::mesh_for;
    if (mesh || j.contains("mesh_from")) t->mesh_from = mesh_element_of(j, "mesh_from", path);
    if (j.contains("mesh_to")) t->mesh_to = mesh_element_of(j, "mesh_to", path);
    if (mesh || j.contains("num_patches"))
      t->num_patches = static_cast<int>(get_int(j, "num_patches", path, 0, INT32_MAX));
    // JSON carries exactly what the text form of this task type prints, so both read the same kernels.
    if (*task != TaskType::serial && *task != TaskType::range_for && *task != TaskType::mesh_for && t->snode.empty())
      bad(path, fmt::format("a {} task needs \"snode\"", name));
    if (*task == TaskType::listgen && t->parent_snode.empty()) bad(path, "a listgen task needs \"parent_snode\"");
    if (const char* what = t->uncarried_attribute())
      bad(path, fmt::format("a {} task has no {} (its printed line cannot carry one)", name, what));
    return t;
  }

  std::unique_ptr<Stmt> stmt(const json& j, const std::string& path) {
    int id = static_cast<int>(get_int(j, "id", path, 0, kMaxStmtId));
    auto kind = get<std::string>(j, "kind", path);
    DataType type;
    if (j.contains("type")) {
      auto t = parse_type(get<std::string>(j, "type", path));
      if (!t) bad(path + ".type", "unknown type");
      type = *t;
    }
    std::vector<Stmt*> ops;
    if (j.contains("operands")) {
      for (int64_t o : get_int_list(j, "operands", path, 0, kMaxStmtId))
        ops.push_back(ref(static_cast<int>(o), path + ".operands"));
    }
    auto need = [&](size_t n) {
      if (ops.size() != n) bad(path, fmt::format("{} takes {} operand(s), got {}", kind, n, ops.size()));
    };
    auto op_text = [&] { return get<std::string>(j, "op", path); };
    std::unique_ptr<Stmt> s;
    if (kind == "const") {
      if (!type.is_value()) bad(path, "const needs a scalar type");
      auto v = Value::parse(type.scalar, get<std::string>(j, "value", path));
      if (!v) bad(path + ".value", "not a valid constant");
      s = std::make_unique<ConstStmt>(*v);
    } else if (kind == "argload") {
      s = std::make_unique<ArgLoadStmt>(static_cast<int>(get_int(j, "arg", path, 0, kMaxArgIndex)), type);
    } else if (kind == "alloca") {
      if (!type.pointer) bad(path, "alloca needs a pointer type");
      s = std::make_unique<AllocaStmt>(type.pointee());
    } else if (kind == "local_load") {
      need(1);
      s = std::make_unique<LocalLoadStmt>(ops[0]);
    } else if (kind == "local_store") {
      need(2);
      s = std::make_unique<LocalStoreStmt>(ops[0], ops[1]);
    } else if (kind == "global_ptr") {
      auto name = get<std::string>(j, "field", path);
      auto f = k.find_field(name);
      if (!f) bad(path + ".field", fmt::format("unknown field '{}'", name));
      s = std::make_unique<GlobalPtrStmt>(*f, ops, get_or<bool>(j, "activate", true, path));
    } else if (kind == "external_ptr") {
      if (ops.empty()) bad(path, "external_ptr needs a base operand");
      auto e = std::make_unique<ExternalPtrStmt>(ops[0], std::vector<Stmt*>(ops.begin() + 1, ops.end()));
      if (j.contains("element_shape") && !get_int_list(j, "element_shape", path, 1, 1 << 20).empty())
        bad(path + ".element_shape", "external_ptr with an element shape (tensor) is not supported yet");
      e->layout = get_or<std::string>(j, "layout", "AOS", path);
      if (e->layout != "AOS" && e->layout != "SOA") bad(path + ".layout", "an ndarray layout is AOS or SOA");
      e->is_grad = get_or<bool>(j, "is_grad", false, path);
      e->is_dual = get_or<bool>(j, "is_dual", false, path);
      if (e->is_grad && e->is_dual) bad(path, "an external_ptr cannot be both is_grad and is_dual");
      s = std::move(e);
    } else if (kind == "global_load") {
      need(1);
      auto g = std::make_unique<GlobalLoadStmt>(ops[0]);
      g->is_volatile = get_or<bool>(j, "volatile", false, path);
      s = std::move(g);
    } else if (kind == "global_store") {
      need(2);
      s = std::make_unique<GlobalStoreStmt>(ops[0], ops[1]);
    } else if (kind == "atomic") {
      need(2);
      auto op = atomic_op_from_name(op_text());
      if (!op) bad(path + ".op", "unknown atomic op");
      s = std::make_unique<AtomicOpStmt>(*op, ops[0], ops[1]);
    } else if (kind == "unary") {
      need(1);
      auto op = unary_op_from_name(op_text());
      if (!op) bad(path + ".op", "unknown unary op");
      s = std::make_unique<UnaryOpStmt>(*op, ops[0]);
    } else if (kind == "binary") {
      need(2);
      auto op = binary_op_from_name(op_text());
      if (!op) bad(path + ".op", "unknown binary op");
      s = std::make_unique<BinaryOpStmt>(*op, ops[0], ops[1]);
    } else if (kind == "select") {
      need(3);
      s = std::make_unique<TernaryOpStmt>(ops[0], ops[1], ops[2]);
    } else if (kind == "if") {
      need(1);
      s = std::make_unique<IfStmt>(ops[0]);
    } else if (kind == "range_for") {
      need(2);
      auto f = std::make_unique<RangeForStmt>(ops[0], ops[1]);
      f->reversed = get_or<bool>(j, "reversed", false, path);
      f->block_dim = j.contains("block_dim") ? static_cast<int>(get_int(j, "block_dim", path, 0, INT32_MAX)) : 0;
      f->loop_name = get_or<std::string>(j, "loop_name", "", path);
      check_loop_name(f->loop_name, path);
      s = std::move(f);
    } else if (kind == "struct_for") {
      auto f = std::make_unique<StructForStmt>(name_of(j, "space", path));
      f->none_marker = get_or<bool>(j, "none_marker", false, path);
      f->block_dim = j.contains("block_dim") ? static_cast<int>(get_int(j, "block_dim", path, 0, INT32_MAX)) : 0;
      s = std::move(f);
    } else if (kind == "loop_index") {
      need(1);
      s = std::make_unique<LoopIndexStmt>(ops[0], static_cast<int>(get_int(j, "axis", path, 0, kMaxRank - 1)));
    } else if (kind == "while") {
      s = std::make_unique<WhileStmt>();
    } else if (kind == "while_control") {
      if (ops.size() == 1) ops.insert(ops.begin(), nullptr);  // no mask: `while control nullptr, $c`
      need(2);
      s = std::make_unique<WhileControlStmt>(ops[0], ops[1]);
    } else if (kind == "continue") {
      s = std::make_unique<ContinueStmt>(j.contains("scoped") && get<bool>(j, "scoped", path));
    } else if (kind == "stack_alloc") {
      auto a = std::make_unique<AdStackAllocaStmt>(type.scalar, get_int(j, "max_size", path, 0, INT32_MAX));
      if (j.contains("size")) {
        try {
          a->size = parse_size_expr(get<std::string>(j, "size", path));
        } catch (const UserError& e) {
          bad(path + ".size", e.diagnostic().message);
        }
      }
      s = std::move(a);
    } else if (kind == "stack_push") {
      need(2);
      s = std::make_unique<AdStackPushStmt>(ops[0], ops[1]);
    } else if (kind == "stack_pop") {
      need(1);
      s = std::make_unique<AdStackPopStmt>(ops[0]);
    } else if (kind == "stack_load_top") {
      need(1);
      s = std::make_unique<AdStackLoadTopStmt>(ops[0]);
    } else if (kind == "stack_load_top_adj") {
      need(1);
      s = std::make_unique<AdStackLoadTopAdjStmt>(ops[0]);
    } else if (kind == "stack_acc_adj") {
      need(2);
      s = std::make_unique<AdStackAccAdjointStmt>(ops[0], ops[1]);
    } else if (kind == "print") {
      auto p = std::make_unique<PrintStmt>();
      for (const json& it : j.at("items")) {
        if (it.contains("text"))
          p->add_text(it["text"].get<std::string>());
        else {
          auto idx = static_cast<size_t>(get_int(it, "operand", path + ".items", 0, kMaxStmtId));
          if (idx >= ops.size()) bad(path + ".items", "operand index out of range");
          p->add_value(ops[idx]);
        }
      }
      s = std::move(p);
    } else if (kind == "assert") {
      if (ops.empty()) bad(path, "assert needs a condition operand");
      s = std::make_unique<AssertStmt>(ops[0], get_or<std::string>(j, "message", "", path),
                                       std::vector<Stmt*>(ops.begin() + 1, ops.end()));
    } else if (kind == "offloaded") {
      s = offloaded(j, path, ops);
    } else if (kind == "global_tmp") {
      if (!type.pointer) bad(path, "global_tmp needs a pointer type");
      s = std::make_unique<GlobalTemporaryStmt>(type, get_int(j, "offset", path, 0, INT32_MAX));
    } else if (kind == "thread_local_ptr") {
      if (!type.pointer) bad(path, "thread_local_ptr needs a pointer type");
      s = std::make_unique<ThreadLocalPtrStmt>(type, get_int(j, "offset", path, 0, INT32_MAX));
    } else if (kind == "get_root") {
      auto form = get_or<std::string>(j, "form", "", path);
      if (!form.empty() && form != "nullptr" && form.front() != '[')
        bad(path + ".form", "get_root's form is \"\", \"nullptr\" or \"[S0root][root]\"");
      if (!form.empty()) check_token(form, "/", path + ".form");
      s = std::make_unique<GetRootStmt>(form);
    } else if (kind == "snode_lookup") {
      need(2);
      auto snode_type = get<std::string>(j, "snode_type", path);
      check_token(snode_type, "]", path + ".snode_type");
      s = std::make_unique<SNodeLookupStmt>(name_of(j, "snode", path), snode_type, ops[0], ops[1],
                                            get_or<bool>(j, "activate", false, path));
    } else if (kind == "get_ch") {
      need(1);
      s = std::make_unique<GetChStmt>(name_of(j, "from", path), name_of(j, "to", path), ops[0]);
    } else if (kind == "linearize") {
      auto strides = get_int_list(j, "strides", path, 1, INT32_MAX);
      s = std::make_unique<LinearizeStmt>(ops, strides);
    } else if (kind == "integer_offset") {
      need(1);
      s = std::make_unique<IntegerOffsetStmt>(ops[0], get_int(j, "offset", path, INT32_MIN, INT32_MAX));
    } else if (kind == "bit_extract") {
      need(1);
      auto b = std::make_unique<BitExtractStmt>(ops[0], static_cast<int>(get_int(j, "bit_begin", path, 0, 64)),
                                                static_cast<int>(get_int(j, "bit_end", path, 0, 64)));
      b->legacy = get_or<bool>(j, "legacy", false, path);
      s = std::move(b);
    } else if (kind == "loop_linear_index") {
      need(1);
      s = std::make_unique<LoopLinearIndexStmt>(ops[0]);
    } else if (kind == "return") {
      s = std::make_unique<ReturnStmt>(ops);
    } else if (kind == "loop_unique") {
      need(1);
      auto u = std::make_unique<LoopUniqueStmt>(ops[0]);
      if (j.contains("covers"))
        for (int64_t c : get_int_list(j, "covers", path, 0, INT32_MAX)) u->covers.push_back(static_cast<int>(c));
      s = std::move(u);
    } else if (kind == "assume_in_range") {
      need(2);
      s = std::make_unique<RangeAssumptionStmt>(ops[0], ops[1], get_int(j, "low", path, INT32_MIN, INT32_MAX),
                                                get_int(j, "high", path, INT32_MIN, INT32_MAX));
    } else if (kind == "decorate") {
      need(1);
      s = std::make_unique<DecorationStmt>(ops[0], get<bool>(j, "loop_unique", path),
                                           get_int(j, "number", path, 0, INT32_MAX));
    } else if (kind == "external_tensor_shape_along_axis") {
      std::vector<int> arg_id;
      for (int64_t a : get_int_list(j, "arg_id", path, 0, kMaxArgIndex)) arg_id.push_back(static_cast<int>(a));
      if (arg_id.empty()) bad(path + ".arg_id", "names no argument");
      auto e = std::make_unique<ExternalTensorShapeAlongAxisStmt>(
          static_cast<int>(get_int(j, "axis", path, 0, kMaxRank - 1)), std::move(arg_id));
      e->bracketed = get_or<bool>(j, "bracketed", true, path);
      if (!e->bracketed && e->arg_id.size() != 1) bad(path + ".arg_id", "an unbracketed arg_id is one index");
      s = std::move(e);
    } else if (kind == "snode_op") {
      auto op = get<std::string>(j, "op", path);
      if (std::find(std::begin(kSNodeOpNames), std::end(kSNodeOpNames), op) == std::end(kSNodeOpNames))
        bad(path + ".op", fmt::format("unknown SNode op '{}'", op));
      bool has_ptr = get_or<bool>(j, "has_ptr", !ops.empty(), path);
      if (ops.size() > 2 || (has_ptr && ops.empty())) bad(path, "snode_op takes an optional pointer and value");
      Stmt* ptr = has_ptr ? ops[0] : nullptr;
      Stmt* val = ops.size() > (has_ptr ? 1u : 0u) ? ops.back() : nullptr;
      s = std::make_unique<SNodeOpStmt>(op, name_of(j, "snode", path), ptr, val);
    } else if (kind == "snode_ptr") {
      // The text form is a global ptr, read as this kind only for a name that is no field's.
      auto name = name_of(j, "snode", path);
      if (k.find_field(name) || (!k.find_space(name) && scalar_of_snode_name(name) != ScalarKind::unknown))
        bad(path + ".snode", fmt::format("'{}' names a field (a place), not a container SNode", name));
      s = std::make_unique<SNodePtrStmt>(name, ops, get_or<bool>(j, "activate", true, path));
    } else if (kind == "rand") {
      if (!type.is_value()) bad(path, "rand needs a scalar type");
      s = std::make_unique<RandStmt>(type);
    } else if (kind == "internal_call") {
      auto name = get<std::string>(j, "name", path);
      if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
          }))
        bad(path + ".name", fmt::format("\"{}\" is not a word (letters, digits, '_', '.')", name));
      s = std::make_unique<InternalFuncStmt>(name, ops);
    } else if (kind == "block_corner_index") {
      need(1);
      s = std::make_unique<BlockCornerIndexStmt>(ops[0], static_cast<int>(get_int(j, "axis", path, 0, kMaxRank - 1)));
    } else if (kind == "block_local_ptr") {
      need(1);
      if (!type.pointer || type.gen) bad(path, "block_local_ptr needs a pointer type such as *f32");
      s = std::make_unique<BlockLocalPtrStmt>(ops[0]);
    } else if (kind == "ref") {
      need(1);
      s = std::make_unique<ReferenceStmt>(ops[0]);
    } else if (kind == "call") {
      s = std::make_unique<FuncCallStmt>(get<std::string>(j, "func", path), ops);
    } else if (kind == "bit_struct_store") {
      if (ops.empty()) bad(path, "bit_struct_store needs a pointer operand");
      std::vector<int> ch_ids;
      for (int64_t c : get_int_list(j, "ch_ids", path, 0, INT32_MAX)) ch_ids.push_back(static_cast<int>(c));
      if (ch_ids.size() != ops.size() - 1) bad(path, "bit_struct_store needs one value per channel id");
      s = std::make_unique<BitStructStoreStmt>(ops[0], std::move(ch_ids),
                                               std::vector<Stmt*>(ops.begin() + 1, ops.end()),
                                               get_or<bool>(j, "atomic", false, path));
    } else if (kind == "external_tensor_base_ptr") {
      std::vector<int> arg_id;
      for (int64_t a : get_int_list(j, "arg_id", path, 0, kMaxArgIndex)) arg_id.push_back(static_cast<int>(a));
      if (arg_id.empty()) bad(path + ".arg_id", "names no argument");
      if (!type.pointer || type.gen) bad(path, "external_tensor_base_ptr needs a pointer type such as *f32");
      s = std::make_unique<ExternalTensorBasePtrStmt>(std::move(arg_id), get_or<bool>(j, "is_grad", false, path), type);
    } else if (kind == "mesh_for") {
      auto f = std::make_unique<MeshForStmt>(mesh_element_of(j, "from", path), std::nullopt,
                                             get_or<std::string>(j, "scratch_pad", "none", path));
      if (j.contains("to")) f->to = mesh_element_of(j, "to", path);
      check_token(f->scratch_pad, "{/", path + ".scratch_pad");
      s = std::move(f);
    } else if (kind == "mesh_relation_access") {
      if (ops.empty() || ops.size() > 2) bad(path, "mesh_relation_access takes an element and an optional neighbor");
      s = std::make_unique<MeshRelationAccessStmt>(ops[0], mesh_element_of(j, "to", path),
                                                   ops.size() > 1 ? ops[1] : nullptr);
    } else if (kind == "mesh_index_conversion") {
      need(1);
      auto key = get<std::string>(j, "conversion", path);
      std::optional<MeshConversion> c;
#define PB_X(n, text) \
  if (key == #n) c = MeshConversion::n;
      PB_MESH_CONVERSIONS(PB_X)
#undef PB_X
      if (!c) bad(path + ".conversion", fmt::format("unknown mesh index conversion '{}'", key));
      s = std::make_unique<MeshIndexConversionStmt>(*c, mesh_element_of(j, "element", path), ops[0]);
    } else if (kind == "mesh_patch_index") {
      need(0);
      s = std::make_unique<MeshPatchIndexStmt>();
    } else if (kind == "matrix_init") {
      if (ops.empty()) bad(path, "a tensor value needs at least one element");
      s = std::make_unique<MatrixInitStmt>(ops, type);
    } else if (kind == "get_element") {
      need(1);
      std::vector<int> index;
      for (int64_t i : get_int_list(j, "index", path, 0, kMaxTensorElements)) index.push_back(static_cast<int>(i));
      if (index.empty()) bad(path + ".index", "get_element needs an element index");
      s = std::make_unique<GetElementStmt>(ops[0], std::move(index));
    } else if (kind == "matrix_ptr") {
      need(2);
      s = std::make_unique<MatrixPtrStmt>(ops[0], ops[1]);
    } else if (kind == "matrix_of_global_ptr") {
      std::vector<FieldId> fields;
      if (!j.contains("fields") || !j["fields"].is_array() || j["fields"].empty())
        bad(path + ".fields", "matrix_of_global_ptr needs a list of field names");
      for (const json& n : j["fields"]) {
        auto f = n.is_string() ? k.find_field(n.get<std::string>()) : std::nullopt;
        if (!f) bad(path + ".fields", "unknown field");
        fields.push_back(*f);
      }
      s = std::make_unique<MatrixOfGlobalPtrStmt>(std::move(fields), ops, get_or<bool>(j, "activate", true, path));
    } else if (kind == "matrix_of_matrix_ptr") {
      if (ops.empty()) bad(path, "matrix_of_matrix_ptr needs at least one pointer");
      s = std::make_unique<MatrixOfMatrixPtrStmt>(ops);
    } else {
      bad(path + ".kind", fmt::format("unknown statement kind '{}'", kind));
    }
    if (ids.count(id)) bad(path + ".id", fmt::format("statement ${} is defined twice", id));
    s->id = id;
    if (type.known() || type_rule(*s, k).type.known()) s->type = type.known() ? type : type_rule(*s, k).type;
    ids[id] = s.get();
    k.note_id(id);
    return s;
  }
};

}  // namespace

std::unique_ptr<Kernel> from_json(const json& j) {
  if (!j.is_object()) bad("$", "expected an object");
  if (!j.contains("format") || j["format"] != "passbench-ir") bad("$.format", "expected \"passbench-ir\"");
  auto k = std::make_unique<Kernel>();
  k->name = get_or<std::string>(j, "name", "", "$");
  auto shape_of = [](const json& s) -> std::optional<Shape> {
    if (s.is_null()) return std::nullopt;
    if (!s.is_array() || s.size() > static_cast<size_t>(kMaxRank))
      bad("$", fmt::format("shape {} is not a list of at most {} extents", s.dump(), kMaxRank));
    Shape shape;
    for (const json& e : s) {
      if (!e.is_number_integer() || e.get<int64_t>() < 1)
        bad("$", fmt::format("shape {} has an extent that is not a positive integer", s.dump()));
      shape.push_back(e.get<int64_t>());
    }
    return shape;
  };
  try {
    for (const json& s : j.at("spaces")) {
      IndexSpace sp;
      sp.name = s.at("name").get<std::string>();
      sp.shape = shape_of(s.at("shape"));
      sp.declared = s.value("declared", false);
      std::string kind = s.value("kind", "dense");
      auto known = snode_kind_from_name(kind);
      if (!known) bad("$.spaces", fmt::format("index space '{}' has the unknown kind '{}'", sp.name, kind));
      sp.kind = *known;
      sp.parent = s.value("parent", "");
      k->spaces.push_back(std::move(sp));
    }
    const json& fields = j.at("fields");
    for (const json& f : fields) {
      Field fd;
      fd.name = f.at("name").get<std::string>();
      if (auto p = name_problem(fd.name)) bad("$.fields", *p);
      if (k->find_field(fd.name)) bad("$.fields", fmt::format("field '{}' is listed twice", fd.name));
      auto dt = parse_type(f.at("dtype").get<std::string>());
      if (!dt || !dt->is_value() || dt->quant != 0)
        bad("$.fields", fmt::format("field '{}' has an unknown dtype", fd.name));
      fd.dtype = dt->scalar;
      fd.tensor = dt->tensor;
      fd.shape = shape_of(f.at("shape"));
      fd.declared = f.value("declared", false);
      fd.space = f.value("space", "");
      k->add_field(std::move(fd));
    }
    for (size_t i = 0; i < fields.size(); ++i) {
      auto link = [&](const char* key) -> std::optional<FieldId> {
        if (!fields[i].contains(key)) return std::nullopt;
        auto id = k->find_field(fields[i][key].get<std::string>());
        if (!id) bad("$.fields", fmt::format("field {} names an unknown {} field", i, key));
        return id;
      };
      Field& f = k->field(static_cast<FieldId>(i));
      f.grad = link("grad");
      f.dual = link("dual");
      f.primal = link("primal");
    }
    for (const json& a : j.at("args")) {
      ArgDecl d;
      d.index = static_cast<int>(get_int(a, "index", "$.args", 0, kMaxArgIndex));
      auto dt = parse_type(a.at("dtype").get<std::string>());
      d.ndarray = a.value("ndarray", false);
      if (!dt || !dt->is_value() || dt->quant != 0) bad("$.args", "unknown argument dtype");
      d.dtype = dt->scalar;
      d.tensor = dt->tensor;
      d.ndim = a.contains("ndim") ? static_cast<int>(get_int(a, "ndim", "$.args", 0, kMaxRank)) : 0;
      if (a.contains("element_of")) {
        d.element_of = static_cast<int>(get_int(a, "element_of", "$.args", 0, kMaxArgIndex));
        d.element = static_cast<int>(get_int(a, "element", "$.args", 0, kMaxTensorElements - 1));
      }
      k->args.push_back(d);
    }
  } catch (const json::exception& e) {
    bad("$", e.what());
  }
  if (auto p = header_problem(*k)) bad("$", *p);
  Reader r{*k, {}};
  try {
    r.block(j.at("body"), k->root(), "$.body");
  } catch (const json::exception& e) {
    bad("$.body", e.what());
  }
  return k;
}

}  // namespace pb::ir
