#include "codegen/spirv/optimizer_pipeline.h"

#include <algorithm>
#include <array>

namespace pb::codegen::spirv {
namespace {

using Token = spvtools::Optimizer::PassToken;

Token make_wrap_op_kill() { return spvtools::CreateWrapOpKillPass(); }
Token make_dead_branch_elim() { return spvtools::CreateDeadBranchElimPass(); }
Token make_merge_return() { return spvtools::CreateMergeReturnPass(); }
Token make_inline_exhaustive() { return spvtools::CreateInlineExhaustivePass(); }
Token make_eliminate_dead_functions() { return spvtools::CreateEliminateDeadFunctionsPass(); }
Token make_aggressive_dce() { return spvtools::CreateAggressiveDCEPass(); }
Token make_private_to_local() { return spvtools::CreatePrivateToLocalPass(); }
Token make_local_single_block() { return spvtools::CreateLocalSingleBlockLoadStoreElimPass(); }
Token make_local_single_store() { return spvtools::CreateLocalSingleStoreElimPass(); }
Token make_scalar_replacement() { return spvtools::CreateScalarReplacementPass(); }  // size limit 100
Token make_local_access_chain_convert() { return spvtools::CreateLocalAccessChainConvertPass(); }
Token make_local_multi_store() { return spvtools::CreateLocalMultiStoreElimPass(); }
Token make_ccp() { return spvtools::CreateCCPPass(); }
Token make_loop_unroll_full() { return spvtools::CreateLoopUnrollPass(/*fully_unroll=*/true); }
Token make_redundancy_elimination() { return spvtools::CreateRedundancyEliminationPass(); }
Token make_combine_access_chains() { return spvtools::CreateCombineAccessChainsPass(); }
Token make_simplification() { return spvtools::CreateSimplificationPass(); }
Token make_ssa_rewrite() { return spvtools::CreateSSARewritePass(); }
Token make_vector_dce() { return spvtools::CreateVectorDCEPass(); }
Token make_dead_insert_elim() { return spvtools::CreateDeadInsertElimPass(); }
Token make_if_conversion() { return spvtools::CreateIfConversionPass(); }
Token make_copy_propagate_arrays() { return spvtools::CreateCopyPropagateArraysPass(); }
Token make_reduce_load_size() { return spvtools::CreateReduceLoadSizePass(); }
Token make_block_merge() { return spvtools::CreateBlockMergePass(); }
Token make_compact_ids() { return spvtools::CreateCompactIdsPass(); }

constexpr OptimizerStep kWrapOpKill{"WrapOpKill", "--wrap-opkill", make_wrap_op_kill};
constexpr OptimizerStep kDeadBranchElim{"DeadBranchElim", "--eliminate-dead-branches", make_dead_branch_elim};
constexpr OptimizerStep kMergeReturn{"MergeReturn", "--merge-return", make_merge_return};
constexpr OptimizerStep kInlineExhaustive{"InlineExhaustive", "--inline-entry-points-exhaustive",
                                          make_inline_exhaustive};
constexpr OptimizerStep kEliminateDeadFunctions{"EliminateDeadFunctions", "--eliminate-dead-functions",
                                                make_eliminate_dead_functions};
constexpr OptimizerStep kAggressiveDCE{"AggressiveDCE", "--eliminate-dead-code-aggressive", make_aggressive_dce};
constexpr OptimizerStep kPrivateToLocal{"PrivateToLocal", "--private-to-local", make_private_to_local};
constexpr OptimizerStep kLocalSingleBlock{"LocalSingleBlockLoadStoreElim", "--eliminate-local-single-block",
                                          make_local_single_block};
constexpr OptimizerStep kLocalSingleStore{"LocalSingleStoreElim", "--eliminate-local-single-store",
                                          make_local_single_store};
constexpr OptimizerStep kScalarReplacement{"ScalarReplacement", "--scalar-replacement=100", make_scalar_replacement};
constexpr OptimizerStep kLocalAccessChainConvert{"LocalAccessChainConvert", "--convert-local-access-chains",
                                                 make_local_access_chain_convert};
constexpr OptimizerStep kLocalMultiStore{"LocalMultiStoreElim", "--eliminate-local-multi-store",
                                         make_local_multi_store};
constexpr OptimizerStep kCCP{"CCP", "--ccp", make_ccp};
constexpr OptimizerStep kLoopUnroll{"LoopUnroll", "--loop-unroll", make_loop_unroll_full};
constexpr OptimizerStep kRedundancyElimination{"RedundancyElimination", "--redundancy-elimination",
                                               make_redundancy_elimination};
constexpr OptimizerStep kCombineAccessChains{"CombineAccessChains", "--combine-access-chains",
                                             make_combine_access_chains};
constexpr OptimizerStep kSimplification{"Simplification", "--simplify-instructions", make_simplification};
constexpr OptimizerStep kSSARewrite{"SSARewrite", "--ssa-rewrite", make_ssa_rewrite};
constexpr OptimizerStep kVectorDCE{"VectorDCE", "--vector-dce", make_vector_dce};
constexpr OptimizerStep kDeadInsertElim{"DeadInsertElim", "--eliminate-dead-inserts", make_dead_insert_elim};
constexpr OptimizerStep kIfConversion{"IfConversion", "--if-conversion", make_if_conversion};
constexpr OptimizerStep kCopyPropagateArrays{"CopyPropagateArrays", "--copy-propagate-arrays",
                                             make_copy_propagate_arrays};
constexpr OptimizerStep kReduceLoadSize{"ReduceLoadSize", "--reduce-load-size", make_reduce_load_size};
constexpr OptimizerStep kBlockMerge{"BlockMerge", "--merge-blocks", make_block_merge};
constexpr OptimizerStep kCompactIds{"CompactIds", "--compact-ids", make_compact_ids};

// The interleaved AggressiveDCE steps keep dead ids from piling up while SSA is built.
constexpr std::array kPipeline{
    kWrapOpKill,
    kDeadBranchElim,
    kMergeReturn,
    kInlineExhaustive,
    kEliminateDeadFunctions,
    kAggressiveDCE,
    kPrivateToLocal,
    kLocalSingleBlock,
    kLocalSingleStore,
    kAggressiveDCE,
    kScalarReplacement,
    kLocalAccessChainConvert,
    kLocalSingleBlock,
    kLocalSingleStore,
    kAggressiveDCE,
    kLocalMultiStore,
    kAggressiveDCE,
    kCCP,
    kAggressiveDCE,
    kLoopUnroll,
    kDeadBranchElim,
    kRedundancyElimination,
    kCombineAccessChains,
    kSimplification,
    kSSARewrite,
    kAggressiveDCE,
    kVectorDCE,
    kDeadInsertElim,
    kIfConversion,
    kCopyPropagateArrays,
    kReduceLoadSize,
    kAggressiveDCE,
    kBlockMerge,
    kCompactIds,
};
static_assert(kPipeline.size() == 34);

bool is_aggressive_dce(const OptimizerStep& step) { return step.name == kAggressiveDCE.name; }

}  // namespace

std::vector<OptimizerStep> optimizer_steps(bool intermediate_dce, bool compact_ids) {
  const auto last_dce = std::find_if(kPipeline.rbegin(), kPipeline.rend(), is_aggressive_dce).base() - 1;
  std::vector<OptimizerStep> steps;
  for (auto it = kPipeline.begin(); it != kPipeline.end(); ++it) {
    if (!intermediate_dce && is_aggressive_dce(*it) && it != last_dce) continue;
    if (!compact_ids && it->name == kCompactIds.name) continue;
    steps.push_back(*it);
  }
  return steps;
}

}  // namespace pb::codegen::spirv
