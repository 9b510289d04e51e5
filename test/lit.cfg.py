# lit configuration for tessel's tool tests.
import os

import lit.formats

config.name = "tessel"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test", ".hlo"]
config.excludes = ["Inputs", "lib", "install", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessel_obj_root, "test")

# tessel's tools first, then FileCheck, not, count, split-file from LLVM 19.
path = os.path.pathsep.join(
    [config.tessel_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", os.environ["PATH"])]
)
config.environment["PATH"] = path
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
