// Compiling a CpuKernel, launching its tasks (oneTBB for parallel ones), the adstack heap, and
// turning the flag words into errors.
#include <fmt/format.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>

#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/widen.h"
#include "runtime/core/access_check.h"
#include "runtime/core/backend.h"
#include "runtime/core/prepare.h"
#include "runtime/core/stack_capacity.h"
#include "runtime/cpu/cpu_impl.h"
#include "runtime/cpu/sparse_host.h"

namespace pb::runtime::cpu {

using codegen::llvmgen::KernelInfo;
using codegen::llvmgen::TaskKind;

namespace {

// What a running launch's callbacks append to.
struct Host {
  const KernelInfo* info = nullptr;
  std::mutex mu;
  std::string printed;
  // With the global-access check (every task on one thread): the reads so far, and the first
  // violating write.
  struct Violation {
    const void* cell = nullptr;
    runtime::detail::GlobalAccessTracker::Read read;
    const ir::Stmt* write = nullptr;
    int64_t iteration = -1;
    bool overwrite = false;  // `read` is an earlier write of another iteration
  };
  runtime::detail::GlobalAccessTracker access;
  std::optional<Violation> violation;
};

extern "C" void pb_cpu_print_callback(void* host_ptr, int32_t site, const uint64_t* values) {
  auto* host = static_cast<Host*>(host_ptr);
  const auto& p = host->info->prints.at(static_cast<size_t>(site));
  std::string text;
  size_t v = 0;
  for (const auto& item : p.stmt->items) {
    if (const auto* t = std::get_if<std::string>(&item)) {
      text += *t;
    } else {
      text += detail::load_value(&values[v], p.value_kinds[v]).to_string();
      ++v;
    }
  }
  std::lock_guard lock(host->mu);
  host->printed += text;
}

extern "C" void pb_cpu_access_callback(void* host_ptr, int32_t site, const void* cell, int64_t iteration) {
  auto* host = static_cast<Host*>(host_ptr);
  const auto& a = host->info->accesses[static_cast<size_t>(site)];
  if (!a.write) {
    host->access.read(cell, a.stmt, iteration);
  } else if (!host->violation) {
    if (auto read = host->access.earlier_read(cell))
      host->violation = Host::Violation{cell, *read, a.stmt, iteration, false};
    else if (auto first = host->access.overwrite(cell, a.stmt, iteration, ir::isa<ir::GlobalStoreStmt>(a.stmt)))
      host->violation = Host::Violation{cell, *first, a.stmt, iteration, true};
  }
}

// element_name for the element at `cell` in the launch's memory.
std::string element_at(const CpuKernel& ck, const DeviceMemory& m, const void* cell) {
  const auto* p = static_cast<const char*>(cell);
  const ir::Kernel& k = ck.kernel();
  auto in = [&](const void* base, ir::ScalarKind kind, const ir::Shape& shape) -> std::optional<int64_t> {
    const auto* b = static_cast<const char*>(base);
    const int64_t bytes = detail::element_bytes(kind);
    if (!b || p < b || p >= b + bytes * runtime::num_elements(shape)) return std::nullopt;
    return (p - b) / bytes;
  };
  for (const auto& [id, shape] : ck.shapes().fields)
    if (auto flat = in(m.field_ptrs[static_cast<size_t>(id)], k.field(id).dtype, shape))
      return runtime::detail::element_name(fmt::format("field '{}'", k.field(id).name), shape, *flat);
  for (const auto& [index, shape] : ck.shapes().ndarrays)
    if (auto flat = in(m.ndarray_ptrs[static_cast<size_t>(index)], ck.shapes().ndarray_dtypes.at(index), shape))
      return runtime::detail::element_name(fmt::format("ndarray argument {}", index), shape, *flat);
  return "an element";
}

std::string kernel_label(const ir::Kernel& k) {
  return k.name.empty() ? "kernel" : fmt::format("kernel \"{}\"", k.name);
}

int64_t align_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

}  // namespace

// ---- CpuKernel ----

CpuKernel::CpuKernel(const ir::Kernel& k, const State& shapes_from, const CpuOptions& o)
    : kernel_(&k), impl_(std::make_unique<Impl>()) {
  impl_->shapes = detail::shapes_of(k, shapes_from);
  codegen::llvmgen::EmittedModule m =
      codegen::llvmgen::emit(k, impl_->shapes, {o.check_global_access, o.part_statements});
  if (o.keep_ir) ir_before_ = codegen::llvmgen::module_text(m);
  codegen::llvmgen::optimize(m, o.opt_level);
  if (o.keep_ir) ir_after_ = codegen::llvmgen::module_text(m);
  impl_->info = m.info;
  impl_->one_thread = o.check_global_access;
  detail::HostCallbacks callbacks{reinterpret_cast<void*>(&pb_cpu_print_callback),
                                  reinterpret_cast<void*>(&pb_cpu_access_callback)};
  detail::add_sparse_callbacks(callbacks);
  impl_->code = detail::jit_compile(std::move(m), callbacks);
}
CpuKernel::CpuKernel(CpuKernel&&) noexcept = default;
CpuKernel::~CpuKernel() = default;
const KernelInfo& CpuKernel::info() const { return impl_->info; }
const codegen::llvmgen::EmitShapes& CpuKernel::shapes() const { return impl_->shapes; }

// ---- CpuRuntime ----

struct CpuRuntime::Impl {
  std::unique_ptr<tbb::task_arena> arena;
  int threads = 1;
  int64_t max_heap_bytes = 0;
  char* heap = nullptr;
  int64_t heap_bytes = 0;
  int64_t allocations = 0;
  int64_t needed = 0;

  char* try_allocate(int64_t bytes) {
    if (max_heap_bytes > 0 && bytes > max_heap_bytes) return nullptr;
    return static_cast<char*>(std::aligned_alloc(64, static_cast<size_t>(align_up(bytes, 64))));
  }
  // Grows the heap to at least `bytes`: doubling, or exactly `bytes` when doubling fails.
  void reserve(int64_t bytes, const std::string& what) {
    needed = std::max(needed, bytes);
    if (bytes <= heap_bytes) return;
    int64_t want = std::max(bytes, heap_bytes * 2);
    char* p = try_allocate(want);
    if (!p && want != bytes) p = try_allocate(want = bytes);
    if (!p)
      throw UserError(fmt::format("cannot allocate the adstack heap of {} bytes for {}", bytes, what),
                      "lower the stacks' sizes (ad_stack_size) or run with fewer threads");
    std::free(heap);
    heap = p;
    heap_bytes = want;
    ++allocations;
  }
  ~Impl() { std::free(heap); }
};

CpuRuntime::CpuRuntime(int threads, int64_t max_heap_bytes) : impl_(std::make_unique<Impl>()) {
  impl_->arena = threads > 0 ? std::make_unique<tbb::task_arena>(threads) : std::make_unique<tbb::task_arena>();
  impl_->arena->initialize();
  impl_->threads = impl_->arena->max_concurrency();
  impl_->max_heap_bytes = max_heap_bytes;
}
CpuRuntime::~CpuRuntime() = default;
int CpuRuntime::threads() const { return impl_->threads; }
int64_t CpuRuntime::heap_bytes() const { return impl_->heap_bytes; }
int64_t CpuRuntime::heap_allocations() const { return impl_->allocations; }
int64_t CpuRuntime::heap_needed_bytes() const { return impl_->needed; }

namespace {

// A fingerprint of everything a size expression reads: the scalar arguments and the words of each
// field and ndarray it names. Equal fingerprints mean an equal capacity (a collision could only
// give a capacity that the pushes' overflow check then catches, never a wrong value).
uint64_t size_inputs_fingerprint(const ir::SizeExpr& size, const CpuKernel& ck, const DeviceMemory& m) {
  uint64_t h = 0x9E3779B97F4A7C15ull;
  auto mix = [&h](uint64_t w) {
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
  };
  for (uint64_t w : m.args) mix(w);
  auto words = [&](const std::vector<uint64_t>& buffer) {
    mix(buffer.size());
    for (uint64_t w : buffer) mix(w);
  };
  std::vector<const ir::SizeExpr*> todo{&size};
  while (!todo.empty()) {
    const ir::SizeExpr* e = todo.back();
    todo.pop_back();
    if (e->op() == ir::SizeOp::Field) {
      auto id = ck.kernel().find_field(e->name());
      mix(id ? static_cast<uint64_t>(*id) + 1 : 0);
      if (id && static_cast<size_t>(*id) < m.fields.size()) words(m.fields[static_cast<size_t>(*id)]);
    } else if (e->op() == ir::SizeOp::Ndarray) {
      mix(static_cast<uint64_t>(e->value()) + 1);
      if (e->value() >= 0 && static_cast<size_t>(e->value()) < m.ndarrays.size())
        words(m.ndarrays[static_cast<size_t>(e->value())]);
    }
    for (const ir::SizeExprPtr& o : e->operands()) todo.push_back(o.get());
  }
  return h;
}

// The capacity of a stack at launch: max_size, or the size expression against current values.
int64_t evaluate_capacity(const ir::AdStackAllocaStmt& a, const CpuKernel& ck, const DeviceMemory& m,
                          const std::function<std::string()>& stack_text) {
  const ir::Kernel& k = ck.kernel();
  // A size over a loop reads one element per iteration of the range it maximises over: the
  // element's description is formatted only for an error, and a field's id is looked up once.
  auto read = [&](const std::vector<uint64_t>& words, ir::ScalarKind kind, const ir::Shape& shape,
                  std::span<const int64_t> idx, auto&& what) -> int64_t {
    if (idx.size() != shape.size())
      throw UserError(
          fmt::format("{} has shape {} but is read with {} index(es)", what(), ir::shape_to_string(shape), idx.size()));
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (idx[d] < 0 || idx[d] >= shape[d])
        throw UserError(fmt::format("index {} is out of bounds for axis {} of {} of shape {}", idx[d], d, what(),
                                    ir::shape_to_string(shape)),
                        "the size bounds a loop index by more than the kernel reaches; give this kernel a fixed "
                        "size (reverse_ad{ad_stack_size=N})");
      off = off * shape[d] + idx[d];
    }
    const char* bytes = reinterpret_cast<const char*>(words.data());
    return detail::load_value(bytes + off * detail::element_bytes(kind), kind).as_i64();
  };
  ir::SizeEnv env;
  env.arg = [&](int index) -> int64_t {
    if (index < 0 || static_cast<size_t>(index) >= m.args.size() ||
        m.arg_kinds[static_cast<size_t>(index)] == ir::ScalarKind::unknown)
      throw UserError(fmt::format("argument {} is not given as a scalar", index), "add it to the inputs' \"args\"");
    return detail::load_value(&m.args[static_cast<size_t>(index)], m.arg_kinds[static_cast<size_t>(index)]).as_i64();
  };
  std::string last_name;
  std::optional<ir::FieldId> last_id;
  env.field = [&](const std::string& name, std::span<const int64_t> idx) -> int64_t {
    if (!last_id || name != last_name) last_id = k.find_field(name), last_name = name;
    const std::optional<ir::FieldId> id = last_id;
    if (!id || m.fields[static_cast<size_t>(*id)].empty())
      throw UserError(fmt::format("field '{}' has no data in the state", name), "give the field a shape and data");
    return read(m.fields[static_cast<size_t>(*id)], k.field(*id).dtype, ck.shapes().fields.at(*id), idx,
                [&] { return fmt::format("field '{}'", name); });
  };
  env.ndarray = [&](int index, std::span<const int64_t> idx) -> int64_t {
    auto it = ck.shapes().ndarrays.find(index);
    if (it == ck.shapes().ndarrays.end())
      throw UserError(fmt::format("argument {} is not given as an ndarray", index), "add it to the inputs' \"args\"");
    return read(m.ndarrays[static_cast<size_t>(index)], ck.shapes().ndarray_dtypes.at(index), it->second, idx,
                [&] { return fmt::format("ndarray argument {}", index); });
  };
  try {
    return std::max<int64_t>(ir::evaluate(*a.size, env), 1);
  } catch (const UserError& e) {
    throw UserError(
        fmt::format("cannot evaluate the size of {}: {}", stack_text(), e.diagnostic().message),
        e.diagnostic().remedy.empty() ? "check the inputs the size expression reads" : e.diagnostic().remedy);
  }
}

// evaluate_capacity, kept per kernel and evaluated again only when what the size reads changed.
int64_t launch_capacity(const ir::AdStackAllocaStmt& a, CpuKernel& ck, const DeviceMemory& m,
                        const std::function<std::string()>& stack_text) {
  if (a.max_size > 0 || !a.size) return a.max_size;
  const uint64_t fingerprint = size_inputs_fingerprint(*a.size, ck, m);
  CpuKernel::Impl& impl = ck.impl();
  {
    std::lock_guard lock(impl.capacities_mutex);
    if (auto it = impl.capacities.find(a.id); it != impl.capacities.end() && it->second.first == fingerprint)
      return it->second.second;
  }
  const int64_t cap = evaluate_capacity(a, ck, m, stack_text);
  std::lock_guard lock(impl.capacities_mutex);
  impl.capacities[a.id] = {fingerprint, cap};
  return cap;
}

}  // namespace

LaunchReport CpuRuntime::launch(CpuKernel& ck, DeviceMemory& m, uint64_t max_steps) {
  const ir::Kernel& k = ck.kernel();
  const KernelInfo& info = ck.info();
  CpuKernel::Impl& code = ck.impl();
  LaunchReport report;
  Host host;
  host.info = &info;
  std::vector<uint64_t> temps(std::max<uint32_t>(info.temps_words, 1), 0);
  std::vector<uint64_t> global_tmps(static_cast<size_t>(std::max<int64_t>(info.global_tmp_bytes, 8) / 8 + 1), 0);
  std::vector<int64_t> offsets(std::max<size_t>(info.stacks.size(), 1), 0), caps(offsets.size(), 0),
      deepest(offsets.size(), 0);
  std::vector<int64_t> returned(64, 0);
  // Sparse SNodes: their cells' activity, and a struct-for task's live cells.
  std::optional<detail::SparseHost> sparse;
  if (info.sparse) sparse.emplace(ck, m);
  std::vector<int64_t> task_cells;
  std::array<std::atomic<int32_t>, codegen::llvmgen::kNumFlags> flags{};
  // [0] the budget left for the next task (all ones: none), [1] the iterations its calls ran.
  std::array<uint64_t, 2> steps{};
  uint64_t steps_used = 0;
  void* words[codegen::llvmgen::kNumContextWords] = {static_cast<void*>(m.field_ptrs.data()),
                                                     static_cast<void*>(m.ndarray_ptrs.data()),
                                                     static_cast<void*>(m.ndarray_grad_ptrs.data()),
                                                     m.args.data(),
                                                     temps.data(),
                                                     global_tmps.data(),
                                                     offsets.data(),
                                                     caps.data(),
                                                     flags.data(),
                                                     returned.data(),
                                                     &host,
                                                     static_cast<void*>(m.ndarray_dual_ptrs.data()),
                                                     steps.data(),
                                                     deepest.data(),
                                                     sparse ? &*sparse : nullptr,
                                                     nullptr};
  void* const ctx = static_cast<void*>(words);  // the kernels take the context words as one pointer
  auto over_budget = [&](const codegen::llvmgen::TaskInfo& task, const ir::Stmt* loop) {
    return UserError(
        fmt::format("the launch exceeded its step budget in {}, task {}{}: max_steps={} loop iterations (the cpu "
                    "counts each parallel and nested loop's trip count and each `while` iteration)",
                    kernel_label(k), task.name, loop ? fmt::format(", at `{}`", ir::print_stmt(*loop, k)) : "",
                    max_steps),
        "look for a `while true` that never ends or a huge trip count; or raise the budget (--max-steps N, 0 for "
        "none)");
  };
  auto stack_text = [&](const ir::AdStackAllocaStmt& a) {
    return fmt::format("stack ${} (`{}`) in {}", a.id, ir::print_stmt(a, k), kernel_label(k));
  };
  for (size_t t = 0; t < info.tasks.size(); ++t) {
    const auto& task = info.tasks[t];
    TaskLaunch tl{task.name, 1, 0};
    int64_t stride = 0;
    for (const auto& st : task.stacks) {
      int64_t cap = launch_capacity(*st.alloc, ck, m, [&] { return stack_text(*st.alloc); });
      if (cap == 0) throw runtime::detail::unsized_stack_error(*st.alloc, k, kernel_label(k));
      caps[static_cast<size_t>(st.stack_id)] = cap;
      offsets[static_cast<size_t>(st.stack_id)] = stride;
      report.stack_capacity[st.alloc->id] = cap;
      stride += align_up(8 + 2 * cap * st.element_bytes, 16);
    }
    stride = align_up(stride, 64);
    tl.heap_stride_bytes = stride;
    if (stride > 0) impl_->reserve(stride * impl_->threads, fmt::format("{} task {}", kernel_label(k), task.name));
    char* heap = impl_->heap;
    steps = {max_steps == 0 ? ~uint64_t{0} : max_steps - std::min(max_steps, steps_used), 0};
    if (task.kind == TaskKind::serial) {
      code.code->tasks[t](ctx, 0, 1, heap);
    } else {
      int64_t n = 0;
      if (!task.cell_space.empty()) {
        task_cells = sparse->cells(task.cell_space);
        n = static_cast<int64_t>(task_cells.size());
        words[codegen::llvmgen::kCtxTaskCells] = task_cells.data();
      } else {
        n = code.code->counts[t](ctx);
      }
      tl.iterations = n;
      if (n > 0 && static_cast<uint64_t>(n) > steps[0]) throw over_budget(task, task.loop);
      if (n > 0 && code.one_thread) {
        code.code->tasks[t](ctx, 0, n, heap);
      } else if (n > 0) {
        // Few large chunks: about four per thread.
        int64_t grain = std::max<int64_t>(1, n / (int64_t{4} * impl_->threads));
        auto fn = code.code->tasks[t];
        impl_->arena->execute([&] {
          tbb::parallel_for(
              tbb::blocked_range<int64_t>(0, n, static_cast<size_t>(grain)),
              [&](const tbb::blocked_range<int64_t>& r) {
                int slot = tbb::this_task_arena::current_thread_index();
                fn(ctx, r.begin(), r.end(), heap + static_cast<int64_t>(slot) * stride);
              },
              tbb::simple_partitioner());
        });
      }
    }
    report.tasks.push_back(tl);
    for (const auto& st : task.stacks) report.stack_deepest[st.alloc->id] = deepest[static_cast<size_t>(st.stack_id)];
    steps_used += steps[1];
    if (sparse) sparse->throw_if_failed(task.name);
    if (int32_t l = flags[codegen::llvmgen::kFlagStepBudget].load(); l > 0)
      throw over_budget(task, info.loop_sites[static_cast<size_t>(l - 1)]);
    if (max_steps != 0 && steps_used > max_steps) throw over_budget(task, task.loop);
    if (const auto& v = host.violation) {
      std::string element = element_at(ck, m, v->cell);
      throw UserError(
          fmt::format("{}\n  in {}",
                      v->overwrite
                          ? runtime::detail::overwrite_violation(k, element, v->read, v->write, v->iteration)
                          : runtime::detail::global_access_violation(k, element, v->read, v->write, v->iteration),
                      kernel_label(k)),
          v->overwrite ? runtime::detail::kOverwriteRemedy : runtime::detail::kGlobalAccessRemedy);
    }
    host.access.end_loop();
    if (int32_t s = flags[codegen::llvmgen::kFlagStackOverflow].load(); s > 0) {
      const auto& st = info.stacks[static_cast<size_t>(s - 1)];
      const ir::AdStackAllocaStmt& a = *st.alloc;
      int64_t cap = caps[static_cast<size_t>(s - 1)];
      throw UserError(
          fmt::format("autodiff stack overflow: {}, task {}: a push exceeded its capacity of {} ({})", stack_text(a),
                      task.name, cap,
                      a.size ? fmt::format("max_size=0, size {} evaluated to {} at launch", ir::to_string(*a.size), cap)
                             : fmt::format("max_size={}", a.max_size)),
          "raise ad_stack_size, or leave the stack adaptive (max_size=0) and run determine_ad_stack_size; if the "
          "stack was sized by that pass, its bound is wrong");
    }
    if (int32_t s = flags[codegen::llvmgen::kFlagStackUnderflow].load(); s > 0) {
      const auto& a = *info.stacks[static_cast<size_t>(s - 1)].alloc;
      throw UserError(fmt::format("autodiff stack underflow: a pop, load top or acc adj on the empty {}, task {}",
                                  stack_text(a), task.name),
                      "every pop, load top and acc adj needs an earlier matching push after the stack alloc; check "
                      "the pairing of forward pushes and reverse pops");
    }
    if (int32_t e = flags[codegen::llvmgen::kFlagError].load(); e > 0) {
      const auto& site = info.errors[static_cast<size_t>(e - 1)];
      throw UserError(fmt::format("{} at `{}` in {}, task {}", site.message, ir::print_stmt(*site.stmt, k),
                                  kernel_label(k), task.name),
                      site.remedy);
    }
  }
  report.printed = std::move(host.printed);
  if (int32_t r = flags[codegen::llvmgen::kFlagReturn].load(); r > 0) {
    const auto& kinds = info.returns[static_cast<size_t>(r - 1)].kinds;
    for (size_t i = 0; i < kinds.size(); ++i) report.returned.push_back(detail::load_value(&returned[i], kinds[i]));
  }
  return report;
}

RunResult run_kernel(const ir::Kernel& k, State& state, const RunOptions& options, const CpuOptions& cpu,
                     CpuRuntime* runtime) {
  if (options.shuffle || options.trace_decisions)
    throw Refusal(
        "the cpu backend runs parallel loops in parallel: shuffling and decision tracing are interpreter "
        "options",
        "use --backend=interp for --shuffle and decision traces");
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  RunResult result;
  auto start = Clock::now();
  ElementArgsBound elements(k, state);  // a scalarized kernel reads its caller's tensor arguments by element
  // f64 mode: the kernel with every f32 widened to f64 (the buffers are converted by pack).
  std::unique_ptr<ir::Kernel> wide;
  if (options.f64) {
    wide = ir::widen_f32_to_f64(k);
    if (!wide)
      throw Refusal(
          "f64 mode on the cpu: the kernel reinterprets the bits of an f32 value (`cast_bits`), which "
          "has no f64 meaning",
          "run it in f64 mode on the interpreter (--backend=interp), or without --f64");
  }
  CpuOptions compile = cpu;
  compile.check_global_access = compile.check_global_access || options.check_global_access;
  if (options.cpu_part_statements >= 0) compile.part_statements = static_cast<size_t>(options.cpu_part_statements);
  CpuKernel ck(wide ? *wide : k, state, compile);
  result.times.compile_ms = ms_since(start);
  std::unique_ptr<CpuRuntime> own;
  if (!runtime) runtime = (own = std::make_unique<CpuRuntime>()).get();
  auto packing = Clock::now();
  DeviceMemory m = pack(ck, state);
  result.times.transfer_ms = ms_since(packing);
  LaunchReport report;
  auto launching = Clock::now();
  try {
    report = runtime->launch(ck, m, options.max_steps);
  } catch (const UserError&) {
    unpack(ck, m, state);
    throw;
  }
  result.times.kernel_ms = ms_since(launching);
  auto unpacking = Clock::now();
  unpack(ck, m, state);
  result.times.transfer_ms += ms_since(unpacking);
  result.printed = std::move(report.printed);
  result.returned = std::move(report.returned);
  result.stack_capacity = std::move(report.stack_capacity);
  result.max_stack_depth = std::move(report.stack_deepest);
  result.times.total_ms = ms_since(start);
  return result;
}

}  // namespace pb::runtime::cpu
