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
# A stand-in for the CUDA driver (unittests/Codegen/FakeCudaDriver.cpp): the
# GPU path of `tessel run` without a GPU.
config.substitutions.append(
    ("%fakecuda", os.path.join(config.tessel_obj_root, "unittests", "libTesselFakeCudaDriver.so"))
)

# CUDA's PTX assembler, to check the PTX of --target=nvptx (the `ptxas`
# feature, %ptxas): found through $CUDA_HOME, $CUDA_PATH, PATH or
# /usr/local/cuda. Without it the PTX is still checked by FileCheck, not
# assembled.
def find_ptxas():
    import shutil

    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")]
    for root in [r for r in roots if r]:
        candidate = os.path.join(root, "bin", "ptxas")
        if os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which("ptxas")
    if on_path:
        return on_path
    candidate = "/usr/local/cuda/bin/ptxas"
    return candidate if os.access(candidate, os.X_OK) else None


ptxas = find_ptxas()
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
else:
    lit_config.note("ptxas not found (set CUDA_HOME): PTX is not assembled")

# tessel finds libdevice (and ptxas) through the same variables: pass them on.
for variable in ("CUDA_HOME", "CUDA_PATH", "TESSEL_LIBDEVICE"):
    if os.environ.get(variable):
        config.environment[variable] = os.environ[variable]
