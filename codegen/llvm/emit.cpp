// Module-level driver: plans the tasks, emits one function per task, verifies, optimizes.
#include "codegen/llvm/emit.h"

#include <fmt/format.h>
#include <llvm/IR/Verifier.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>

#include <mutex>

#include "codegen/llvm/emitter.h"
#include "codegen/llvm/module_impl.h"
#include "codegen/llvm/task_split.h"
#include "ir/assert.h"
#include "ir/diagnostic.h"
#include "ir/printer.h"
#include "ir/snode.h"
#include "ir/type_uses.h"
#include "ir/verifier.h"
#include "ir/visitor.h"

namespace pb::codegen::llvmgen {

EmittedModule::EmittedModule() = default;
EmittedModule::EmittedModule(EmittedModule&&) noexcept = default;
EmittedModule& EmittedModule::operator=(EmittedModule&&) noexcept = default;
EmittedModule::~EmittedModule() = default;

namespace {

int64_t element_bytes(ir::ScalarKind k) { return k == ir::ScalarKind::u1 ? 1 : ir::bit_width(k) / 8; }

std::string task_name(const detail::TaskPlan& t, size_t i) {
  const char* kind = t.kind == TaskKind::serial ? "serial" : t.kind == TaskKind::range_for ? "range_for" : "struct_for";
  return fmt::format("task{}_{}", i, kind);
}

// Sparse SNodes, SNode ops, or lookups of nested spaces (whose cells the host numbers).
bool needs_sparse_host(const ir::Kernel& k) {
  if (ir::first_sparse_use(k)) return true;
  bool needs = false;
  ir::walk(k.root(), [&](const ir::Stmt& s) {
    if (ir::isa<ir::SNodeOpStmt>(&s) || ir::isa<ir::SNodePtrStmt>(&s)) needs = true;
    if (const auto* l = ir::dyn_cast<ir::SNodeLookupStmt>(&s))
      if (const ir::IndexSpace* sp = k.find_space(l->snode); sp && sp->declared && !sp->parent.empty()) needs = true;
  });
  return needs;
}

}  // namespace

bool compiles_type(ir::DataType t) { return t.quant == 0; }

EmittedModule emit(const ir::Kernel& kernel, const EmitShapes& shapes, const EmitOptions& options) {
  if (auto errors = ir::verify(kernel); !errors.empty())
    throw UserError("the kernel does not verify, so it cannot be compiled:\n  " + errors.front().format(),
                    "fix the IR (run the verifier on it) before compiling it");
  if (auto use = ir::first_type_use_outside(kernel, [](ir::DataType t) { return !t.is_tensor(); }))
    throw UserError(fmt::format("the LLVM CPU backend compiles scalar kernels; this one uses a tensor type: {}", *use),
                    "run the scalarize pass first (--passes=scalarize), which turns tensors into scalars");
  if (auto use = ir::first_type_use_outside(kernel, compiles_type))
    throw UserError(fmt::format("the LLVM CPU backend does not compile quant types yet: {}", *use),
                    "run the kernel on the interpreter (--backend=interp), which runs quant integers");
  detail::KernelPlan plan = detail::plan_tasks(kernel);
  EmittedModule out;
  out.module = std::make_unique<ModuleHandle>();
  out.module->context = std::make_unique<llvm::LLVMContext>();
  out.module->module =
      std::make_unique<llvm::Module>(kernel.name.empty() ? "kernel" : kernel.name, *out.module->context);
  KernelInfo& info = out.info;
  info.temps_words = plan.temps_words;
  info.sparse = needs_sparse_host(kernel);

  detail::ModuleState ms{kernel, shapes, options, plan, info, *out.module->context, *out.module->module, {}};
  ir::walk(kernel.root(), [&](ir::Stmt& s) {
    auto* a = ir::dyn_cast<ir::AdStackAllocaStmt>(&s);
    if (!a) return;
    int id = static_cast<int>(info.stacks.size());
    ms.stack_ids[a] = id;
    if (a->type.scalar == ir::ScalarKind::unknown)
      throw UserError(fmt::format("stack ${} has no element type", a->id), "give the stack alloc a type");
    info.stacks.push_back({id, a, a->type.scalar, element_bytes(a->type.scalar)});
  });
  for (size_t i = 0; i < plan.tasks.size(); ++i) {
    const detail::TaskPlan& t = plan.tasks[i];
    TaskInfo ti;
    ti.name = task_name(t, i);
    ti.kind = t.kind;
    ti.loop = t.loop;
    if (t.kind == TaskKind::struct_for) {
      const auto* sf = ir::dyn_cast<ir::StructForStmt>(t.loop);
      std::string space = sf ? sf->space : ir::dyn_cast<ir::OffloadedStmt>(t.loop)->snode;
      if (ir::in_sparse_tree(kernel, space)) ti.cell_space = space;
    }
    auto collect = [&](const ir::Stmt& root) {
      auto add = [&](const ir::Stmt& s) {
        if (const auto* a = ir::dyn_cast<ir::AdStackAllocaStmt>(&s))
          ti.stacks.push_back(info.stacks[static_cast<size_t>(ms.stack_ids.at(a))]);
      };
      add(root);
      for (const ir::Block* b : root.blocks())
        if (b) ir::walk(*b, [&](ir::Stmt& s) { add(s); });
    };
    if (t.loop) collect(*t.loop);
    for (const ir::Stmt* r : t.roots) collect(*r);
    info.tasks.push_back(std::move(ti));
  }
  for (size_t i = 0; i < plan.tasks.size(); ++i) detail::TaskEmitter(ms, plan.tasks[i], i).run();

  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*out.module->module, &os))
    throw InternalError("the LLVM backend emitted a module that fails LLVM's verifier: " + problems);
  return out;
}

// LLVM's target registration is not thread-safe: two threads registering at once register the
// host target twice ("Cannot choose between targets"), and every later lookup fails.
void initialize_native_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

static std::unique_ptr<llvm::TargetMachine> host_target_machine() {
  initialize_native_target();
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  PB_ASSERT(target, "no LLVM target for the host: " + error);
  llvm::SubtargetFeatures features;
  for (const auto& [name, on] : llvm::sys::getHostCPUFeatures()) features.AddFeature(name, on);
  return std::unique_ptr<llvm::TargetMachine>(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features.getString(), llvm::TargetOptions(), std::nullopt));
}

void optimize(EmittedModule& m, int opt_level) {
  if (opt_level < 0 || opt_level > 3)
    throw UserError(fmt::format("optimization level {} is out of range", opt_level), "give 0, 1, 2 or 3");
  std::unique_ptr<llvm::TargetMachine> tm = host_target_machine();
  m.module->module->setTargetTriple(tm->getTargetTriple().str());
  m.module->module->setDataLayout(tm->createDataLayout());
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level == 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      opt_level == 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(*m.module->module, mam);
}

std::string module_text(const EmittedModule& m) {
  std::string text;
  llvm::raw_string_ostream os(text);
  m.module->module->print(os, nullptr);
  return text;
}

}  // namespace pb::codegen::llvmgen
