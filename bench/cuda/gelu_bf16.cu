// gelu_bf16.cu - The seed's GELU written by hand in CUDA: the peer of
// tessel's PTX in bench/gpu_bench.sh (issue 16's benchmark).
//
// bf16[6,512,4096] in and out, 128 threads per block of 4 elements each (an
// 8-byte load and store per thread, as tessel's loop emitter does), the
// same arithmetic: f32 with a rounding to bf16 after every op, tanh from
// CUDA's tanhf. Prints the median kernel time over N runs (CUDA events),
// GB/s, a device-to-device copy of the same bytes and the memory's peak.
//
//   nvcc -O3 -arch=sm_90 -o gelu_bf16 gelu_bf16.cu && ./gelu_bf16 20 [N]
// N (default 6) is the leading dim: bf16[N,512,4096].
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e));          \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__device__ float round16(float x) {
  return __bfloat162float(__float2bfloat16_rn(x));
}

__device__ float gelu(float x) {
  float cube = round16(round16(x * x) * x);
  float inner = round16(x + round16(cube * round16(0.044708f)));
  float t = round16(tanhf(round16(inner * round16(0.79785f))));
  return round16(x * round16(round16(t + 1.0f) * 0.5f));
}

__global__ void __launch_bounds__(128)
    geluKernel(const uint2 *__restrict__ in, uint2 *__restrict__ out,
               long vectors) {
  long v = blockIdx.x * 128L + threadIdx.x;
  if (v >= vectors)
    return;
  uint2 raw = __ldg(in + v);
  __nv_bfloat16 x[4], y[4];
  std::memcpy(x, &raw, sizeof(raw));
  for (int k = 0; k < 4; ++k)
    y[k] = __float2bfloat16_rn(gelu(__bfloat162float(x[k])));
  std::memcpy(&raw, y, sizeof(raw));
  out[v] = raw;
}

/// Values spread over [-4, 4).
__global__ void fill(__nv_bfloat16 *data, long n) {
  long i = blockIdx.x * 256L + threadIdx.x;
  if (i < n)
    data[i] = __float2bfloat16_rn(
        static_cast<float>((i * 2654435761u) % 8192) / 1024.0f - 4.0f);
}

int main(int argc, char **argv) {
  int repeat = argc > 1 ? std::atoi(argv[1]) : 20;
  long lead = argc > 2 ? std::atol(argv[2]) : 6;
  if (repeat < 1 || lead < 1) {
    std::fprintf(stderr, "usage: gelu_bf16 [REPEAT >= 1] [N >= 1]\n");
    return 1;
  }
  const long n = lead * 512 * 4096, vectors = n / 4;
  const size_t bytes = n * sizeof(__nv_bfloat16);
  void *in, *out, *copyIn, *copyOut;
  CHECK(cudaMalloc(&in, bytes));
  CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMalloc(&copyIn, bytes));
  CHECK(cudaMalloc(&copyOut, bytes));
  fill<<<(n + 255) / 256, 256>>>(static_cast<__nv_bfloat16 *>(in), n);
  CHECK(cudaGetLastError());
  cudaEvent_t start, end;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  std::vector<float> kernel, copy;
  for (int r = -1; r < repeat; ++r) {
    float ms = 0;
    CHECK(cudaEventRecord(start));
    geluKernel<<<(vectors + 127) / 128, 128>>>(
        static_cast<const uint2 *>(in), static_cast<uint2 *>(out), vectors);
    CHECK(cudaEventRecord(end));
    CHECK(cudaEventSynchronize(end));
    CHECK(cudaEventElapsedTime(&ms, start, end));
    if (r >= 0)
      kernel.push_back(ms);
    CHECK(cudaEventRecord(start));
    CHECK(cudaMemcpy(copyOut, copyIn, bytes, cudaMemcpyDeviceToDevice));
    CHECK(cudaEventRecord(end));
    CHECK(cudaEventSynchronize(end));
    CHECK(cudaEventElapsedTime(&ms, start, end));
    if (r >= 0)
      copy.push_back(ms);
  }
  std::sort(kernel.begin(), kernel.end());
  std::sort(copy.begin(), copy.end());
  double k = kernel[kernel.size() / 2] / 1e3, c = copy[copy.size() / 2] / 1e3;
  double moved = 2.0 * bytes; // read and written
  int clockKhz = 0, busBits = 0;
  cudaDeviceGetAttribute(&clockKhz, cudaDevAttrMemoryClockRate, 0);
  cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, 0);
  double peak = 2.0 * clockKhz * 1e3 * busBits / 8;
  std::printf("hand-written CUDA GELU bf16[%ld,512,4096]: %.3f ms median of "
              "%d runs, %.2f GB/s (%.0f bytes read and written)\n",
              lead, k * 1e3, repeat, moved / k / 1e9, moved);
  std::printf("device copy of the same bytes: %.3f ms, %.2f GB/s; the kernel "
              "runs at %.0f%% of copy speed\n",
              c * 1e3, moved / c / 1e9, 100.0 * c / k);
  if (peak > 0)
    std::printf("device memory peak: %.0f GB/s; the kernel reaches %.0f%% of "
                "it, the copy %.0f%%\n",
                peak / 1e9, 100.0 * moved / k / peak, 100.0 * moved / c / peak);
  return 0;
}
