# lit configuration of passbench's FileCheck tests: IR text in, IR or SPIR-V text out, checked with
# FileCheck patterns (docs/testing.md). CMake writes lit.site.cfg.py into the build tree with the
# paths of the tools; run `lit.py -sv build/tests/passes` or `ctest -R lit`.
import os
import sys

import lit.formats

config.name = "passbench"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".chi"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.passbench_build_dir, "tests")
# Only these folders hold lit tests; the others hold gtest sources, benchmarks and fuzz inputs.
config.excludes = ["bench", "fuzz", "ir", "runtime", "workbench", "lit"]

# The tools the RUN lines name are found on PATH, in this order: this build's passbench, LLVM's
# FileCheck and not, spirv-dis, then the PATH lit was started with.
tool_dirs = [os.path.dirname(t) for t in (config.passbench_path, config.filecheck_path, config.not_path,
                                          config.spirv_dis_path)]
config.environment["PATH"] = os.pathsep.join(tool_dirs + [config.environment.get("PATH", os.environ.get("PATH", ""))])

# %per-dump CMD...: runs CMD once per kernel dump of the test file (`--dump=N` appended), one after
# the other, so that one file holds one case per kernel (MLIR's -split-input-file).
config.substitutions.append(
    ("%per-dump", "%s %s" % (sys.executable, os.path.join(config.test_source_root, "lit", "per_dump.py")))
)
