//===- GpuExecutable.cpp - Kernels as PTX, run through the CUDA driver ----===//
//
// Backend::Nvptx's Executable. The CUDA driver (libcuda.so.1, or the file
// $TESSEL_CUDA_DRIVER names) is opened with dlopen when a module is
// compiled: tessel has no link-time dependency on CUDA, and without a
// driver compile() fails with "no CUDA driver found". The PTX is written for
// the device's compute capability unless the options name one (the newest
// LLVM knows, sm_90, for a newer GPU: its driver compiles PTX forward).
//
// A run allocates a device buffer per buffer of the plan, copies the
// inputs in, launches every kernel with its emitter's launch (num_blocks
// blocks of num_threads threads along x; shared tiles are static),
// synchronizes, copies the outputs out and frees the buffers. The kernels
// run as the plan's steps say (ModulePlan.h): copies between buffers are
// device-to-device copies in the same stream, and a while's pred or a
// conditional's pred or index is copied to the host after the kernels
// that compute it (a synchronous copy, which waits for them) and read
// there, as the CPU's executable does.
//
//===----------------------------------------------------------------------===//
#include "ModulePlan.h"
#include "NvptxBackend.h"
#include "Pipeline.h"
#include "tessel/Codegen/Compiler.h"
#include "tessel/Codegen/Nvptx.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>

#include <dlfcn.h>

namespace tessel {
namespace {

// The few types and constants of the driver API tessel uses (cuda.h is not
// needed to build).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
struct CUevent_st;
using CUevent = CUevent_st *;
constexpr int kComputeCapabilityMajor = 75; // CU_DEVICE_ATTRIBUTE_...
constexpr int kComputeCapabilityMinor = 76;
constexpr int kMemoryClockRate = 36;      // kHz
constexpr int kGlobalMemoryBusWidth = 37; // bits
constexpr int kJitErrorLogBuffer = 5;     // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogBufferSize = 6;

/// The driver's entry points, looked up once.
struct CudaDriver {
  CUresult (*init)(unsigned);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*ctxSynchronize)();
  CUresult (*moduleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                               void **);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memFree)(CUdeviceptr);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*moduleUnload)(CUmodule);
  CUresult (*memcpyDtoD)(CUdeviceptr, CUdeviceptr, size_t);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventDestroy)(CUevent);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*eventElapsedTime)(float *, CUevent, CUevent);
  CUcontext context = nullptr;
  int smVersion = 0;
  /// Bytes per second of the device memory at its peak (0: unknown).
  double peakBandwidth = 0;

  std::string message(CUresult result) const {
    const char *text = nullptr;
    if (getErrorString)
      getErrorString(result, &text);
    return text ? text : "CUDA error " + std::to_string(result);
  }
};

template <typename F> bool lookup(void *library, const char *name, F &f) {
  f = reinterpret_cast<F>(dlsym(library, name));
  return f != nullptr;
}

/// Opens the driver and the first device's primary context, once per
/// process (the library stays open).
Expected<const CudaDriver *> openDriver() {
  static std::mutex mutex;
  static CudaDriver *driver = nullptr;
  static std::string failure;
  std::lock_guard<std::mutex> lock(mutex);
  if (driver)
    return driver;
  if (!failure.empty())
    return Error(failure);
  const char *env = std::getenv("TESSEL_CUDA_DRIVER");
  std::string name = env && *env ? env : "libcuda.so.1";
  void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    failure = "no CUDA driver found (" + name + ": " +
              (why ? why : "cannot be opened") +
              "); --target=nvptx --emit=ptx compiles without one";
    return Error(failure);
  }
  auto d = std::make_unique<CudaDriver>();
  const char *missing = nullptr;
  auto need = [&](const char *symbol, auto &f) {
    if (!missing && !lookup(library, symbol, f))
      missing = symbol;
  };
  need("cuInit", d->init);
  need("cuDeviceGet", d->deviceGet);
  need("cuDeviceGetAttribute", d->deviceGetAttribute);
  need("cuDevicePrimaryCtxRetain", d->primaryCtxRetain);
  need("cuCtxSetCurrent", d->ctxSetCurrent);
  need("cuCtxSynchronize", d->ctxSynchronize);
  need("cuModuleLoadDataEx", d->moduleLoadDataEx);
  need("cuModuleGetFunction", d->moduleGetFunction);
  need("cuMemAlloc_v2", d->memAlloc);
  need("cuMemFree_v2", d->memFree);
  need("cuMemcpyHtoD_v2", d->memcpyHtoD);
  need("cuMemcpyDtoH_v2", d->memcpyDtoH);
  need("cuLaunchKernel", d->launchKernel);
  need("cuGetErrorString", d->getErrorString);
  need("cuModuleUnload", d->moduleUnload);
  need("cuMemcpyDtoD_v2", d->memcpyDtoD);
  need("cuEventCreate", d->eventCreate);
  need("cuEventDestroy_v2", d->eventDestroy);
  need("cuEventRecord", d->eventRecord);
  need("cuEventSynchronize", d->eventSynchronize);
  need("cuEventElapsedTime", d->eventElapsedTime);
  if (missing) {
    failure = "the CUDA driver " + name + " has no " + missing;
    return Error(failure);
  }
  CUdevice device = 0;
  int major = 0, minor = 0;
  CUresult r = d->init(0);
  if (!r)
    r = d->deviceGet(&device, 0);
  if (!r)
    r = d->deviceGetAttribute(&major, kComputeCapabilityMajor, device);
  if (!r)
    r = d->deviceGetAttribute(&minor, kComputeCapabilityMinor, device);
  if (!r)
    r = d->primaryCtxRetain(&d->context, device);
  if (r) {
    failure = "the CUDA driver found no usable GPU: " + d->message(r);
    return Error(failure);
  }
  d->smVersion = major * 10 + minor;
  int clockKhz = 0, busBits = 0;
  if (!d->deviceGetAttribute(&clockKhz, kMemoryClockRate, device) &&
      !d->deviceGetAttribute(&busBits, kGlobalMemoryBusWidth, device))
    // Double data rate: two transfers per clock.
    d->peakBandwidth = 2.0 * clockKhz * 1e3 * busBits / 8;
  driver = d.release();
  return driver;
}

struct DeviceBuffers;

struct GpuKernel {
  std::string name;
  int64_t numThreads = 1;
  int64_t numBlocks = 1;
  CUfunction function = nullptr;
};

class GpuExecutable : public PlannedExecutable {
public:
  ~GpuExecutable() override {
    if (module && driver->ctxSetCurrent(driver->context) == 0)
      driver->moduleUnload(module);
  }
  Status runPhysical(const std::vector<const void *> &inputs,
                     const std::vector<void *> &outputs,
                     const RunOptions &options) override;
  Expected<DeviceTiming> timeOnDevice(const std::vector<const void *> &inputs,
                                      int repeat) override;

  Status prepare(DeviceBuffers &buffers,
                 const std::vector<const void *> &inputs);
  /// Runs the plan's steps (runSteps): every kernel, copy and loop.
  Status launch(const DeviceBuffers &buffers);
  /// Launches kernels [first, last) in order (asynchronously).
  Status launchKernels(const DeviceBuffers &buffers, size_t first, size_t last);

  const CudaDriver *driver = nullptr;
  CUmodule module = nullptr;
  std::vector<GpuKernel> kernels;
};

/// Device buffers, freed when it goes out of scope.
struct DeviceBuffers {
  const CudaDriver &driver;
  std::vector<CUdeviceptr> pointers;
  ~DeviceBuffers() {
    for (CUdeviceptr p : pointers)
      if (p)
        driver.memFree(p);
  }
  Status allocate(size_t index, size_t bytes) {
    if (CUresult r =
            driver.memAlloc(&pointers[index], std::max<size_t>(bytes, 1)))
      return Error("CUDA: cannot allocate " + std::to_string(bytes) +
                   " bytes on the GPU: " + driver.message(r));
    return {};
  }
};

/// CUDA events, destroyed when it goes out of scope.
struct Events {
  const CudaDriver &driver;
  CUevent start = nullptr, end = nullptr;
  ~Events() {
    if (start)
      driver.eventDestroy(start);
    if (end)
      driver.eventDestroy(end);
  }
};

/// The plan's buffers on the device, the inputs copied in.
Status GpuExecutable::prepare(DeviceBuffers &buffers,
                              const std::vector<const void *> &inputs) {
  if (inputs.size() != plan.inputs.size())
    return Error("expected " + std::to_string(plan.inputs.size()) + " inputs");
  const CudaDriver &d = *driver;
  if (CUresult r = d.ctxSetCurrent(d.context))
    return Error("CUDA: " + d.message(r));
  buffers.pointers.assign(plan.buffers.size(), 0);
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    Status allocated = buffers.allocate(b, bufferBytes(plan.buffers[b]));
    if (!allocated)
      return allocated;
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    int b = plan.inputs[i];
    if (bufferBytes(plan.buffers[b]) == 0)
      continue;
    if (CUresult r = d.memcpyHtoD(buffers.pointers[b], inputs[i],
                                  bufferBytes(plan.buffers[b])))
      return Error("CUDA: copy of input " + std::to_string(i) +
                   " to the GPU: " + d.message(r));
  }
  return {};
}

Status GpuExecutable::launch(const DeviceBuffers &buffers) {
  const CudaDriver &d = *driver;
  StepActions actions;
  actions.kernels = [&](size_t first, size_t last) {
    return launchKernels(buffers, first, last);
  };
  actions.copy = [&](int from, int to) -> Status {
    int64_t bytes = bufferBytes(plan.buffers[to]);
    if (bytes > 0)
      if (CUresult r =
              d.memcpyDtoD(buffers.pointers[to], buffers.pointers[from], bytes))
        return Error("CUDA: copy of buffer " + std::to_string(from) +
                     " into buffer " + std::to_string(to) + ": " +
                     d.message(r));
    return {};
  };
  // A synchronous copy to the host: it waits for the kernels before it in
  // the stream.
  actions.readSelector = [&](const PlanStep &step) -> Expected<int64_t> {
    bool pred = plan.buffers[step.selector].elementType == PrimitiveType::Pred;
    unsigned char bytes[4] = {0, 0, 0, 0};
    if (CUresult r = d.memcpyDtoH(bytes, buffers.pointers[step.selector],
                                  pred ? 1 : sizeof(int32_t)))
      return Error("CUDA: reading the " +
                   std::string(pred ? "pred" : "branch index") + " of " +
                   step.instruction + ": " + d.message(r));
    if (pred)
      return bytes[0];
    int32_t index;
    std::memcpy(&index, bytes, sizeof(index));
    return index;
  };
  return runSteps(plan, plan.steps, actions);
}

Status GpuExecutable::launchKernels(const DeviceBuffers &buffers, size_t first,
                                    size_t last) {
  const CudaDriver &d = *driver;
  for (size_t k = first; k < last; ++k) {
    std::vector<CUdeviceptr> args;
    for (int b : plan.kernels[k].inputs)
      args.push_back(buffers.pointers[b]);
    for (int b : plan.kernels[k].outputs)
      args.push_back(buffers.pointers[b]);
    for (int b : plan.kernels[k].scratch)
      args.push_back(buffers.pointers[b]);
    std::vector<void *> params;
    for (CUdeviceptr &p : args)
      params.push_back(&p);
    const GpuKernel &kernel = kernels[k];
    // An in-place dynamic-update-slice or scatter updates a copy of its
    // operand.
    const PlannedKernel &planned = plan.kernels[k];
    for (size_t slot = 0; slot < planned.inPlace.size(); ++slot) {
      int from = planned.inPlace[slot].copyBefore;
      int64_t copyBytes = from >= 0 ? bufferBytes(plan.buffers[from]) : 0;
      if (copyBytes > 0)
        if (CUresult r = d.memcpyDtoD(buffers.pointers[planned.outputs[slot]],
                                      buffers.pointers[from], copyBytes))
          return Error("CUDA: copy before " + kernel.name + ": " +
                       d.message(r));
    }
    if (CUresult r = d.launchKernel(kernel.function,
                                    static_cast<unsigned>(kernel.numBlocks), 1,
                                    1, static_cast<unsigned>(kernel.numThreads),
                                    1, 1, 0, nullptr, params.data(), nullptr))
      return Error("CUDA: launch of " + kernel.name + ": " + d.message(r));
  }
  return {};
}

Status GpuExecutable::runPhysical(const std::vector<const void *> &inputs,
                                  const std::vector<void *> &outputs,
                                  const RunOptions &) {
  if (outputs.size() != plan.outputs.size())
    return Error("expected " + std::to_string(plan.outputs.size()) +
                 " outputs");
  const CudaDriver &d = *driver;
  DeviceBuffers buffers{d, {}};
  Status ready = prepare(buffers, inputs);
  if (!ready)
    return ready;
  Status launched = launch(buffers);
  if (!launched)
    return launched;
  if (CUresult r = d.ctxSynchronize())
    return Error("CUDA: the kernels failed: " + d.message(r));
  for (size_t i = 0; i < outputs.size(); ++i) {
    int b = plan.outputs[i];
    if (bufferBytes(plan.buffers[b]) == 0)
      continue;
    if (CUresult r = d.memcpyDtoH(outputs[i], buffers.pointers[b],
                                  bufferBytes(plan.buffers[b])))
      return Error("CUDA: copy of output " + std::to_string(i) +
                   " from the GPU: " + d.message(r));
  }
  return {};
}

Expected<DeviceTiming>
GpuExecutable::timeOnDevice(const std::vector<const void *> &inputs,
                            int repeat) {
  const CudaDriver &d = *driver;
  DeviceBuffers buffers{d, {}};
  Status ready = prepare(buffers, inputs);
  if (!ready)
    return ready.error();
  DeviceTiming timing;
  timing.peakBytesPerSecond = d.peakBandwidth;
  for (int b : plan.inputs)
    timing.bytes += bufferBytes(plan.buffers[b]);
  for (int b : plan.outputs)
    timing.bytes += bufferBytes(plan.buffers[b]);
  // Two scratch buffers for the copy that reads and writes as many bytes.
  size_t half = std::max<int64_t>(timing.bytes / 2, 1);
  DeviceBuffers scratch{d, std::vector<CUdeviceptr>(2, 0)};
  for (size_t i = 0; i < 2; ++i) {
    Status allocated = scratch.allocate(i, half);
    if (!allocated)
      return allocated.error();
  }
  Events events{d};
  if (CUresult r = d.eventCreate(&events.start, 0))
    return Error("CUDA: " + d.message(r));
  if (CUresult r = d.eventCreate(&events.end, 0))
    return Error("CUDA: " + d.message(r));
  auto timed = [&](const std::function<Status()> &work) -> Expected<double> {
    if (CUresult r = d.eventRecord(events.start, nullptr))
      return Error("CUDA: " + d.message(r));
    Status done = work();
    if (!done)
      return done.error();
    if (CUresult r = d.eventRecord(events.end, nullptr))
      return Error("CUDA: " + d.message(r));
    if (CUresult r = d.eventSynchronize(events.end))
      return Error("CUDA: the kernels failed: " + d.message(r));
    float ms = 0;
    if (CUresult r = d.eventElapsedTime(&ms, events.start, events.end))
      return Error("CUDA: " + d.message(r));
    return ms / 1e3;
  };
  auto kernels = [&]() { return launch(buffers); };
  auto copy = [&]() -> Status {
    if (CUresult r =
            d.memcpyDtoD(scratch.pointers[1], scratch.pointers[0], half))
      return Error("CUDA: device copy: " + d.message(r));
    return {};
  };
  // One run first: the first launch loads the module onto the device.
  for (int r = -1; r < repeat; ++r) {
    Expected<double> k = timed(kernels);
    if (!k)
      return k.error();
    Expected<double> c = timed(copy);
    if (!c)
      return c.error();
    if (r >= 0) {
      timing.kernelSeconds.push_back(*k);
      timing.copySeconds.push_back(*c);
    }
  }
  return timing;
}

} // namespace

Expected<std::shared_ptr<Executable>>
compileGpuExecutable(const HloModule &module, const CompileOptions &options) {
  auto start = std::chrono::steady_clock::now();
  Expected<const CudaDriver *> driver = openDriver();
  if (!driver)
    return driver.error();
  CompileOptions gpuOptions = options;
  if (gpuOptions.smVersion <= 0) {
    gpuOptions.smVersion = std::min((*driver)->smVersion, 90);
    while (gpuOptions.smVersion > 50 && !isSupportedSm(gpuOptions.smVersion))
      --gpuOptions.smVersion;
  }
  auto exe = std::make_shared<GpuExecutable>();
  exe->driver = *driver;
  // A GPU runs one kernel at a time: the softmax's exp is computed in each
  // kernel that reads it rather than written to memory and read back.
  Expected<ModulePlan> plan = planModule(module, /*rowChunks=*/false);
  if (!plan)
    return plan.error();
  exe->plan = std::move(*plan);
  auto context = createCodegenContext();
  auto mlirModule = emitKernels(exe->plan, gpuOptions, context.get());
  if (!mlirModule)
    return mlirModule.error();
  for (const PlannedKernel &planned : exe->plan.kernels) {
    auto func = (*mlirModule)->lookupSymbol<mlir::func::FuncOp>(planned.name);
    GpuKernel kernel;
    kernel.name = planned.name;
    kernel.numThreads =
        func->getAttrOfType<mlir::IntegerAttr>("tessel.num_threads").getInt();
    kernel.numBlocks =
        func->getAttrOfType<mlir::IntegerAttr>("tessel.num_blocks").getInt();
    exe->kernels.push_back(kernel);
  }
  Status lowered = lowerToLlvmDialect(**mlirModule, gpuOptions);
  if (!lowered)
    return lowered.error();
  Expected<std::string> ptx =
      translateToNvptx(**mlirModule, gpuOptions.smVersion, /*ptx=*/true);
  if (!ptx)
    return ptx.error();
  // TESSEL_PTX_DUMP=FILE: the PTX the driver is given, for debugging (what
  // `tessel compile --target=nvptx --emit=ptx` prints for the same module).
  if (const char *dump = std::getenv("TESSEL_PTX_DUMP"); dump && *dump) {
    std::ofstream out(dump);
    out << *ptx;
  }
  const CudaDriver &d = **driver;
  if (CUresult r = d.ctxSetCurrent(d.context))
    return Error("CUDA: " + d.message(r));
  std::string log(8192, '\0');
  int jitOptions[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
  void *jitValues[] = {log.data(), reinterpret_cast<void *>(log.size())};
  if (CUresult r = d.moduleLoadDataEx(&exe->module, ptx->c_str(), 2, jitOptions,
                                      jitValues))
    return Error("CUDA: the driver cannot load the PTX for sm_" +
                 std::to_string(gpuOptions.smVersion) + ": " + d.message(r) +
                 ": " + std::string(log.c_str()));
  for (GpuKernel &kernel : exe->kernels)
    if (CUresult r = d.moduleGetFunction(&kernel.function, exe->module,
                                         kernel.name.c_str()))
      return Error("CUDA: no kernel " + kernel.name +
                   " in the PTX: " + d.message(r));
  exe->compileMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  return std::shared_ptr<Executable>(exe);
}

} // namespace tessel
