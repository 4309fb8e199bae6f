// Size measures of generated shader text (MSL or GLSL as SPIRV-Cross writes it). Line-based and
// exact for that output style; the definitions are in docs/codegen-spirv.md, "MSL and GLSL".
#pragma once

#include <cstdint>
#include <string_view>

namespace pb::codegen::msl {

struct TextMetrics {
  uint64_t bytes = 0;               // size of the text in bytes
  uint64_t lines = 0;               // count_lines(text)
  uint64_t local_declarations = 0;  // function-body lines for which is_local_declaration holds
  uint64_t alias_copies = 0;        // function-body lines for which is_alias_copy holds
};

// Number of '\n' characters, plus one when the text is non-empty and does not end with '\n'.
uint64_t count_lines(std::string_view text);

// `[qualifiers] Type[<args>][&|*] name[dims]... [= initializer];` where Type is an identifier that
// is not a statement keyword (return, if, for, ...). Qualifiers: const, thread, threadgroup, device,
// constant, precise, highp, mediump, lowp. Leading/trailing whitespace is ignored.
bool is_local_declaration(std::string_view line);

// `name = other;` with both sides plain identifiers (no member access, index, literal or operator):
// a copy that only renames a value, as SPIRV-Cross writes for OpPhi and whole-array copies.
bool is_alias_copy(std::string_view line);

// Applies the predicates to the lines inside function bodies: the lines of a top-level `{ ... }`
// block whose header (the text before `{`, or the previous non-blank line) contains '(' and does
// not start with struct, class, union, enum, namespace, typedef or layout.
TextMetrics measure_text(std::string_view text);

}  // namespace pb::codegen::msl
