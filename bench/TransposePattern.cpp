//===- TransposePattern.cpp - A transpose's memory traffic alone ----------===//
//
// How fast can this machine's memory serve a transpose at all? This program
// moves whole 64-byte lines in exactly the order a blocked 2-D transpose of
// a 64 MiB (or --mib) matrix reads and writes them, but copies each line
// unchanged instead of transposing the elements inside: no shuffles, no
// registers to spill, only the access pattern. For element size E a square
// of 64/E rows x 64 bytes is read (one line from each of 64/E source rows)
// and written as 64/E lines of 64/E destination rows, squares in blocks of
// B x B elements; the destination is written with streaming stores, as
// tessel's kernels do for outputs past the caches.
//
// A transpose kernel cannot beat its pattern: when tessel's transpose runs
// near the pattern's speed, the kernel is not what limits it, the memory
// system is (BENCHMARKS.md, "The transposes' memory pattern").
//
//   build/bench/transpose-pattern [--mib 64] [--runs 9] [--threads 1]
//                                 [--prefetch] [--write-orders]
//
// --prefetch also runs each pattern with the next block's source lines
// prefetched (into L2) while the current block is moved. Runs of the copy
// and the patterns are interleaved and each figure is the median, with the
// ratio to the best copy of the same bytes (the faster of memcpy and a
// streaming copy). --threads splits the rows of blocks, and the copies,
// evenly over that many threads.
//
// --write-orders times the destination's streaming stores alone, no reads,
// in the orders a transpose can write its lines: a block of 64 x K bytes of
// columns at a time, its K lines of each destination row back to back, or
// the K lines as K passes over the rows, each pass over R rows at a time
// (BENCHMARKS.md, "Zen 5: transposes that write four lines per row").
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

namespace {

struct FreeDeleter {
  void operator()(void *p) const { std::free(p); }
};

/// One 64-byte line from `src` to `dst`, streamed where SSE2 allows.
inline void moveLine(uint8_t *dst, const uint8_t *src) {
#if defined(__SSE2__)
  const auto *s = reinterpret_cast<const __m128i *>(src);
  auto *d = reinterpret_cast<__m128i *>(dst);
  __m128i a = _mm_load_si128(s), b = _mm_load_si128(s + 1);
  __m128i c = _mm_load_si128(s + 2), e = _mm_load_si128(s + 3);
  _mm_stream_si128(d, a);
  _mm_stream_si128(d + 1, b);
  _mm_stream_si128(d + 2, c);
  _mm_stream_si128(d + 3, e);
#else
  std::memcpy(dst, src, 64);
#endif
}

inline void fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

inline void prefetchL2(const uint8_t *p) {
#if defined(__SSE2__)
  _mm_prefetch(reinterpret_cast<const char *>(p), _MM_HINT_T1);
#else
  (void)p;
#endif
}

/// The lines of an n x n matrix of `e`-byte elements in a blocked
/// transpose's order: blocks of `block` x `block` elements, squares of
/// 64/e x 64/e elements inside them.
/// Rows of blocks [first, last) of them.
void patternRows(const uint8_t *src, uint8_t *dst, int64_t n, int64_t e,
                 int64_t block, bool prefetch, int64_t first, int64_t last) {
  int64_t rowBytes = n * e, square = 64 / e;
  for (int64_t r0 = first * block; r0 < last * block; r0 += block)
    for (int64_t c0 = 0; c0 < n; c0 += block) {
      if (prefetch) {
        int64_t nr = r0, nc = c0 + block;
        if (nc >= n) {
          nc = 0;
          nr += block;
        }
        if (nr < n)
          for (int64_t r = nr; r < nr + block; ++r)
            for (int64_t c = nc * e; c < (nc + block) * e; c += 64)
              prefetchL2(src + r * rowBytes + c);
      }
      for (int64_t j = c0; j < c0 + block; j += square)
        for (int64_t i = r0; i < r0 + block; i += square)
          // Source rows i.., line at column j -> destination rows j..,
          // line at column i.
          for (int64_t k = 0; k < square; ++k)
            moveLine(dst + (j + k) * rowBytes + i * e,
                     src + (i + k) * rowBytes + j * e);
    }
  fence();
}

/// The whole pattern, rows of blocks split evenly over `threads` threads.
void pattern(const uint8_t *src, uint8_t *dst, int64_t n, int64_t e,
             int64_t block, bool prefetch, int64_t threads) {
  int64_t rows = n / block;
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < threads; ++t)
    workers.emplace_back(patternRows, src, dst, n, e, block, prefetch,
                         rows * t / threads, rows * (t + 1) / threads);
  patternRows(src, dst, n, e, block, prefetch, 0, rows / threads);
  for (std::thread &w : workers)
    w.join();
}

/// A copy split evenly over `threads` threads: memcpy, or streaming stores
/// of 64-byte lines.
void copy(const uint8_t *src, uint8_t *dst, int64_t bytes, bool streaming,
          int64_t threads) {
  auto part = [&](int64_t t) {
    int64_t lines = bytes / 64;
    int64_t a = lines * t / threads * 64, b = lines * (t + 1) / threads * 64;
    if (!streaming) {
      std::memcpy(dst + a, src + a, b - a);
      return;
    }
    for (int64_t i = a; i < b; i += 64)
      moveLine(dst + i, src + i);
    fence();
  };
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < threads; ++t)
    workers.emplace_back(part, t);
  part(0);
  for (std::thread &w : workers)
    w.join();
}

/// Whether `dst` holds, at each line of destination row j and columns
/// [i, i + 64/e), the line of source row i + (j mod 64/e) at column j rounded
/// down to 64/e: the line a transpose's square moves there.
bool movesEveryLine(const uint8_t *src, const uint8_t *dst, int64_t n,
                    int64_t e) {
  int64_t rowBytes = n * e, square = 64 / e;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < n; i += square) {
      int64_t j0 = j / square * square;
      const uint8_t *want = src + (i + j - j0) * rowBytes + j0 * e;
      if (std::memcmp(dst + j * rowBytes + i * e, want, 64) != 0)
        return false;
    }
  return true;
}

/// A line of `value` into `dst`, streamed where SSE2 allows.
inline void storeLine(uint8_t *dst, uint8_t value) {
#if defined(__SSE2__)
  __m128i v = _mm_set1_epi8(static_cast<char>(value));
  auto *d = reinterpret_cast<__m128i *>(dst);
  for (int i = 0; i < 4; ++i)
    _mm_stream_si128(d + i, v);
#else
  std::memset(dst, value, 64);
#endif
}

/// The lines of an n x n byte matrix written column block by column block
/// (64 * lines bytes of each row): each row's `lines` lines back to back
/// (rowsAtOnce 0), or line by line, each line a pass over the rows in
/// groups of rowsAtOnce rows (the bands of a transpose in turn).
void writeOrder(uint8_t *dst, int64_t n, int64_t lines, int64_t rowsAtOnce) {
  for (int64_t i = 0; i < n; i += 64 * lines) {
    if (rowsAtOnce == 0) {
      for (int64_t j = 0; j < n; ++j)
        for (int64_t k = 0; k < lines; ++k)
          storeLine(dst + j * n + i + 64 * k, static_cast<uint8_t>(j));
      continue;
    }
    for (int64_t j0 = 0; j0 < n; j0 += rowsAtOnce)
      for (int64_t k = 0; k < lines; ++k)
        for (int64_t j = j0; j < std::min(n, j0 + rowsAtOnce); ++j)
          storeLine(dst + j * n + i + 64 * k, static_cast<uint8_t>(j));
  }
  fence();
}

double seconds(const std::function<void()> &run) {
  auto start = std::chrono::steady_clock::now();
  run();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The side n of the largest n x n matrix of `e`-byte elements within
/// `mib` MiB (at least 64).
int64_t sideWithin(int64_t mib, int64_t e) {
  int64_t n = 64;
  while (4 * n * n * e <= (mib << 20))
    n *= 2;
  return n;
}

using Buffer = std::unique_ptr<uint8_t, FreeDeleter>;

/// `bytes` on a page boundary; out of memory, a message and exit 1.
Buffer allocate(int64_t bytes) {
  Buffer buffer(static_cast<uint8_t *>(std::aligned_alloc(4096, bytes)));
  if (!buffer) {
    std::fprintf(stderr, "transpose-pattern: out of memory\n");
    std::exit(1);
  }
  return buffer;
}

[[noreturn]] void usage(int status) {
  std::fprintf(status ? stderr : stdout,
               "usage: transpose-pattern [--mib N] [--runs N] [--threads N] "
               "[--prefetch] [--write-orders]\n");
  std::exit(status);
}

} // namespace

int main(int argc, char **argv) {
  int64_t mib = 64, runs = 9, threads = 1;
  bool prefetch = false, writeOrders = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--mib" || a == "--runs" || a == "--threads") {
      long long v = i + 1 < argc ? std::atoll(argv[++i]) : 0;
      if (v <= 0) {
        std::fprintf(stderr, "transpose-pattern: %s needs a positive number\n",
                     a.c_str());
        return 2;
      }
      (a == "--mib" ? mib : a == "--runs" ? runs : threads) = v;
    } else if (a == "--prefetch") {
      prefetch = true;
    } else if (a == "--write-orders") {
      writeOrders = true;
    } else {
      usage(a == "--help" || a == "-h" ? 0 : 2);
    }
  }

  if (writeOrders) {
    int64_t n = sideWithin(mib, 1), bytes = n * n;
    Buffer src = allocate(bytes), dst = allocate(bytes);
    std::memset(src.get(), 1, bytes);
    std::memset(dst.get(), 0, bytes);
    std::printf("%lld x %lld bytes written with streaming stores alone (no "
                "reads); copy = the best copy of as many bytes, which also "
                "reads them\n",
                static_cast<long long>(n), static_cast<long long>(n));
    std::printf("%-16s %-18s %9s %9s %7s\n", "lines per row", "rows at once",
                "copy ms", "writes ms", "ratio");
    struct Order {
      int64_t lines, rowsAtOnce;
    };
    for (Order o : {Order{1, 0}, Order{2, 0}, Order{4, 0}, Order{4, 16},
                    Order{4, 64}, Order{4, 256}}) {
      std::vector<double> tCopy, tWrites;
      auto run = [&] { writeOrder(dst.get(), n, o.lines, o.rowsAtOnce); };
      auto best = [&] {
        return std::min(
            seconds([&] { copy(src.get(), dst.get(), bytes, true, 1); }),
            seconds([&] { copy(src.get(), dst.get(), bytes, false, 1); }));
      };
      // Every line must be written, with its row's byte.
      std::memset(dst.get(), 0, bytes);
      run();
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < n; ++i)
          if (dst.get()[j * n + i] != static_cast<uint8_t>(j)) {
            std::fprintf(stderr,
                         "transpose-pattern: the write order of %lld lines "
                         "a row missed byte %lld of row %lld\n",
                         static_cast<long long>(o.lines),
                         static_cast<long long>(i), static_cast<long long>(j));
            return 1;
          }
      for (int64_t r = 0; r < runs; ++r) {
        tCopy.push_back(best());
        tWrites.push_back(seconds(run));
      }
      std::string rows = o.rowsAtOnce
                             ? std::to_string(o.rowsAtOnce) + " (line by line)"
                             : "all (back to back)";
      double c = median(tCopy), w = median(tWrites);
      std::printf("%-16lld %-18s %9.2f %9.2f %6.0f%%\n",
                  static_cast<long long>(o.lines), rows.c_str(), c * 1e3,
                  w * 1e3, 100 * c / w);
      std::fflush(stdout);
    }
    return 0;
  }

  std::printf("%-4s %6s %9s %9s %9s %6s\n", "elem", "block", "prefetch",
              "copy GB/s", "pattern", "ratio");
  for (int64_t e : {8, 4, 2, 1}) {
    int64_t n = sideWithin(mib, e), bytes = n * n * e;
    Buffer src = allocate(bytes), dst = allocate(bytes);
    // Each source line starts with its own number, so that the pattern can
    // be checked to move every line exactly where a transpose would.
    std::memset(src.get(), 1, bytes);
    for (int64_t line = 0; line < bytes / 64; ++line)
      std::memcpy(src.get() + line * 64, &line, sizeof line);
    int64_t square = 64 / e;
    for (int64_t block : {square, 4 * square, 16 * square}) {
      if (block > n)
        continue;
      for (bool pf : {false, true}) {
        if (pf && !prefetch)
          continue;
        std::vector<double> tStream, tMemcpy, tPattern;
        auto stream = [&] { copy(src.get(), dst.get(), bytes, true, threads); };
        auto memcpyAll = [&] {
          copy(src.get(), dst.get(), bytes, false, threads);
        };
        auto run = [&] {
          pattern(src.get(), dst.get(), n, e, block, pf, threads);
        };
        std::memset(dst.get(), 0xff, bytes);
        run();
        if (!movesEveryLine(src.get(), dst.get(), n, e)) {
          std::fprintf(stderr,
                       "transpose-pattern: the %lld-byte pattern with "
                       "blocks of %lld did not move every line\n",
                       static_cast<long long>(e),
                       static_cast<long long>(block));
          return 1;
        }
        stream();
        memcpyAll();
        for (int64_t r = 0; r < runs; ++r) {
          tStream.push_back(seconds(stream));
          tMemcpy.push_back(seconds(memcpyAll));
          tPattern.push_back(seconds(run));
        }
        double gb = 2.0 * static_cast<double>(bytes) * 1e-9;
        double c = std::min(median(tStream), median(tMemcpy));
        double p = median(tPattern);
        std::printf("%-4lld %6lld %9s %9.2f %9.2f %5.0f%%\n",
                    static_cast<long long>(e), static_cast<long long>(block),
                    pf ? "yes" : "no", gb / c, gb / p, 100 * c / p);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
