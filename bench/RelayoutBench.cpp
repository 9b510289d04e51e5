//===- RelayoutBench.cpp - Relayout speed next to copy and Eigen ----------===//
//
// For each case (a shape and two layouts) at 4, 64 and 256 MiB, with one
// thread and with every core, prints the bandwidth (bytes read + written per
// second) of:
//
//   tessel     RelayoutPlan::execute
//   copy       the best copy of the same bytes: the faster of memcpy and a
//              streaming-store copy, split over the same threads
//   eigen      Eigen's tensor shuffle of the same permutation (the tiling
//              written as reshape + shuffle), on a thread pool of the same size
//   plain      the plain hand-written loop of PlainReference.cpp
//   hptt       with --hptt LIB: HPTT's plan of the same permutation, for the
//              4- and 8-byte cases (bench/build-hptt-peer.sh builds LIB from
//              a checkout of HPTT; --hptt-tune lets HPTT time its candidates
//              when planning instead of choosing by its model)
//
// Runs are interleaved (copy, tessel, eigen, copy, ...) and each figure is
// the median of its runs, so that the machine's drifting bandwidth hits all
// three alike. bench/relayout_bench.py adds numpy and prints the table that
// BENCHMARKS.md records.
//
//   build/bench/relayout-bench [--json] [--sizes 4,64] [--threads 1,2]
//                              [--filter NAME] [--min-runs 5] [--min-time 0.5]
//                              [--streaming-threshold BYTES]
//                              [--dst-offset BYTES] [--cpu-time]
//                              [--huge-pages] [--case 'SHAPE FROM TO']
//                              [--hptt LIB [--hptt-tune]]
//
// --dst-offset places tessel's destination that many bytes past a page
// boundary (16: what np.empty and std::string give), to measure the
// streaming kernels on a destination that is not 64-byte aligned.
//
// --huge-pages maps every buffer of 4 MiB or more 2 MiB-aligned with
// MADV_HUGEPAGE (tessel::HostBuffer, what `tessel run` and numpy's large
// arrays get); without it buffers come from std::aligned_alloc, which on a
// kernel whose transparent huge pages are `madvise` gets 4 KiB pages. All
// columns use the same kind of buffer.
//
// --case 'SHAPE FROM TO' (f32[64,4096,64] {2,1,0} {1,0,2}) runs that one
// conversion instead of the built-in cases (no Eigen, no plain reference;
// --sizes does not apply, the MiB column gives the source's size).
//
// --cpu-time (with --threads 1) times each run by the CPU time of the
// calling thread (CLOCK_THREAD_CPUTIME_ID) instead of the wall clock: on a
// machine that other work shares, time slices lost to it then do not count
// (stalls on memory still do). Eigen, whose pool runs on its own threads,
// is left out.
//
//===----------------------------------------------------------------------===//
#define EIGEN_USE_THREADS
#include "tessel/Layout/ShapeParser.h"
#include "tessel/Relayout/Relayout.h"
#include "tessel/Support/Host.h"

#include "PlainReference.h"

#include <unsupported/Eigen/CXX11/Tensor>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

using namespace tessel;

namespace {

//===----------------------------------------------------------------------===//
// Buffers and timing
//===----------------------------------------------------------------------===//

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

/// Whether buffers are mapped with huge pages requested (--huge-pages).
bool gHugePages = false;

/// A page-aligned buffer (std::aligned_alloc: 4 KiB pages where the
/// kernel's transparent huge pages are `madvise`), or with --huge-pages a
/// tessel::HostBuffer: from 4 MiB up a 2 MiB-aligned mapping with
/// MADV_HUGEPAGE, as tessel's own buffers and numpy's large arrays get.
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(int64_t bytes) {
    if (gHugePages)
      host = tessel::HostBuffer(bytes);
    else
      plain.reset(static_cast<uint8_t *>(std::aligned_alloc(4096, bytes)));
  }
  uint8_t *get() const { return gHugePages ? host.data() : plain.get(); }

private:
  tessel::HostBuffer host;
  std::unique_ptr<uint8_t, FreeDeleter> plain;
};

/// A buffer, touched so that page faults stay out of timings. Every fourth
/// byte has bit 6 clear, so that seen as little-endian f32 or f64 the
/// contents are finite (no NaN whose payload a float copy might change:
/// HPTT's kernels multiply by alpha).
Buffer allocate(int64_t bytes, uint8_t fill) {
  int64_t rounded = (bytes + 4095) / 4096 * 4096;
  Buffer buffer(rounded);
  uint8_t *p = buffer.get();
  if (!p) {
    std::fprintf(stderr, "relayout-bench: out of memory (%lld bytes)\n",
                 static_cast<long long>(bytes));
    std::exit(1);
  }
  for (int64_t i = 0; i < rounded; ++i)
    p[i] = static_cast<uint8_t>((fill + i * 7) & (i % 4 == 3 ? 0xbf : 0xff));
  return buffer;
}

/// Whether seconds() counts the calling thread's CPU time (--cpu-time).
bool gCpuTime = false;

double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

double seconds(const std::function<void()> &run) {
  if (gCpuTime) {
    double start = threadCpuSeconds();
    run();
    return threadCpuSeconds() - start;
  }
  auto start = std::chrono::steady_clock::now();
  run();
  auto end = std::chrono::steady_clock::now();
  return std::chrono::duration<double>(end - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

//===----------------------------------------------------------------------===//
// The copies: memcpy and streaming stores, split over threads in chunks
//===----------------------------------------------------------------------===//

void streamCopy(uint8_t *dst, const uint8_t *src, int64_t bytes) {
#if defined(__SSE2__)
  int64_t head = (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16;
  head = std::min(head, bytes);
  std::memcpy(dst, src, head);
  int64_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const auto *s = reinterpret_cast<const __m128i *>(src + i);
    auto *d = reinterpret_cast<__m128i *>(dst + i);
    __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
    __m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
    _mm_stream_si128(d, a);
    _mm_stream_si128(d + 1, b);
    _mm_stream_si128(d + 2, c);
    _mm_stream_si128(d + 3, e);
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

/// Runs `copy` over [0, bytes) in 1 MiB chunks on the arena's threads.
void parallelCopy(tbb::task_arena &arena, uint8_t *dst, const uint8_t *src,
                  int64_t bytes, bool streaming) {
  constexpr int64_t kChunk = 1 << 20;
  int64_t chunks = (bytes + kChunk - 1) / kChunk;
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, chunks),
        [&](const tbb::blocked_range<int64_t> &r) {
          int64_t begin = r.begin() * kChunk;
          int64_t end = std::min(bytes, r.end() * kChunk);
          if (streaming)
            streamCopy(dst + begin, src + begin, end - begin);
          else
            std::memcpy(dst + begin, src + begin, end - begin);
        },
        tbb::static_partitioner());
  });
}

//===----------------------------------------------------------------------===//
// Eigen's shuffle of the same permutation
//===----------------------------------------------------------------------===//

/// The source buffer seen as a row-major tensor of `dims`, shuffled by
/// `perm` into the destination buffer.
struct EigenShuffle {
  std::vector<int64_t> dims;
  std::vector<int> perm;
};

template <typename T, int N>
void eigenShuffleN(const Eigen::ThreadPoolDevice &device, const EigenShuffle &s,
                   const void *src, void *dst) {
  std::array<Eigen::Index, N> in, out;
  std::array<int, N> perm;
  for (int i = 0; i < N; ++i) {
    in[i] = s.dims[i];
    perm[i] = s.perm[i];
  }
  for (int i = 0; i < N; ++i)
    out[i] = in[perm[i]];
  Eigen::TensorMap<const Eigen::Tensor<T, N, Eigen::RowMajor>> a(
      static_cast<const T *>(src), in);
  Eigen::TensorMap<Eigen::Tensor<T, N, Eigen::RowMajor>> b(
      static_cast<T *>(dst), out);
  b.device(device) = a.shuffle(perm);
}

template <typename T>
void eigenShuffle(const Eigen::ThreadPoolDevice &device, const EigenShuffle &s,
                  const void *src, void *dst) {
  switch (s.dims.size()) {
  case 2:
    return eigenShuffleN<T, 2>(device, s, src, dst);
  case 3:
    return eigenShuffleN<T, 3>(device, s, src, dst);
  case 4:
    return eigenShuffleN<T, 4>(device, s, src, dst);
  case 5:
    return eigenShuffleN<T, 5>(device, s, src, dst);
  case 6:
    return eigenShuffleN<T, 6>(device, s, src, dst);
  default:
    std::fprintf(stderr, "relayout-bench: eigen rank %zu not built\n",
                 s.dims.size());
    std::exit(1);
  }
}

void runEigen(int elementBytes, const Eigen::ThreadPoolDevice &device,
              const EigenShuffle &s, const void *src, void *dst) {
  switch (elementBytes) {
  case 1:
    return eigenShuffle<uint8_t>(device, s, src, dst);
  case 2:
    return eigenShuffle<uint16_t>(device, s, src, dst);
  case 4:
    return eigenShuffle<uint32_t>(device, s, src, dst);
  default:
    return eigenShuffle<uint64_t>(device, s, src, dst);
  }
}

//===----------------------------------------------------------------------===//
// HPTT, loaded at run time (HpttPeer.cpp)
//===----------------------------------------------------------------------===//

struct Hptt {
  void *(*plan)(const int *, int, const long long *, int, const void *, void *,
                int, int) = nullptr;
  void (*execute)(void *) = nullptr;
  void (*free)(void *) = nullptr;
  bool tune = false;
  explicit operator bool() const { return plan != nullptr; }
};

Hptt gHptt;

/// Loads the library bench/build-hptt-peer.sh builds; exits with a message
/// when it is not one.
void loadHptt(const char *path) {
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "relayout-bench: --hptt: %s\n", dlerror());
    std::exit(2);
  }
  gHptt.plan =
      reinterpret_cast<decltype(gHptt.plan)>(dlsym(lib, "tessel_hptt_plan"));
  gHptt.execute = reinterpret_cast<decltype(gHptt.execute)>(
      dlsym(lib, "tessel_hptt_execute"));
  gHptt.free =
      reinterpret_cast<decltype(gHptt.free)>(dlsym(lib, "tessel_hptt_free"));
  if (!gHptt.plan || !gHptt.execute || !gHptt.free) {
    std::fprintf(stderr,
                 "relayout-bench: --hptt: %s has no tessel_hptt_plan, "
                 "tessel_hptt_execute and tessel_hptt_free (build it with "
                 "bench/build-hptt-peer.sh)\n",
                 path);
    std::exit(2);
  }
}

//===----------------------------------------------------------------------===//
// Cases
//===----------------------------------------------------------------------===//

struct Instance {
  std::string shape, from, to;
  /// The same data movement as reshape + shuffle of the source buffer.
  std::optional<EigenShuffle> eigen;
  /// For ragged shapes: the source first padded (with zeros) to these dims;
  /// numpy does that, Eigen is not run.
  std::vector<int64_t> padTo;
  /// The plain reference's run of the same movement (PlainReference.h),
  /// where it covers the case.
  std::function<void(const uint8_t *, uint8_t *, tbb::task_arena &)> plain;
};

struct Case {
  const char *name;
  /// The instance of about `mib` MiB.
  std::function<Instance(int64_t mib)> make;
};

/// Rows and columns of a 2-D array of `mib` MiB of `bytes`-byte elements,
/// both powers of two, rows <= columns.
std::pair<int64_t, int64_t> square(int64_t mib, int64_t bytes) {
  int64_t elements = (mib << 20) / bytes;
  int64_t rows = 1;
  while (rows * rows * 4 <= elements)
    rows *= 2;
  return {rows, elements / rows};
}

std::string dims(std::initializer_list<int64_t> d) {
  std::string s;
  for (int64_t x : d)
    s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

/// Row-major to T(8,128)(sub,1) for a type with `sub` rows per 32-bit word,
/// or back when `untile`.
Case tiling(const char *name, const char *type, int64_t bytes, int64_t sub,
            bool untile) {
  return {name, [=](int64_t mib) {
            auto [r, c] = square(mib, bytes);
            Instance in;
            in.shape = std::string(type) + "[" + dims({r, c}) + "]";
            std::string tile =
                sub == 1 ? "{1,0:T(8,128)}"
                         : "{1,0:T(8,128)(" + std::to_string(sub) + ",1)}";
            in.from = untile ? tile : "{1,0}";
            in.to = untile ? "{1,0}" : tile;
            // Row-major [r/8, 8/sub, sub, c/128, 128] <-> tiled
            // [r/8, c/128, 8/sub, 128, sub].
            EigenShuffle e;
            if (sub == 1) {
              e.dims = untile ? std::vector<int64_t>{r / 8, c / 128, 8, 128}
                              : std::vector<int64_t>{r / 8, 8, c / 128, 128};
              e.perm = {0, 2, 1, 3};
            } else if (!untile) {
              e.dims = {r / 8, 8 / sub, sub, c / 128, 128};
              e.perm = {0, 3, 1, 4, 2};
            } else {
              e.dims = {r / 8, c / 128, 8 / sub, 128, sub};
              e.perm = {0, 2, 4, 1, 3};
            }
            in.eigen = e;
            in.plain = [=](const uint8_t *src, uint8_t *dst,
                           tbb::task_arena &arena) {
              if (untile)
                plain::untile(src, dst, r, c, bytes, sub, arena);
              else
                plain::tile(src, dst, r, c, bytes, sub, arena);
            };
            return in;
          }};
}

/// The plain reference's batch of transposes: rows of the source at
/// `rowOffset` (elements), `cols` columns each.
std::function<void(const uint8_t *, uint8_t *, tbb::task_arena &)>
plainTranspose(int64_t batch, int64_t batchStride,
               std::vector<int64_t> rowOffset, int64_t cols, int64_t bytes) {
  return [=](const uint8_t *src, uint8_t *dst, tbb::task_arena &arena) {
    plain::transpose(src, dst, batch, batchStride, rowOffset, cols, bytes,
                     arena);
  };
}

std::vector<int64_t> strided(int64_t count, int64_t stride) {
  std::vector<int64_t> offsets(count);
  for (int64_t i = 0; i < count; ++i)
    offsets[i] = i * stride;
  return offsets;
}

std::vector<Case> cases() {
  std::vector<Case> all = {
      tiling("f32 tile T(8,128)", "f32", 4, 1, false),
      tiling("f32 untile T(8,128)", "f32", 4, 1, true),
      tiling("bf16 tile T(8,128)(2,1)", "bf16", 2, 2, false),
      tiling("bf16 untile T(8,128)(2,1)", "bf16", 2, 2, true),
      tiling("s8 tile T(8,128)(4,1)", "s8", 1, 4, false),
      tiling("s8 untile T(8,128)(4,1)", "s8", 1, 4, true),
  };
  all.push_back({"f32 ragged tile T(8,128)", [](int64_t mib) {
                   auto [r, c] = square(mib, 4);
                   Instance in;
                   in.shape = "f32[" + dims({r - 3, c + 5}) + "]";
                   in.from = "{1,0}";
                   in.to = "{1,0:T(8,128)}";
                   int64_t rp = (r - 3 + 7) / 8 * 8,
                           cp = (c + 5 + 127) / 128 * 128;
                   in.padTo = {rp, cp};
                   in.eigen =
                       EigenShuffle{{rp / 8, 8, cp / 128, 128}, {0, 2, 1, 3}};
                   return in;
                 }});
  all.push_back({"f32 transpose 2-D", [](int64_t mib) {
                   auto [r, c] = square(mib, 4);
                   Instance in;
                   in.shape = "f32[" + dims({r, c}) + "]";
                   in.from = "{1,0}";
                   in.to = "{0,1}";
                   in.eigen = EigenShuffle{{r, c}, {1, 0}};
                   in.plain = plainTranspose(1, 0, strided(r, c), c, 4);
                   return in;
                 }});
  all.push_back({"bf16 transpose 2-D", [](int64_t mib) {
                   auto [r, c] = square(mib, 2);
                   Instance in;
                   in.shape = "bf16[" + dims({r, c}) + "]";
                   in.from = "{1,0}";
                   in.to = "{0,1}";
                   in.eigen = EigenShuffle{{r, c}, {1, 0}};
                   in.plain = plainTranspose(1, 0, strided(r, c), c, 2);
                   return in;
                 }});
  all.push_back({"s8 transpose 2-D", [](int64_t mib) {
                   auto [r, c] = square(mib, 1);
                   Instance in;
                   in.shape = "s8[" + dims({r, c}) + "]";
                   in.from = "{1,0}";
                   in.to = "{0,1}";
                   in.eigen = EigenShuffle{{r, c}, {1, 0}};
                   return in;
                 }});
  // Physical order [a,b,c] -> [c,a,b] and [a,b,c,d] -> [b,d,a,c].
  all.push_back({"f32 permute 3-D (2,0,1)", [](int64_t mib) {
                   int64_t elements = (mib << 20) / 4, a = 1;
                   while (a * a * a * 8 <= elements)
                     a *= 2;
                   int64_t b = a, c = elements / (a * b);
                   Instance in;
                   in.shape = "f32[" + dims({a, b, c}) + "]";
                   in.from = "{2,1,0}";
                   in.to = "{1,0,2}";
                   in.eigen = EigenShuffle{{a, b, c}, {2, 0, 1}};
                   in.plain = plainTranspose(1, 0, strided(a * b, c), c, 4);
                   return in;
                 }});
  all.push_back({"f32 permute 4-D (1,3,0,2)", [](int64_t mib) {
                   int64_t elements = (mib << 20) / 4, a = 1;
                   while (a * a * a * a * 16 <= elements)
                     a *= 2;
                   int64_t d = elements / (a * a * a);
                   Instance in;
                   in.shape = "f32[" + dims({a, a, a, d}) + "]";
                   in.from = "{3,2,1,0}";
                   in.to = "{2,0,3,1}";
                   in.eigen = EigenShuffle{{a, a, a, d}, {1, 3, 0, 2}};
                   // [a,b,c,d] -> [b,d,a,c]: for each b, the rows (a, c)
                   // of d elements become columns.
                   std::vector<int64_t> rows;
                   for (int64_t i = 0; i < a; ++i)
                     for (int64_t k = 0; k < a; ++k)
                       rows.push_back(i * a * a * d + k * d);
                   in.plain = plainTranspose(a, a * d, rows, d, 4);
                   return in;
                 }});
  // The slow paths of issue 15: sub-byte elements (the bit kernel) and
  // tiled-to-tiled with another dim order (the generic kernel).
  all.push_back({"s4 tile T(8,128)E(4)", [](int64_t mib) {
                   auto [r, c] = square(mib * 2, 1);
                   Instance in;
                   in.shape = "s4[" + dims({r, c}) + "]";
                   in.from = "{1,0:E(4)}";
                   in.to = "{1,0:T(8,128)E(4)}";
                   return in;
                 }});
  all.push_back({"s4 transpose 2-D E(4)", [](int64_t mib) {
                   auto [r, c] = square(mib * 2, 1);
                   Instance in;
                   in.shape = "s4[" + dims({r, c}) + "]";
                   in.from = "{1,0:E(4)}";
                   in.to = "{0,1:E(4)}";
                   return in;
                 }});
  all.push_back({"f32 T(8,128) to {0,1:T(8,128)}", [](int64_t mib) {
                   auto [r, c] = square(mib, 4);
                   Instance in;
                   in.shape = "f32[" + dims({r, c}) + "]";
                   in.from = "{1,0:T(8,128)}";
                   in.to = "{0,1:T(8,128)}";
                   // Row r = 128 r2 + 8 r1 + r0, column c = 128 c2 + 8 c1 +
                   // c0: the source's tiles hold [r2, r1, c2, r0, c1, c0],
                   // the destination's [c2, c1, r2, c0, r1, r0].
                   in.eigen = EigenShuffle{{r / 128, 16, c / 128, 8, 16, 8},
                                           {2, 4, 0, 5, 1, 3}};
                   return in;
                 }});
  // Rank 3, the two minor dims swapped, tiled on both sides: an untiling,
  // a permute and a tiling (docs/relayout.md, "Two steps").
  all.push_back({"f32 T(8,128) 3-D to {1,2,0:T(8,128)}", [](int64_t mib) {
                   auto [r, c] = square(mib, 4 * 64);
                   Instance in;
                   in.shape = "f32[" + dims({64, r, c}) + "]";
                   in.from = "{2,1,0:T(8,128)}";
                   in.to = "{1,2,0:T(8,128)}";
                   return in;
                 }});
  return all;
}

//===----------------------------------------------------------------------===//
// Measuring one instance
//===----------------------------------------------------------------------===//

struct Options {
  bool json = false;
  std::vector<int64_t> sizes = {4, 64, 256};
  std::vector<int64_t> threads;
  std::string filter;
  int minRuns = 5;
  double minTime = 0.5;
  /// RelayoutOptions::streamingThresholdBytes; -1 is tessel's default.
  int64_t streamingThreshold = -1;
  /// Bytes past a page boundary where tessel's destination starts.
  int64_t dstOffset = 0;
  /// --case: "SHAPE FROM TO", run instead of the built-in cases.
  std::string customCase;
};

struct Result {
  double tessel = 0, copy = 0, eigen = 0, plain = 0, hptt = 0;
  std::string kernel;
};

Layout parseLayout(const Shape &shape, const std::string &text) {
  Expected<Layout> layout = parseLayoutFor(text, shape);
  if (!layout) {
    std::fprintf(stderr, "relayout-bench: bad case %s%s: %s\n",
                 shape.toStringWithoutLayout().c_str(), text.c_str(),
                 layout.error().message.c_str());
    std::exit(1);
  }
  return *layout;
}

Result measure(const Instance &in, int threads, const Options &opts) {
  Expected<Shape> shape = parseShape(in.shape);
  if (!shape) {
    std::fprintf(stderr, "relayout-bench: bad shape %s\n", in.shape.c_str());
    std::exit(1);
  }
  RelayoutOptions ro;
  ro.threads = threads;
  ro.streamingThresholdBytes = opts.streamingThreshold;
  Expected<RelayoutPlan> plan = RelayoutPlan::create(
      *shape, parseLayout(*shape, in.from), parseLayout(*shape, in.to), ro);
  if (!plan) {
    std::fprintf(stderr, "relayout-bench: %s\n", plan.error().message.c_str());
    std::exit(1);
  }
  int64_t srcBytes = plan->sourceBytes(), dstBytes = plan->destinationBytes();
  Buffer src = allocate(srcBytes, 1);
  Buffer dstBuffer = allocate(dstBytes + opts.dstOffset, 2);
  uint8_t *dst = dstBuffer.get() + opts.dstOffset;
  Buffer copyDst = allocate(srcBytes, 3);

  tbb::task_arena arena(threads);
  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice device(&pool, threads);
  int elementBytes =
      static_cast<int>(std::max<int64_t>(1, plan->source().elementBits() / 8));

  bool runsEigen = in.eigen && in.padTo.empty() && !gCpuTime;
  bool runsPlain = static_cast<bool>(in.plain);
  Buffer plainDst = allocate(runsPlain ? dstBytes : 1, 4);
  // HPTT has float types only; it writes its own buffer, checked against
  // tessel's output below.
  void *hpttPlan = nullptr;
  Buffer hpttDst = allocate(1, 5);
  if (gHptt && in.eigen && in.padTo.empty() &&
      (elementBytes == 4 || elementBytes == 8)) {
    hpttDst = allocate(dstBytes, 5);
    std::vector<long long> d(in.eigen->dims.begin(), in.eigen->dims.end());
    hpttPlan = gHptt.plan(in.eigen->perm.data(),
                          static_cast<int>(in.eigen->perm.size()), d.data(),
                          elementBytes, src.get(), hpttDst.get(), threads,
                          gHptt.tune ? 1 : 0);
  }
  bool runsHptt = hpttPlan != nullptr;
  auto runTessel = [&] {
    if (Status e = plan->execute(src.get(), srcBytes, dst, dstBytes); !e) {
      std::fprintf(stderr, "relayout-bench: %s\n", e.error().message.c_str());
      std::exit(1);
    }
  };
  // Warm up each contender once (thread pools start, code pages in).
  runTessel();
  parallelCopy(arena, copyDst.get(), src.get(), srcBytes, false);
  if (runsEigen)
    runEigen(elementBytes, device, *in.eigen, src.get(), dst);
  if (runsPlain) {
    // The peer must do the same work: its output is tessel's, byte for byte.
    runTessel();
    in.plain(src.get(), plainDst.get(), arena);
    if (std::memcmp(dst, plainDst.get(), dstBytes) != 0) {
      std::fprintf(stderr,
                   "relayout-bench: the plain reference disagrees "
                   "with tessel on %s %s -> %s\n",
                   in.shape.c_str(), in.from.c_str(), in.to.c_str());
      std::exit(1);
    }
  }
  if (runsHptt) {
    runTessel();
    gHptt.execute(hpttPlan);
    if (std::memcmp(dst, hpttDst.get(), dstBytes) != 0) {
      std::fprintf(stderr,
                   "relayout-bench: HPTT disagrees with tessel on %s %s -> "
                   "%s\n",
                   in.shape.c_str(), in.from.c_str(), in.to.c_str());
      std::exit(1);
    }
  }

  std::vector<double> tTessel, tMemcpy, tStream, tEigen, tPlain, tHptt;
  double spent = 0;
  for (int run = 0; run < opts.minRuns || spent < opts.minTime; ++run) {
    double a = seconds([&] {
      parallelCopy(arena, copyDst.get(), src.get(), srcBytes, false);
    });
    double b = seconds(
        [&] { parallelCopy(arena, copyDst.get(), src.get(), srcBytes, true); });
    double c = seconds(runTessel);
    tMemcpy.push_back(a);
    tStream.push_back(b);
    tTessel.push_back(c);
    spent += a + b + c;
    if (runsEigen) {
      double d = seconds(
          [&] { runEigen(elementBytes, device, *in.eigen, src.get(), dst); });
      tEigen.push_back(d);
      spent += d;
    }
    if (runsPlain) {
      double e = seconds([&] { in.plain(src.get(), plainDst.get(), arena); });
      tPlain.push_back(e);
      spent += e;
    }
    if (runsHptt) {
      double h = seconds([&] { gHptt.execute(hpttPlan); });
      tHptt.push_back(h);
      spent += h;
    }
    if (run > 200)
      break;
  }
  Result r;
  double gb = 1e-9;
  r.tessel = (srcBytes + dstBytes) * gb / median(tTessel);
  r.copy = 2 * srcBytes * gb / std::min(median(tMemcpy), median(tStream));
  if (runsEigen)
    r.eigen = (srcBytes + dstBytes) * gb / median(tEigen);
  if (runsPlain)
    r.plain = (srcBytes + dstBytes) * gb / median(tPlain);
  if (runsHptt) {
    r.hptt = (srcBytes + dstBytes) * gb / median(tHptt);
    gHptt.free(hpttPlan);
  }
  r.kernel = plan->describe();
  return r;
}

template <typename T> std::string join(const std::vector<T> &values) {
  std::string s;
  for (T v : values)
    s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

std::vector<int64_t> parseList(const char *text) {
  std::vector<int64_t> values;
  for (const char *p = text; *p;) {
    char *end = nullptr;
    long long v = std::strtoll(p, &end, 10);
    if (end == p || v <= 0) {
      std::fprintf(stderr,
                   "relayout-bench: expected a list of positive "
                   "integers, got '%s'\n",
                   text);
      std::exit(2);
    }
    values.push_back(v);
    p = *end == ',' ? end + 1 : end;
  }
  return values;
}

Options parseArgs(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "relayout-bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--json")
      o.json = true;
    else if (a == "--sizes")
      o.sizes = parseList(next());
    else if (a == "--threads")
      o.threads = parseList(next());
    else if (a == "--filter")
      o.filter = next();
    else if (a == "--min-runs")
      o.minRuns = static_cast<int>(parseList(next())[0]);
    else if (a == "--min-time")
      o.minTime = std::atof(next());
    else if (a == "--cpu-time")
      gCpuTime = true;
    else if (a == "--huge-pages")
      gHugePages = true;
    else if (a == "--case")
      o.customCase = next();
    else if (a == "--hptt")
      loadHptt(next());
    else if (a == "--hptt-tune")
      gHptt.tune = true;
    else if (a == "--streaming-threshold")
      o.streamingThreshold = std::atoll(next());
    else if (a == "--dst-offset") {
      o.dstOffset = std::atoll(next());
      if (o.dstOffset < 0 || o.dstOffset >= 4096) {
        std::fprintf(stderr, "relayout-bench: --dst-offset must be in "
                             "[0, 4096)\n");
        std::exit(2);
      }
    } else {
      std::fprintf(stderr, "usage: relayout-bench [--json] [--sizes 4,64,256] "
                           "[--threads 1,2] [--filter TEXT] [--min-runs N] "
                           "[--min-time SECONDS] [--streaming-threshold BYTES] "
                           "[--dst-offset BYTES] [--cpu-time] [--huge-pages] "
                           "[--case 'SHAPE FROM TO'] [--hptt LIB "
                           "[--hptt-tune]]\n");
      std::exit(a == "--help" || a == "-h" ? 0 : 2);
    }
  }
  if (gHptt.tune && !gHptt) {
    std::fprintf(stderr, "relayout-bench: --hptt-tune needs --hptt LIB\n");
    std::exit(2);
  }
  if (o.threads.empty()) {
    int64_t all = std::max(1u, std::thread::hardware_concurrency());
    o.threads = {1};
    if (all > 1 && !gCpuTime)
      o.threads.push_back(all);
  }
  if (gCpuTime && o.threads != std::vector<int64_t>{1}) {
    std::fprintf(stderr, "relayout-bench: --cpu-time needs --threads 1 (it "
                         "counts the calling thread only)\n");
    std::exit(2);
  }
  return o;
}

/// The case of --case "SHAPE FROM TO" and the source's size in MiB.
std::pair<Case, int64_t> customCase(const std::string &text) {
  std::vector<std::string> words;
  for (size_t i = 0; i < text.size();) {
    size_t end = text.find(' ', i);
    if (end == std::string::npos)
      end = text.size();
    if (end > i)
      words.push_back(text.substr(i, end - i));
    i = end + 1;
  }
  if (words.size() != 3) {
    std::fprintf(stderr,
                 "relayout-bench: --case needs 'SHAPE FROM TO', got "
                 "'%s'\n",
                 text.c_str());
    std::exit(2);
  }
  Expected<Shape> shape = parseShape(words[0]);
  if (!shape) {
    std::fprintf(stderr, "relayout-bench: bad shape %s\n", words[0].c_str());
    std::exit(2);
  }
  Instance in;
  in.shape = words[0];
  in.from = words[1];
  in.to = words[2];
  Expected<RelayoutPlan> plan = RelayoutPlan::create(
      *shape, parseLayout(*shape, in.from), parseLayout(*shape, in.to));
  if (!plan) {
    std::fprintf(stderr, "relayout-bench: %s\n", plan.error().message.c_str());
    std::exit(2);
  }
  static std::string name;
  name = text;
  return {Case{name.c_str(), [in](int64_t) { return in; }},
          plan->sourceBytes() >> 20};
}

/// The CPU model from /proc/cpuinfo, for the record that goes with a table.
std::string cpuModel() {
  std::FILE *f = std::fopen("/proc/cpuinfo", "r");
  if (!f)
    return "unknown";
  char line[512];
  std::string model = "unknown";
  while (std::fgets(line, sizeof line, f)) {
    std::string text = line;
    if (text.rfind("model name", 0) == 0) {
      size_t colon = text.find(':');
      model = text.substr(colon + 2);
      model.erase(model.find_last_not_of(" \n") + 1);
      break;
    }
  }
  std::fclose(f);
  return model;
}

} // namespace

int main(int argc, char **argv) {
  Options opts = parseArgs(argc, argv);
  std::string levels;
  for (const std::string &level : relayoutIsaLevels())
    levels += (levels.empty() ? "" : " ") + level;
  // The level tessel's plans run at (TESSEL_ISA caps it).
  std::string isa = "?";
  if (Expected<Shape> shape = parseShape("f32[8,128]{1,0}"))
    if (Expected<RelayoutPlan> plan = RelayoutPlan::create(*shape, *shape))
      isa = plan->isa();
  if (opts.json)
    std::printf("{\"cpu\": \"%s\", \"levels\": \"%s\", \"isa\": \"%s\", "
                "\"plain_isa\": \"%s\", \"dst_offset\": %lld}\n",
                cpuModel().c_str(), levels.c_str(), isa.c_str(), plain::isa(),
                static_cast<long long>(opts.dstOffset));
  else
    std::printf("cpu: %s; tessel kernels: %s (this CPU: %s); plain reference "
                "compiled for %s; tessel destination %lld bytes past a page "
                "boundary\n",
                cpuModel().c_str(), isa.c_str(), levels.c_str(), plain::isa(),
                static_cast<long long>(opts.dstOffset));
  if (!opts.json)
    std::printf("%-28s %5s %3s %8s %8s %6s %8s %7s %8s %7s%s  %s\n", "case",
                "MiB", "thr", "tessel", "copy", "ratio", "eigen", "t/eigen",
                "plain", "t/plain", gHptt ? "     hptt  t/hptt" : "", "kernel");
  std::vector<Case> all = cases();
  std::vector<int64_t> sizes = opts.sizes;
  if (!opts.customCase.empty()) {
    auto [c, mib] = customCase(opts.customCase);
    all = {c};
    sizes = {mib};
  }
  for (const Case &c : all) {
    if (!opts.filter.empty() &&
        std::string(c.name).find(opts.filter) == std::string::npos)
      continue;
    for (int64_t mib : sizes) {
      Instance in = c.make(mib);
      for (int64_t threads : opts.threads) {
        Result r = measure(in, static_cast<int>(threads), opts);
        auto optional = [](double gbs) {
          return gbs > 0 ? std::to_string(gbs) : std::string("null");
        };
        if (opts.json) {
          std::printf("{\"case\": \"%s\", \"mib\": %lld, \"threads\": %lld, "
                      "\"shape\": \"%s\", \"from\": \"%s\", \"to\": \"%s\", "
                      "\"tessel_gbs\": %.3f, \"copy_gbs\": %.3f, "
                      "\"eigen_gbs\": %s, \"plain_gbs\": %s, \"hptt_gbs\": %s, "
                      "\"kernel\": \"%s\", "
                      "\"reshape\": [%s], \"perm\": [%s], \"pad_to\": [%s]}\n",
                      c.name, static_cast<long long>(mib),
                      static_cast<long long>(threads), in.shape.c_str(),
                      in.from.c_str(), in.to.c_str(), r.tessel, r.copy,
                      optional(r.eigen).c_str(), optional(r.plain).c_str(),
                      optional(r.hptt).c_str(), r.kernel.c_str(),
                      in.eigen ? join(in.eigen->dims).c_str() : "",
                      in.eigen ? join(in.eigen->perm).c_str() : "",
                      join(in.padTo).c_str());
        } else {
          std::printf("%-28s %5lld %3lld %8.2f %8.2f %5.0f%% ", c.name,
                      static_cast<long long>(mib),
                      static_cast<long long>(threads), r.tessel, r.copy,
                      100 * r.tessel / r.copy);
          if (r.eigen > 0)
            std::printf("%8.2f %6.1fx", r.eigen, r.tessel / r.eigen);
          else
            std::printf("%8s %7s", "-", "-");
          if (r.plain > 0)
            std::printf(" %8.2f %6.2fx", r.plain, r.tessel / r.plain);
          else
            std::printf(" %8s %7s", "-", "-");
          if (r.hptt > 0)
            std::printf(" %8.2f %6.2fx", r.hptt, r.tessel / r.hptt);
          else if (gHptt)
            std::printf(" %8s %7s", "-", "-");
          std::printf("  %s\n", r.kernel.c_str());
        }
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
