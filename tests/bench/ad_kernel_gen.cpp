#include "ad_kernel_gen.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace pb::bench {

namespace {

struct Writer {
  std::string out;
  int next = 0;
  int indent = 1;

  int emit(const std::string& type, const std::string& rhs) {
    int id = next++;
    out += fmt::format("{:{}}{} ${} = {}\n", "", indent * 2, type, id, rhs);
    return id;
  }
  int effect(const std::string& type, const std::string& rhs) {
    int id = next++;
    out += fmt::format("{:{}}{} ${} : {}\n", "", indent * 2, type, id, rhs);
    return id;
  }
  int open(const std::string& head) {
    int id = next++;
    out += fmt::format("{:{}}${} : {}{{\n", "", indent * 2, id, head);
    ++indent;
    return id;
  }
  void close() {
    --indent;
    out += fmt::format("{:{}}}}\n", "", indent * 2);
  }
};

const char* kOps[] = {"sin", "mul", "tanh", "add", "cos", "mul"};

void body(Writer& w, int b, const AdWorkload& s, int c0, int celems, int n_elems) {
  (void)n_elems;
  int loop = w.open(fmt::format("for in range(${}, ${}) block_dim=adaptive ", c0, celems));
  int i = w.emit("<i32>", fmt::format("loop ${} index 0", loop));
  int qp = w.emit("<*f32>", fmt::format("global ptr [q{}], index [${}] activate=true", b, i));
  int q = w.emit("<f32>", fmt::format("global load ${}", qp));
  int wp = w.emit("<*f32>", fmt::format("global ptr [w{}], index [${}] activate=true", b, i));
  int wv = w.emit("<f32>", fmt::format("global load ${}", wp));
  std::vector<int> vars;
  for (size_t k = 0; k < s.carried; ++k) {
    int c = w.emit("<f32>", fmt::format("const {}", 0.1 + 0.01 * static_cast<double>(k)));
    int init = w.emit("<f32>", fmt::format("mul ${} ${}", q, c));
    int a = w.emit("<*f32>", "alloca");
    w.effect("<f32>", fmt::format("local store [${} <- ${}]", a, init));
    vars.push_back(a);
  }
  int scale = w.emit("<f32>", "const 0.5");
  std::vector<int> loops;
  for (size_t d = 0; d < s.depth; ++d) {
    int np = w.emit("<*i32>", "global ptr [n], index [] activate=true");
    int n = w.emit("<i32>", fmt::format("global load ${}", np));
    loops.push_back(w.open(fmt::format("for in range(${}, ${}) block_dim=adaptive ", c0, n)));
  }
  for (size_t k = 0; k < s.carried; ++k) {
    int t = w.emit("<f32>", fmt::format("local load [${}]", vars[k]));
    int nb = w.emit("<f32>", fmt::format("local load [${}]", vars[(k + 1) % s.carried]));
    int first = t;
    for (size_t l = 0; l < s.chain; ++l) {
      std::string op = kOps[(k + l) % 6];
      if (s.dag && (op == "mul" || op == "add"))
        t = w.emit("<f32>", fmt::format("{} ${} ${}", op, t, l % 2 ? t : first));
      else if (op == "mul")
        t = w.emit("<f32>", fmt::format("mul ${} ${}", t, l % 2 ? scale : wv));
      else if (op == "add")
        t = w.emit("<f32>", fmt::format("add ${} ${}", t, nb));
      else
        t = w.emit("<f32>", fmt::format("{} ${}", op, t));
    }
    w.effect("<f32>", fmt::format("local store [${} <- ${}]", vars[k], t));
  }
  for (size_t d = 0; d < s.depth; ++d) w.close();
  int sum = w.emit("<f32>", fmt::format("local load [${}]", vars[0]));
  for (size_t k = 1; k < s.carried; ++k) {
    int v = w.emit("<f32>", fmt::format("local load [${}]", vars[k]));
    sum = w.emit("<f32>", fmt::format("add ${} ${}", sum, v));
  }
  int op = w.emit("<*f32>", fmt::format("global ptr [out], index [${}] activate=true", i));
  w.emit("<f32>", fmt::format("atomic add(${}, ${})", op, sum));
  w.close();
}

size_t body_statements(const AdWorkload& s) {
  return 6 + 4 * s.carried + 1 + 3 * s.depth + s.carried * (3 + s.chain) + 2 * s.carried + 1;
}

}  // namespace

std::string push_family_kernel(size_t pushes, bool same_stack) {
  std::string s = "field q : f32[16]\nfield out : f32[16]\nfield n : i32[]\nkernel \"push_family\" {\n";
  int id = 0;
  auto next = [&] { return id++; };
  int c0 = next(), c16 = next();
  s += fmt::format("  <i32> ${} = const 0\n  <i32> ${} = const 16\n", c0, c16);
  int loop = next();
  s += fmt::format("  ${} : for in range(${}, ${}) block_dim=adaptive {{\n", loop, c0, c16);
  int i = next();
  s += fmt::format("    <i32> ${} = loop ${} index 0\n", i, loop);
  std::vector<int> stacks;
  for (size_t k = 0; k < (same_stack ? 1 : pushes); ++k) {
    stacks.push_back(next());
    s += fmt::format("    <f32> ${} = stack alloc (max_size=64)\n", stacks.back());
  }
  int qp = next(), q = next(), np = next(), n = next();
  s += fmt::format("    <*f32> ${} = global ptr [q], index [${}] activate=true\n    <f32> ${} = global load ${}\n", qp,
                   i, q, qp);
  s += fmt::format("    <*i32> ${} = global ptr [n], index [] activate=true\n    <i32> ${} = global load ${}\n", np, n,
                   np);
  int inner = next();
  s += fmt::format("    ${} : for in range(${}, ${}) block_dim=adaptive {{\n", inner, c0, n);
  for (size_t k = 0; k < pushes; ++k)
    s += fmt::format("      <f32> ${} : stack push ${}, val = ${}\n", next(), stacks[same_stack ? 0 : k], q);
  s += "    }\n";
  int sum = -1;
  for (int st : stacks) {
    int top = next();
    s += fmt::format("    <f32> ${} = stack load top ${}\n", top, st);
    if (sum < 0) {
      sum = top;
    } else {
      int add = next();
      s += fmt::format("    <f32> ${} = add ${} ${}\n", add, sum, top);
      sum = add;
    }
  }
  int op = next();
  s +=
      fmt::format("    <*f32> ${} = global ptr [out], index [${}] activate=true\n    ${} : global store [${} <- ${}]\n",
                  op, i, next(), op, sum);
  return s + "  }\n}\n";
}

std::string generate_ad_kernel(size_t statements, const AdWorkload& shape, bool one_body) {
  AdWorkload s = shape;
  size_t bodies = 1;
  if (one_body) {
    while (body_statements(s) < statements) ++s.carried;
  } else {
    bodies = std::max<size_t>(1, statements / body_statements(s));
  }
  std::string header;
  for (size_t b = 0; b < bodies; ++b)
    header += fmt::format("field q{0} : f32[16] grad q{0}_grad\nfield w{0} : f32[16] grad w{0}_grad\n", b);
  header += "field out : f32[16] grad out_grad\nfield n : i32[]\n";
  Writer w;
  int c0 = w.emit("<i32>", "const 0");
  int celems = w.emit("<i32>", "const 16");
  for (size_t b = 0; b < bodies; ++b) body(w, static_cast<int>(b), s, c0, celems, 16);
  return header + "kernel {\n" + w.out + "}\n";
}

}  // namespace pb::bench
