// Internal to the parser (parser.cpp: file, header, blocks; parser_stmts.cpp, parser_offload.cpp,
// parser_more.cpp, parser_mesh.cpp: statement lines).
#pragma once

#include <unordered_map>

#include "ir/kernel.h"
#include "ir/lexer.h"

namespace pb::ir::detail {

class Parser {
 public:
  Parser(std::string_view text, std::string file, Kernel& k) : cur_(text, std::move(file)), k_(k) {}
  void parse_file();

 private:
  // parser.cpp
  void parse_header_line();
  void check_name(const std::string& name, size_t pos);
  void parse_field_decl();
  // A field's or ndarray's element type: a scalar kind or `[Tensor (N, ...) T]`.
  DataType parse_header_type(const char* what);
  void parse_element_of(ArgDecl& a);
  Shape parse_shape();
  void parse_block(Block& b);
  void parse_container_body(Stmt& s);

  // parser_stmts.cpp
  std::unique_ptr<Stmt> parse_stmt();  // nullptr for a line that only names another statement
  std::unique_ptr<Stmt> parse_value(const std::string& word, DataType hint, size_t word_pos);
  std::unique_ptr<Stmt> parse_effect(const std::string& word, DataType hint, size_t word_pos);
  std::unique_ptr<Stmt> parse_for(bool reversed);
  std::unique_ptr<Stmt> parse_struct_for();
  std::unique_ptr<Stmt> parse_print();
  std::unique_ptr<Stmt> parse_assert();
  DataType parse_type_hint();
  DataType parse_type_name(const std::string& text, size_t pos);
  // parser_offload.cpp
  std::unique_ptr<Stmt> parse_lowered(const std::string& word, DataType hint, size_t word_pos);
  std::unique_ptr<Stmt> parse_lookup(size_t pos);
  std::unique_ptr<Stmt> parse_offloaded();
  void parse_task_bound(OffloadedStmt& t, TaskBound& b);
  void parse_task_blocks(OffloadedStmt& t, bool legacy_brace);
  // parser_more.cpp
  std::unique_ptr<Stmt> parse_more(const std::string& word, DataType hint, size_t word_pos);
  // `[$a, $b]` (a tensor value), or nullptr when the bracket does not open a statement list.
  std::unique_ptr<Stmt> parse_matrix_init(DataType hint);
  std::unique_ptr<Stmt> parse_decoration();
  std::vector<Stmt*> parse_arguments(std::string_view open, std::string_view close);
  // parser_mesh.cpp
  std::unique_ptr<Stmt> parse_mesh(const std::string& word, DataType hint, size_t word_pos);
  std::unique_ptr<Stmt> parse_relation_access();

  Stmt* ref();
  Stmt* legacy_local_ref();
  FieldId field_for(const std::string& name, DataType hint, size_t pos);
  // Whether `global ptr [name]` with this type hint addresses a container SNode's cell, not a field.
  bool names_container(const std::string& name, DataType hint) const;
  [[noreturn]] void unsupported(const std::string& word, size_t pos);

  Cursor cur_;
  Kernel& k_;
  int depth_ = 0;                   // blocks open around the statement being read
  bool legacy_task_brace_ = false;  // the last offloaded line ended in `{` (Taichi <= 0.6)
  std::vector<Stmt*> open_loops_;   // for loops and loop tasks around the statement being read
  std::vector<Stmt*> open_scopes_;  // the same and while loops: what a `continue` may continue
  std::unordered_map<int, Stmt*> ids_;
  std::vector<Stmt*> unnamed_;  // prints carry no number; they get fresh ones after the whole file
  std::unordered_map<const Stmt*, Stmt*> loop_vars_;  // Taichi 0.5 range fors and their variable
};

}  // namespace pb::ir::detail
