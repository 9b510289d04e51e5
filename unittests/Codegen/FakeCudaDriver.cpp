//===- FakeCudaDriver.cpp - A CUDA driver stand-in for GpuRuntimeTest -----===//
//
// The entry points of the CUDA driver API that tessel's GPU executable
// opens, on the host: "device" memory is malloc'd, copies are memcpy, a
// module is the PTX text, and a launch runs nothing but records the kernel,
// its grid and block, and its arguments (as many as the kernel's `.entry`
// declares in the PTX, each as `#N`: the Nth allocation, counting from 0).
// `fakeCudaLog()` returns what happened, one call per line, so that a test
// checks the executable's use of the driver without a GPU;
// `fakeCudaFailNext(name)` makes the next call of a copy fail. Device 0 says it
// is an sm_90 with a 2619 MHz, 5120-bit memory.
//
//===----------------------------------------------------------------------===//
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kNotFound = 500;

std::string &log() {
  static std::string text;
  return text;
}

std::map<uintptr_t, size_t> &allocations() {
  static std::map<uintptr_t, size_t> live;
  return live;
}

/// The ordinal of each live allocation.
std::map<uintptr_t, int> &ordinals() {
  static std::map<uintptr_t, int> ordinal;
  return ordinal;
}

struct Module {
  std::string ptx;
};

struct Function {
  std::string name;
  int params = 0;
};

bool isAllocated(uintptr_t p, size_t bytes) {
  for (const auto &[base, size] : allocations())
    if (p >= base && p + bytes <= base + size)
      return true;
  return false;
}

} // namespace

/// The entry point whose next call fails (fakeCudaFailNext), "" for none.
std::string &failNext() {
  static std::string name;
  return name;
}
constexpr CUresult kIllegalAddress = 700;

/// Whether this call of `name` is to fail (once).
bool failing(const char *name) {
  if (failNext() != name)
    return false;
  failNext().clear();
  return true;
}

extern "C" {

const char *fakeCudaLog() { return log().c_str(); }
/// The next call of entry point `name` (cuMemcpyDtoH_v2 or
/// cuMemcpyDtoD_v2) fails, as after an illegal address in a kernel.
void fakeCudaFailNext(const char *name) { failNext() = name; }
static int allocationCount = 0;
void fakeCudaClearLog() {
  log().clear();
  allocationCount = static_cast<int>(ordinals().size());
}

CUresult cuInit(unsigned) { return kSuccess; }
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? kSuccess : kInvalidValue;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 75: // compute capability major
    *value = 9;
    return kSuccess;
  case 76: // minor
    *value = 0;
    return kSuccess;
  case 36: // memory clock, kHz
    *value = 2619000;
    return kSuccess;
  case 37: // bus width, bits
    *value = 5120;
    return kSuccess;
  default:
    return kInvalidValue;
  }
}
CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  static int primary;
  *context = &primary;
  return kSuccess;
}
CUresult cuCtxSetCurrent(void *context) {
  return context ? kSuccess : kInvalidValue;
}
CUresult cuCtxSynchronize() {
  log() += "synchronize\n";
  return kSuccess;
}

CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned count,
                            int *options, void **values) {
  std::string ptx(static_cast<const char *>(image));
  // The error log buffer and its size must come as a pair.
  if (count != 2 || options[0] != 5 || options[1] != 6 || !values[0])
    return kInvalidValue;
  if (ptx.find(".target sm_90") == std::string::npos)
    return 218; // CUDA_ERROR_INVALID_PTX
  *module = new Module{ptx};
  log() += "load module\n";
  return kSuccess;
}
CUresult cuModuleUnload(void *module) {
  delete static_cast<Module *>(module);
  return kSuccess;
}
CUresult cuModuleGetFunction(void **function, void *module, const char *name) {
  const std::string &ptx = static_cast<Module *>(module)->ptx;
  size_t entry = ptx.find(".entry " + std::string(name) + "(");
  if (entry == std::string::npos)
    return kNotFound;
  size_t close = ptx.find(')', entry);
  int params = 0;
  for (size_t p = ptx.find(".param", entry); p < close;
       p = ptx.find(".param", p + 1))
    ++params;
  *function = new Function{name, params};
  return kSuccess;
}

CUresult cuMemAlloc_v2(uintptr_t *pointer, size_t bytes) {
  if (bytes == 0)
    return kInvalidValue;
  // Zeroed, so that a pred no kernel wrote (a launch runs nothing) reads
  // false, the same in every run.
  void *memory = std::calloc(bytes, 1);
  *pointer = reinterpret_cast<uintptr_t>(memory);
  allocations()[*pointer] = bytes;
  ordinals()[*pointer] = allocationCount++;
  log() += "alloc " + std::to_string(bytes) + "\n";
  return kSuccess;
}
CUresult cuMemFree_v2(uintptr_t pointer) {
  auto it = allocations().find(pointer);
  if (it == allocations().end())
    return kInvalidValue;
  log() += "free " + std::to_string(it->second) + "\n";
  allocations().erase(it);
  ordinals().erase(pointer);
  std::free(reinterpret_cast<void *>(pointer));
  return kSuccess;
}
CUresult cuMemcpyHtoD_v2(uintptr_t dst, const void *src, size_t bytes) {
  if (!isAllocated(dst, bytes))
    return kInvalidValue;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  log() += "to device " + std::to_string(bytes) + "\n";
  return kSuccess;
}
CUresult cuMemcpyDtoH_v2(void *dst, uintptr_t src, size_t bytes) {
  if (failing("cuMemcpyDtoH_v2"))
    return kIllegalAddress;
  if (!isAllocated(src, bytes))
    return kInvalidValue;
  std::memcpy(dst, reinterpret_cast<void *>(src), bytes);
  log() += "to host " + std::to_string(bytes) + "\n";
  return kSuccess;
}
CUresult cuMemcpyDtoD_v2(uintptr_t dst, uintptr_t src, size_t bytes) {
  if (failing("cuMemcpyDtoD_v2"))
    return kIllegalAddress;
  if (!isAllocated(dst, bytes) || !isAllocated(src, bytes))
    return kInvalidValue;
  std::memmove(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
               bytes);
  log() += "device copy " + std::to_string(bytes) + "\n";
  return kSuccess;
}

CUresult cuLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  const Function &f = *static_cast<Function *>(function);
  if (bx * by * bz > 1024 || extra || stream)
    return kInvalidValue;
  std::string line = "launch " + f.name + " grid " + std::to_string(gx) + "x" +
                     std::to_string(gy) + "x" + std::to_string(gz) + " block " +
                     std::to_string(bx) + "x" + std::to_string(by) + "x" +
                     std::to_string(bz) + " shared " + std::to_string(shared) +
                     " args";
  for (int i = 0; i < f.params; ++i) {
    uintptr_t pointer = *static_cast<uintptr_t *>(params[i]);
    auto it = ordinals().find(pointer);
    if (it == ordinals().end())
      return kInvalidValue;
    line += " #" + std::to_string(it->second);
  }
  log() += line + "\n";
  return kSuccess;
}

CUresult cuEventCreate(void **event, unsigned) {
  static int events;
  *event = &events;
  return kSuccess;
}
CUresult cuEventDestroy_v2(void *) { return kSuccess; }
CUresult cuEventRecord(void *, void *) { return kSuccess; }
CUresult cuEventSynchronize(void *) { return kSuccess; }
CUresult cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 1.0f;
  return kSuccess;
}
CUresult cuGetErrorString(CUresult result, const char **text) {
  *text = result == kInvalidValue     ? "fake: invalid value"
          : result == kIllegalAddress ? "fake: an illegal memory access"
                                      : "fake: error";
  return kSuccess;
}

} // extern "C"
