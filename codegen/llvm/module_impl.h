// Internal to codegen/llvm and runtime/cpu: the LLVM types behind EmittedModule.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <memory>

#include "codegen/llvm/emit.h"

namespace pb::codegen::llvmgen {

struct ModuleHandle {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
};

}  // namespace pb::codegen::llvmgen
