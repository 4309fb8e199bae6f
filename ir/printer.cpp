#include "ir/printer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/visitor.h"

namespace pb::ir {
namespace {

std::string name(const Stmt* s) { return s ? fmt::format("${}", s->id) : std::string("$<erased>"); }

std::string names(std::span<Stmt* const> ops) {
  std::string out;
  for (size_t i = 0; i < ops.size(); ++i) out += (i ? ", " : "") + name(ops[i]);
  return out;
}

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string block_dim_text(int block_dim) { return block_dim == 0 ? "adaptive" : std::to_string(block_dim); }

std::string bound_text(const OffloadedStmt& s, const TaskBound& b) {
  switch (b.kind) {
    case TaskBound::Kind::constant:
      return std::to_string(b.value);
    case TaskBound::Kind::temporary:
      return fmt::format("tmp(offset={}B)", b.value);
    case TaskBound::Kind::operand:
      return name(s.bound_operand(b));
  }
  return "?";
}

std::string task_tail(const OffloadedStmt& s) {
  std::string out;
  if (!s.loop_name.empty()) out += " loop_name=" + s.loop_name;
  if (s.gdw_level >= 0) out += fmt::format(" gdw_level={}", s.gdw_level);
  return out;
}

// The names the reference prints before each block of an offloaded task, in blocks() order.
constexpr const char* kTaskBlockNames[] = {"tls prologue", "body prologue", "bls prologue",
                                           "body",         "bls_epilogue",  "tls_epilogue"};

// The text after the type hint and `$N`: ` = const 0`, ` : local store [...]`, or a container
// opener ending in `{`.
struct LineBody {
  const Kernel& k;
  std::string operator()(const ConstStmt& s) const { return " = const " + s.value.to_string(); }
  std::string operator()(const ArgLoadStmt& s) const { return fmt::format(" = argload[{}]", s.arg_index); }
  std::string operator()(const AllocaStmt&) const { return " = alloca"; }
  std::string operator()(const LocalLoadStmt& s) const { return fmt::format(" = local load [{}]", name(s.src())); }
  std::string operator()(const LocalStoreStmt& s) const {
    return fmt::format(" : local store [{} <- {}]", name(s.dest()), name(s.val()));
  }
  std::string operator()(const GlobalPtrStmt& s) const {
    return fmt::format(" = global ptr [{}], index [{}] activate={}", k.field(s.field).name, names(s.indices()),
                       s.activate ? "true" : "false");
  }
  std::string operator()(const SNodePtrStmt& s) const {
    return fmt::format(" = global ptr [{}], index [{}] activate={}", s.snode, names(s.indices()),
                       s.activate ? "true" : "false");
  }
  std::string operator()(const ExternalPtrStmt& s) const {
    std::string shape;
    if (!s.element_shape.empty()) {
      shape = ", (";
      for (size_t i = 0; i < s.element_shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(s.element_shape[i]);
      shape += ")";
    }
    return fmt::format(" = external_ptr {}, [{}]{} layout={} is_grad={}{}", name(s.base()), names(s.indices()), shape,
                       s.layout, s.is_grad ? "true" : "false", s.is_dual ? " is_dual=true" : "");
  }
  std::string operator()(const GlobalLoadStmt& s) const {
    return fmt::format(" = global load {}{}", s.is_volatile ? "volatile " : "", name(s.src()));
  }
  std::string operator()(const GlobalStoreStmt& s) const {
    return fmt::format(" : global store [{} <- {}]", name(s.dest()), name(s.val()));
  }
  std::string operator()(const AtomicOpStmt& s) const {
    return fmt::format(" = atomic {}({}, {})", op_name(s.op), name(s.dest()), name(s.val()));
  }
  std::string operator()(const UnaryOpStmt& s) const {
    if (is_cast(s.op)) return fmt::format(" = {}<{}> {}", op_name(s.op), to_string(s.type), name(s.x()));
    return fmt::format(" = {} {}", op_name(s.op), name(s.x()));
  }
  std::string operator()(const BinaryOpStmt& s) const {
    return fmt::format(" = {} {} {}", op_name(s.op), name(s.lhs()), name(s.rhs()));
  }
  std::string operator()(const TernaryOpStmt& s) const {
    return fmt::format(" = select({}, {}, {})", name(s.cond()), name(s.a()), name(s.b()));
  }
  std::string operator()(const IfStmt& s) const { return fmt::format(" : if {} {{", name(s.cond())); }
  std::string operator()(const RangeForStmt& s) const {
    // The reference printer writes a named loop as `block_dim=adaptive  loop_name=foo{`.
    std::string tail = s.loop_name.empty() ? " {" : "  loop_name=" + s.loop_name + "{";
    return fmt::format(" : {}for in range({}, {}) block_dim={}{}", s.reversed ? "reversed " : "", name(s.begin()),
                       name(s.end()), block_dim_text(s.block_dim), tail);
  }
  std::string operator()(const StructForStmt& s) const {
    return fmt::format(" : struct for in {} {}block_dim={} {{", s.space, s.none_marker ? "none" : "",
                       block_dim_text(s.block_dim));
  }
  std::string operator()(const LoopIndexStmt& s) const {
    return fmt::format(" = loop {} index {}", name(s.loop()), s.axis);
  }
  std::string operator()(const WhileStmt&) const { return " : while true {"; }
  std::string operator()(const WhileControlStmt& s) const {
    return fmt::format(" : while control {}, {}", s.has_mask() ? name(s.mask()) : "nullptr", name(s.cond()));
  }
  std::string operator()(const ContinueStmt& s) const {
    if (s.scoped)
      for (const Stmt* p = s.parent_stmt(); p; p = p->parent_stmt()) {
        const auto* task = dyn_cast<OffloadedStmt>(p);
        if (is_loop(p->kind()) || (task && (task->is_loop_task() || task->task == TaskType::mesh_for)))
          return fmt::format(" continue (scope={})", name(p));
      }
    return " continue";
  }
  std::string operator()(const AdStackAllocaStmt& s) const {
    if (s.size) return fmt::format(" = stack alloc (max_size={}, size={})", s.max_size, to_string(*s.size));
    return fmt::format(" = stack alloc (max_size={})", s.max_size);
  }
  std::string operator()(const AdStackPushStmt& s) const {
    return fmt::format(" : stack push {}, val = {}", name(s.stack()), name(s.val()));
  }
  std::string operator()(const AdStackPopStmt& s) const { return fmt::format(" : stack pop {}", name(s.stack())); }
  std::string operator()(const AdStackLoadTopStmt& s) const {
    return fmt::format(" = stack load top {}", name(s.stack()));
  }
  std::string operator()(const AdStackLoadTopAdjStmt& s) const {
    return fmt::format(" = stack load top adj {}", name(s.stack()));
  }
  std::string operator()(const AdStackAccAdjointStmt& s) const {
    return fmt::format(" : stack acc adj {}, val = {}", name(s.stack()), name(s.val()));
  }
  std::string operator()(const PrintStmt& s) const {
    std::string out = "print ";
    for (size_t i = 0; i < s.items.size(); ++i) {
      if (i) out += ", ";
      if (const auto* text = std::get_if<std::string>(&s.items[i]))
        out += quote(*text);
      else
        out += name(s.operand(std::get<size_t>(s.items[i])));
    }
    return out;
  }
  std::string operator()(const AssertStmt& s) const {
    // The reference writes the message raw (unescaped).
    std::string out = fmt::format(" : assert {}, \"{}\"", name(s.cond()), s.message);
    for (const Stmt* a : s.args()) out += ", " + name(a);
    return out;
  }
  std::string operator()(const OffloadedStmt& s) const {
    switch (s.task) {
      case TaskType::serial:
        return " = offloaded";
      case TaskType::range_for:
        return fmt::format(" = offloaded range_for({}, {}) grid_dim={} block_dim={}{}", bound_text(s, s.begin),
                           bound_text(s, s.end), s.grid_dim, s.block_dim, task_tail(s));
      case TaskType::struct_for:
        return fmt::format(" = offloaded struct_for({}) grid_dim={} block_dim={} bls={}{}", s.snode, s.grid_dim,
                           s.block_dim, s.bls, task_tail(s));
      case TaskType::mesh_for:
        return fmt::format(" = offloaded mesh_for({} -> {}) num_patches={} grid_dim={} block_dim={} bls={}",
                           mesh_element_name(s.mesh_from), mesh_target_name(s.mesh_to), s.num_patches, s.grid_dim,
                           s.block_dim, s.bls);
      case TaskType::listgen:
        return fmt::format(" = offloaded listgen {}->{}{}", s.parent_snode, s.snode, task_tail(s));
      case TaskType::gc:
        return fmt::format(" = offloaded garbage collect {}", s.snode);
      case TaskType::clear_list:
        return fmt::format(" = offloaded clear_list {}", s.snode);
    }
    return " = offloaded ?";
  }
  std::string operator()(const GlobalTemporaryStmt& s) const {
    return fmt::format(" = global tmp var (offset = {} B)", s.offset);
  }
  std::string operator()(const ThreadLocalPtrStmt& s) const {
    return fmt::format(" = thread local ptr (offset = {} B)", s.offset);
  }
  std::string operator()(const GetRootStmt& s) const {
    return s.form.empty() ? " = get root" : " = get root " + s.form;
  }
  std::string operator()(const SNodeLookupStmt& s) const {
    return fmt::format(" = [{}][{}]::lookup({}, {}) activate = {}", s.snode, s.snode_type, name(s.parent_ptr()),
                       name(s.index()), s.activate ? "true" : "false");
  }
  std::string operator()(const GetChStmt& s) const {
    return fmt::format(" = get child [{}->{}] {}", s.from, s.to, name(s.input()));
  }
  std::string operator()(const LinearizeStmt& s) const {
    return fmt::format(" = linearized(ind {{{}}}, stride {{{}}})", names(s.operands()), fmt::join(s.strides, ", "));
  }
  std::string operator()(const IntegerOffsetStmt& s) const {
    return fmt::format(" = offset {} + {}", name(s.input()), s.offset);
  }
  std::string operator()(const BitExtractStmt& s) const {
    if (s.legacy) return fmt::format(" = bit_extract({} + 0, {}~{})", name(s.input()), s.bit_begin, s.bit_end);
    return fmt::format(" = bit_extract({}) bit_range=[{}, {})", name(s.input()), s.bit_begin, s.bit_end);
  }
  std::string operator()(const LoopLinearIndexStmt& s) const {
    return fmt::format(" = loop {} index linear", name(s.loop()));
  }
  std::string operator()(const ReturnStmt& s) const { return " : return " + names(s.operands()); }
  std::string operator()(const LoopUniqueStmt& s) const {
    if (s.covers.empty()) return fmt::format(" = loop_unique({})", name(s.input()));
    std::string covers;
    for (size_t i = 0; i < s.covers.size(); ++i) covers += fmt::format("{}S{}", i ? ", " : "", s.covers[i]);
    return fmt::format(" = loop_unique({}, covers=[{}])", name(s.input()), covers);
  }
  std::string operator()(const RangeAssumptionStmt& s) const {
    return fmt::format(" = assume_in_range({}{:+d} <= {} < {}{:+d})", name(s.base()), s.low, name(s.input()),
                       name(s.base()), s.high);
  }
  std::string operator()(const DecorationStmt& s) const {
    if (s.loop_unique) return fmt::format("decorate {} : Loop-unique {}", name(s.target()), s.number);
    return fmt::format("decorate {} : ... size = {}", name(s.target()), s.number);
  }
  std::string operator()(const ExternalTensorShapeAlongAxisStmt& s) const {
    if (!s.bracketed && s.arg_id.size() == 1)
      return fmt::format(" = external_tensor_shape_along_axis {}, arg_id {}", s.axis, s.arg_id[0]);
    return fmt::format(" = external_tensor_shape_along_axis {}, arg_id [{}]", s.axis, fmt::join(s.arg_id, ", "));
  }
  std::string operator()(const SNodeOpStmt& s) const {
    // The reference leaves a blank after the SNode when there is neither pointer nor value.
    std::string extras = s.ptr() ? "ptr = " + name(s.ptr()) : "";
    if (s.val()) extras += ", val = " + name(s.val());
    return fmt::format(" = {} [{}] {}", s.op, s.snode, extras);
  }
  std::string operator()(const RandStmt&) const { return " = rand()"; }
  std::string operator()(const InternalFuncStmt& s) const {
    return fmt::format(" = internal call {}({})", s.func_name, names(s.operands()));
  }
  std::string operator()(const BlockCornerIndexStmt& s) const {
    return fmt::format(" = loop {} block corner index {}", name(s.loop()), s.axis);
  }
  std::string operator()(const BlockLocalPtrStmt& s) const {
    return fmt::format(" = block local ptr (offset = {})", name(s.offset()));
  }
  std::string operator()(const ReferenceStmt& s) const { return fmt::format(" = ref({})", name(s.var())); }
  std::string operator()(const FuncCallStmt& s) const {
    return fmt::format(" = call {}, args = {{{}}}", quote(s.func), names(s.operands()));
  }
  std::string operator()(const BitStructStoreStmt& s) const {
    return fmt::format(" : {}bit_struct_store {}, ch_ids=[{}], values=[{}]", s.is_atomic ? "atomic " : "",
                       name(s.ptr()), fmt::join(s.ch_ids, ", "), names(s.values()));
  }
  std::string operator()(const MatrixInitStmt& s) const { return fmt::format(" = [{}]", names(s.operands())); }
  std::string operator()(const GetElementStmt& s) const {
    return fmt::format(" = get_element({}, {})", name(s.src()), fmt::join(s.index, ", "));
  }
  std::string operator()(const MatrixPtrStmt& s) const {
    return fmt::format(" = shift ptr [{} + {}]", name(s.origin()), name(s.offset()));
  }
  std::string operator()(const MatrixOfGlobalPtrStmt& s) const {
    std::string fields;
    for (size_t i = 0; i < s.fields.size(); ++i) fields += (i ? ", " : "") + k.field(s.fields[i]).name;
    return fmt::format(" = matrix of global ptr [{}], index [{}] activate={}", fields, names(s.operands()),
                       s.activate ? "true" : "false");
  }
  std::string operator()(const MatrixOfMatrixPtrStmt& s) const {
    return fmt::format(" = matrix of matrix ptr [{}]", names(s.operands()));
  }
  std::string operator()(const ExternalTensorBasePtrStmt& s) const {
    return fmt::format(" = external_tensor_base_ptr (arg_id=[{}], is_grad={})", fmt::join(s.arg_id, ", "),
                       s.is_grad ? "true" : "false");
  }
  // The reference glues an empty scratch-pad marker (`none`) to the brace.
  std::string operator()(const MeshForStmt& s) const {
    return fmt::format(" : mesh for ({} -> {}) {}{{", mesh_element_name(s.from), mesh_target_name(s.to),
                       s.scratch_pad == "none" ? "none" : s.scratch_pad + " ");
  }
  std::string operator()(const MeshRelationAccessStmt& s) const {
    if (s.is_size()) return fmt::format(" = {} idx relation {} size", name(s.element()), mesh_element_name(s.to));
    return fmt::format(" = {} idx relation {}[{}]", name(s.element()), mesh_element_name(s.to), name(s.neighbor()));
  }
  std::string operator()(const MeshIndexConversionStmt& s) const {
    return fmt::format(" = {} {} {}", mesh_conversion_text(s.conversion), mesh_element_name(s.element),
                       name(s.index()));
  }
  std::string operator()(const MeshPatchIndexStmt&) const { return " = mesh patch idx"; }
};

std::string line(const Stmt& s, const Kernel& k) {
  // Quadrants writes print and decorate without a name, and assert with a bare number.
  if (isa<PrintStmt>(&s)) return LineBody{k}(static_cast<const PrintStmt&>(s));
  if (isa<AssertStmt>(&s)) return std::to_string(s.id) + LineBody{k}(static_cast<const AssertStmt&>(s));
  if (isa<DecorationStmt>(&s)) return LineBody{k}(static_cast<const DecorationStmt&>(s));
  std::string hint = s.type.known() ? "<" + to_string(s.type) + "> " : "";
  return hint + name(&s) + visit(s, LineBody{k});
}

void print_block(const Block& b, const Kernel& k, const PrintOptions& opts, int depth, std::string& out) {
  std::string indent(static_cast<size_t>(depth) * 2, ' ');
  for (const Stmt* s : b) {
    out += indent + line(*s, k);
    if (opts.annotate) {
      std::string note = opts.annotate(*s);
      if (!note.empty()) out += "  # " + note;
    }
    out += "\n";
    auto blocks = s->blocks();
    if (blocks.empty()) continue;
    if (isa<OffloadedStmt>(s)) {  // named blocks at the task's indent, and no closing brace of its own
      for (size_t i = 0; i < blocks.size(); ++i) {
        if (!blocks[i]) continue;
        out += indent + kTaskBlockNames[i] + " {\n";
        print_block(*blocks[i], k, opts, depth + 1, out);
        out += indent + "}\n";
      }
      continue;
    }
    if (const auto* i = dyn_cast<IfStmt>(s)) {
      print_block(*i->true_block, k, opts, depth + 1, out);
      if (i->false_block) {
        out += indent + "} else {\n";
        print_block(*i->false_block, k, opts, depth + 1, out);
      }
    } else {
      print_block(*blocks[0], k, opts, depth + 1, out);
    }
    out += indent + "}\n";
  }
}

}  // namespace

std::string shape_to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string print_header(const Kernel& k) {
  std::string out;
  for (const IndexSpace& sp : k.spaces)
    if (sp.declared && sp.shape)
      out += fmt::format("{} {} : {}{}\n", snode_kind_name(sp.kind), sp.name, shape_to_string(*sp.shape),
                         sp.parent.empty() ? "" : " in " + sp.parent);
  for (const Field& f : k.fields()) {
    if (!f.declared || f.primal) continue;
    out +=
        fmt::format("field {} : {}{}", f.name, to_string(f.cell_type()), f.shape ? shape_to_string(*f.shape) : "[?]");
    if (f.grad) out += " grad " + k.field(*f.grad).name;
    if (f.dual) out += " dual " + k.field(*f.dual).name;
    if (!f.space.empty()) out += " in " + f.space;
    out += "\n";
  }
  for (const ArgDecl& a : k.args) {
    if (a.ndarray)
      out += fmt::format("arg {} : ndarray<{}, {}>\n", a.index, to_string(a.element_type()), a.ndim);
    else if (a.element_of >= 0)
      out += fmt::format("arg {} : {} element {} of arg {}\n", a.index, scalar_name(a.dtype), a.element, a.element_of);
    else
      out += fmt::format("arg {} : {}\n", a.index, to_string(a.element_type()));
  }
  return out;
}

std::string print_kernel(const Kernel& k, const PrintOptions& opts) {
  std::string out = opts.header ? print_header(k) : "";
  out += k.name.empty() ? "kernel {\n" : fmt::format("kernel {} {{\n", quote(k.name));
  print_block(k.root(), k, opts, 1, out);
  out += "}\n";
  return out;
}

std::string print_stmt(const Stmt& s, const Kernel& k) { return line(s, k); }

}  // namespace pb::ir
