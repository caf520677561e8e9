# lit configuration for QLA's FileCheck tests. Run through the generated
# build/tests/lit/lit.site.cfg.py (ctest -R lit, or `lit -v build/tests/lit`), which sets the tool paths.
import os
import re

import lit.formats

config.name = "QLA"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.qla_obj_root, "tests", "lit")

# Tools by absolute path, so that a stray qla-opt or FileCheck on PATH is never used.
# A tool name is replaced only where it stands alone (not inside a flag such as -qla-opt-x).
def tool(name, path):
    if not os.path.exists(path):
        lit_config.fatal("%s not found at %s (build it first)" % (name, path))
    config.substitutions.append((r"(?<![\w/.-])" + re.escape(name) + r"(?![\w.-])", path))

tool("qla-opt", config.qla_opt)
tool("FileCheck", os.path.join(config.llvm_tools_dir, "FileCheck"))
tool("not", os.path.join(config.llvm_tools_dir, "not"))
tool("count", os.path.join(config.llvm_tools_dir, "count"))
