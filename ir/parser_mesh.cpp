// Statement lines of mesh kernels (mesh for, relation access, index conversion, patch index) and
// external_tensor_base_ptr (docs/ir-format.md).
#include <fmt/format.h>

#include "ir/parser_impl.h"

namespace pb::ir::detail {

namespace {
constexpr const char* kElementRemedy = "mesh element types are verts, edges, faces, cells";

MeshElement read_element(Cursor& cur) {
  cur.skip_blanks();
  size_t at = cur.pos();
  std::string name = cur.read_word();
  auto e = mesh_element_from_name(name);
  if (!e) cur.fail_at(at, fmt::format("unknown mesh element type '{}'", name), kElementRemedy);
  return *e;
}
}  // namespace

std::unique_ptr<Stmt> Parser::parse_mesh(const std::string& word, DataType hint, size_t word_pos) {
  if (word == "mesh") {
    if (cur_.try_keyword("patch")) {
      cur_.expect("idx");
      return std::make_unique<MeshPatchIndexStmt>();
    }
    cur_.expect("for", "after 'mesh' (mesh for, mesh patch idx)");
    cur_.expect("(");
    MeshElement from = read_element(cur_);
    cur_.expect("->");
    std::optional<MeshElement> to;
    if (!cur_.try_keyword("Unknown")) to = read_element(cur_);
    cur_.expect(")");
    cur_.skip_blanks();
    size_t at = cur_.pos();
    std::string scratch_pad = cur_.read_until("{", "the scratch-pad info (`none`)");
    cur_.check_utf8(at, cur_.pos());
    // The JSON reader's token rule (ir/json.cpp, check_token): what prints back as this line.
    if (scratch_pad.find_first_of("/#") != std::string::npos)  // a carriage return: read_until
      cur_.fail_at(at, "expected the scratch-pad info (`none`)");
    return std::make_unique<MeshForStmt>(from, to, scratch_pad);
  }
  if (word == "local" || word == "global") {  // `local to global verts $i`
    size_t back = cur_.pos();
    if (!cur_.try_keyword("to")) {
      cur_.reset(back);
      return nullptr;
    }
    cur_.skip_blanks();
    size_t at = cur_.pos();
    std::string target = cur_.read_word();
    std::optional<MeshConversion> conversion;
    std::string text = word + " to " + target;
#define PB_X(name, spelled) \
  if (text == (spelled)) conversion = MeshConversion::name;
    PB_MESH_CONVERSIONS(PB_X)
#undef PB_X
    if (!conversion)
      cur_.fail_at(at, fmt::format("unknown mesh index conversion '{}'", text),
                   "conversions are local to global, local to reordered, global to reordered");
    MeshElement element = read_element(cur_);
    return std::make_unique<MeshIndexConversionStmt>(*conversion, element, ref());
  }
  if (word == "external_tensor_base_ptr") {
    cur_.expect("(");
    cur_.expect("arg_id=[");
    std::vector<int> arg_id;
    do arg_id.push_back(static_cast<int>(cur_.read_int_in(0, kMaxArgIndex, "argument index")));
    while (cur_.try_consume(","));
    cur_.expect("]");
    cur_.expect(",");
    cur_.expect("is_grad=");
    bool grad = cur_.try_keyword("true");
    if (!grad) cur_.expect("false");
    cur_.expect(")");
    if (!hint.pointer || hint.gen)
      cur_.fail_at(word_pos, "an external_tensor_base_ptr needs a pointer type hint",
                   "write it as `<*f32> $N = external_tensor_base_ptr (arg_id=[0], is_grad=false)`");
    return std::make_unique<ExternalTensorBasePtrStmt>(std::move(arg_id), grad, hint);
  }
  return nullptr;
}

// `$e idx relation edges size` or `$e idx relation edges[$n]`, at the element's `$`.
std::unique_ptr<Stmt> Parser::parse_relation_access() {
  Stmt* element = ref();
  cur_.expect("idx");
  cur_.expect("relation");
  MeshElement to = read_element(cur_);
  if (cur_.try_keyword("size")) return std::make_unique<MeshRelationAccessStmt>(element, to, nullptr);
  cur_.expect("[", "after the element type (`edges size` or `edges[$n]`)");
  Stmt* neighbor = ref();
  cur_.expect("]");
  return std::make_unique<MeshRelationAccessStmt>(element, to, neighbor);
}

}  // namespace pb::ir::detail
