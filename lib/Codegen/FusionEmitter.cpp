//===- FusionEmitter.cpp - Subgraph functions and the loop emitter --------===//
#include "tessel/Codegen/FusionEmitter.h"

#include "ElementalEmitter.h"
#include "ScalarOps.h"
#include "tessel/Codegen/ComputationPartitioner.h"
#include "tessel/Dialect/ErrorDiagnostics.h"
#include "tessel/Dialect/TesselDialect.h"
#include "tessel/Hlo/ScatterDimensions.h"
#include "tessel/Hlo/SortDimensions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

#include <functional>
#include <set>

namespace tessel {

using llvm::SmallVector;
using mlir::Value;

static int64_t elementCount(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape.dims)
    n *= d;
  return n;
}

/// Dims from major to minor in the layout's order.
static std::vector<int64_t> majorToMinor(const Shape &shape) {
  std::vector<int64_t> order = shape.layoutOrDefault().minorToMajor;
  return std::vector<int64_t>(order.rbegin(), order.rend());
}

int64_t getLoopWorkPerElement(const HloComputation &computation) {
  int64_t work = 1;
  for (const auto &instruction : computation.instructions()) {
    switch (instruction->opcode()) {
    case HloOpcode::Reduce: {
      const Shape &result = instruction->shape().isTuple()
                                ? instruction->shape().tupleShapes.front()
                                : instruction->shape();
      work = std::max(
          work,
          std::max<int64_t>(elementCount(instruction->operand(0)->shape()), 1) /
              std::max<int64_t>(elementCount(result), 1));
      break;
    }
    case HloOpcode::ReduceWindow:
    case HloOpcode::Dot:
      // A window or a contraction per element: heavy enough to split.
      work = std::max<int64_t>(work, 64);
      break;
    default:
      break;
    }
  }
  return work;
}

LaunchConfig getLoopLaunchConfig(const Shape &output, Target target,
                                 int64_t workPerElement) {
  int64_t n = std::max<int64_t>(elementCount(output), 1);
  LaunchConfig config;
  if (target == Target::Gpu) {
    std::vector<int64_t> order = majorToMinor(output);
    int64_t minor = order.empty() ? 1 : output.dims[order.back()];
    config.vectorSize = 1;
    for (int64_t v : {4, 2})
      if (n % v == 0 && minor % v == 0) {
        config.vectorSize = v;
        break;
      }
    config.numThreads = std::min<int64_t>(128, n / config.vectorSize);
    // An element that reduces more than 64 elements (a row reduction the
    // row-reduction emitter does not take: a bf16 sum, an argmax) is a
    // long sequential chain: one per thread, in blocks of 32 to 128
    // threads, small enough for 256 blocks where there are elements for
    // them (two per SM of an H100 or H200), not 4 chains per thread in a
    // few blocks.
    if (workPerElement > 64) {
      config.vectorSize = 1;
      int64_t threads = 128;
      while (threads > 32 && n / threads < 256)
        threads /= 2;
      config.numThreads = std::min(threads, n);
    }
  } else {
    // The minor dims' elements, while they fit 16384, or 4096 elements of a
    // longer minor dim.
    constexpr int64_t kMaxThreads = 16384;
    int64_t threads = 1;
    std::vector<int64_t> order = majorToMinor(output);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      int64_t size = output.dims[*it];
      if (threads * size > kMaxThreads) {
        if (threads == 1)
          threads = 4096;
        break;
      }
      threads *= size;
    }
    // An element that reduces a row is much work: blocks of fewer
    // elements, at least 64 of them when there are 64K reads in all, so
    // that every worker gets a share (a row sum of f32[8192,4096] was one
    // block, on one core).
    if (workPerElement > 1 && n * workPerElement >= (int64_t(1) << 16)) {
      int64_t perBlock = std::max<int64_t>(16, (n + 63) / 64);
      threads = std::min(threads, (perBlock + 15) / 16 * 16);
    }
    config.numThreads = std::min(std::max<int64_t>(threads, 1), n);
  }
  int64_t perBlock = config.numThreads * config.vectorSize;
  config.numBlocks = (n + perBlock - 1) / perBlock;
  return config;
}

IndexingMap getLoopThreadToOutputMap(const Shape &output,
                                     const LaunchConfig &config,
                                     mlir::MLIRContext *context) {
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  mlir::AffineExpr bl = mlir::getAffineDimExpr(1, context);
  bool hasVector = config.vectorSize > 1;
  mlir::AffineExpr linear =
      bl * (config.numThreads * config.vectorSize) + th * config.vectorSize;
  if (hasVector)
    linear = linear + mlir::getAffineSymbolExpr(0, context);
  SmallVector<mlir::AffineExpr> results(output.rank());
  int64_t stride = 1;
  std::vector<int64_t> order = output.layoutOrDefault().minorToMajor;
  for (size_t k = 0; k < order.size(); ++k) {
    int64_t dim = order[k];
    mlir::AffineExpr e = stride == 1 ? linear : linear.floorDiv(stride);
    if (k + 1 < order.size())
      e = e % output.dims[dim];
    results[dim] = e;
    stride *= output.dims[dim];
  }
  std::vector<IndexingVariable> dims = {
      IndexingVariable(0, config.numThreads - 1, "th_x"),
      IndexingVariable(0, config.numBlocks - 1, "bl_x")};
  std::vector<IndexingVariable> symbols;
  if (hasVector)
    symbols.push_back(
        IndexingVariable(0, config.vectorSize - 1, "vector_index"));
  IndexingMap map(mlir::AffineMap::get(2, symbols.size(), results, context),
                  dims, symbols, {});
  int64_t n = elementCount(output);
  if (config.numBlocks * config.numThreads * config.vectorSize != n)
    map.addConstraint(linear, Interval(0, n - 1));
  map.simplify();
  return map;
}

//===----------------------------------------------------------------------===//
// The transpose emitter's maps
//===----------------------------------------------------------------------===//

/// The shape of the transpose emitter's tile and threads: `rows` along the
/// dim that becomes minor (the output's rows of a tile are that long),
/// `cols` along the input's minor dim, `threads` per block. On the GPU both
/// phases give each thread 8 elements: `threads / cols` tile rows per pass
/// when reading, `threads / rows` output rows per pass when writing. On
/// the CPU the writing phase has `writeThreads`, one element each: its
/// thread loop (warps of output rows, lanes along a row) then writes each
/// output row's part of the tile whole before the next row, where 8 passes
/// of rows 16 apart, unrolled inside the lane loop, wrote 32 bytes of each
/// of 8 rows in turn. Measured on Zen 3 (thread CPU time, one thread):
/// f32 negate -> transpose -> abs at 4 MiB 0.77 -> 0.54 ms, s8 1.06 ->
/// 0.88 ms; at 64 MiB (streaming stores, memory-bound) within the noise
/// (f32 12.7-14.6 against 12.9-16.0 ms). The reading phase keeps its 8
/// passes: reading each input row's part whole (one element per thread
/// there too) was 1.8x faster in cache but 5-10% slower at 64 MiB, where
/// the passes' 8 rows at once keep more lines in flight.
struct TransposeTiling {
  int64_t rows = 32;
  int64_t cols = 32;
  int64_t threads = 128;
  /// Threads of the writing phase (0: `threads`).
  int64_t writeThreads = 0;
  int64_t threadsOf(bool output) const {
    return output && writeThreads ? writeThreads : threads;
  }
  int64_t launchThreads() const { return std::max(threads, writeThreads); }
  int64_t readRowsPerPass() const { return threads / cols; }
  int64_t writeRowsPerPass() const { return threadsOf(true) / rows; }
  int64_t passesOf(bool output) const {
    return rows * cols / threadsOf(output);
  }
};

/// The GPU's tile: 32x32, 128 threads (32 columns by 4 rows), so that a
/// warp reads one row of the tile. On the CPU a block's tile is 128
/// elements of each of 256 bytes' worth of input rows (f32: 64 rows, bf16:
/// 128, s8: 256; fewer where that does not divide the dim, at least 32),
/// 32 KiB (512 threads a row pass, run as loops): each block reads 128
/// contiguous elements of each of its input rows, which the hardware
/// prefetchers follow, and writes 256 bytes of each of its output rows,
/// four whole lines back to back. Streaming stores of one line to each of
/// many rows in turn write at half a copy's speed (Zen 5, one thread, 64
/// MiB of such stores alone, `transpose-pattern --write-orders`: 7.0 ms
/// one line a row, 1.7-1.8 ms four lines a row, a copy reading as much
/// besides 2.8-3.1). Zen 5, one thread, CPU time, 64 MiB: f32 negate ->
/// transpose -> abs 6.8-7.0 -> 5.6-5.9 ms with 64 rows (32 before: two
/// lines a row), the bf16 transpose (--no-relayout) 9.2 -> 5.8-5.9 (32
/// rows, one line), s8 negate -> transpose -> abs 11.0 -> 7.8-8.0 (64 rows
/// of 256 elements; 256 rows of 256 elements 8.0, 128 rows 8.9). (Earlier,
/// on a Zen 4 VM, s8 at 64 MiB: 18-19% of copy speed with 32x128, 21-27%
/// with 64x128, 30-32% with 64x256.)
static TransposeTiling transposeTiling(const HloInstruction &hero,
                                       Target target) {
  if (target == Target::Gpu)
    return {32, 32, 128};
  // 256 bytes' worth of rows, or fewer that divide the dim that becomes
  // minor, where 128 columns divide the minor dim. Else the tiles of
  // before (32 x 128, s8 64 x 256): ragged tiles cost more than the lines
  // gain (f32 [4000,4096] -> [4096,4000]: 4.9 ms with 32 rows, 15.9 with
  // 64), and where the columns are ragged LLVM no longer made the writing
  // phase's guarded stores vectors (f32 [64,96] -> [96,64] with 64 rows).
  int64_t width = std::max<int64_t>(1, byteWidth(hero.shape().elementType));
  TransposeTiling before = width == 1 ? TransposeTiling{64, 256, 2048, 64 * 256}
                                      : TransposeTiling{32, 128, 512, 32 * 128};
  NormalizedTranspose n = normalizeTranspose(hero);
  if (n.dims[n.minor()] % 128 != 0)
    return before;
  int64_t rows = 256 / width;
  while (rows > before.rows && n.dims[n.toMinor()] % rows != 0)
    rows /= 2;
  if (rows <= before.rows)
    return before;
  return {rows, 128, rows * 128 / 8, rows * 128};
}

int64_t transposeSquareLanes(const HloInstruction &hero, Target target,
                             unsigned squareBits) {
  int64_t width = byteWidth(hero.shape().elementType);
  int64_t lanes = width <= 2 ? 16 : 8;
  if (squareBits >= 512 && (width == 1 || width == 4))
    lanes *= 2;
  // Both sides of every tile are multiples of 32, so of any of these; the
  // loop keeps the squares whole where a tile rule changes.
  TransposeTiling tiling = transposeTiling(hero, target);
  while (lanes > 8 && (tiling.rows % lanes != 0 || tiling.cols % lanes != 0))
    lanes /= 2;
  return lanes;
}

int64_t transposeSquaresAcross(const HloInstruction &hero, Target target,
                               unsigned squareBits) {
  int64_t lanes = transposeSquareLanes(hero, target, squareBits);
  int64_t bits = lanes * 8 * byteWidth(hero.shape().elementType);
  if (byteWidth(hero.shape().elementType) != 2 || 2 * bits > squareBits ||
      transposeTiling(hero, target).cols % (2 * lanes) != 0)
    return 1;
  return 2;
}

/// Whether the kernel transposes its tile in registers between the two
/// phases (the CPU, elements of whole bytes): phase 1 fills the tile as on
/// the GPU, squares of transposeSquareLanes on a side go through vector
/// registers into a second tile of `cols` rows of `rows` elements, and
/// phase 2 reads that one along its rows, so that the thread loop reads
/// consecutive elements instead of gathering a column. Pred elements (a
/// vector of i1 is bits, a tile holds bytes) read the first tile
/// transposed, as on the GPU.
bool transposesInRegisters(const HloInstruction &hero, Target target) {
  return target == Target::Cpu &&
         hero.shape().elementType != PrimitiveType::Pred;
}

// One-byte elements: a zmm a lane loop, where the GPU's 32 lanes made it a
// ymm (the lanes change only how the thread loops split). Zen 5, one
// thread, CPU time, 64 MiB: s8 negate -> transpose -> abs 6.6-7.1 -> 5.9-6.1
// ms, three alternations; for bf16 (a zmm already) no faster, f32 5%
// slower.
int64_t transposeCpuLanes(const HloInstruction &hero, Target target) {
  return transposesInRegisters(hero, target) &&
                 byteWidth(hero.shape().elementType) == 1
             ? 64
             : 32;
}

/// Tiles per normalized dim: `rows` along the dim that becomes minor,
/// `cols` along the minor dim, 1 wide along the others.
static std::vector<int64_t> tileCounts(const NormalizedTranspose &n,
                                       const TransposeTiling &tiling) {
  std::vector<int64_t> counts = n.dims;
  counts[n.toMinor()] = (n.dims[n.toMinor()] + tiling.rows - 1) / tiling.rows;
  counts[n.minor()] = (n.dims[n.minor()] + tiling.cols - 1) / tiling.cols;
  return counts;
}

TransposeLaunch getTransposeLaunch(const HloInstruction &hero,
                                   const NormalizedTranspose &n,
                                   Target target) {
  TransposeTiling tiling = transposeTiling(hero, target);
  TransposeLaunch launch;
  launch.config.numThreads = tiling.launchThreads();
  launch.config.numBlocks = 1;
  for (int64_t count : tileCounts(n, tiling))
    launch.config.numBlocks *= count;
  launch.tileShape.assign(n.dims.size(), 1);
  launch.tileShape[n.toMinor()] = tiling.rows;
  launch.tileShape[n.minor()] = tiling.cols + 1;
  return launch;
}

/// (th_x, bl_x)[i] -> (the real operand index of the transpose..., the tile
/// index...): reading (`output` false), a thread's column runs along the
/// minor dim and its rows along the one that becomes minor; writing, the
/// other way round, and the indices are the result's. With `strip` (the
/// CPU's writing phase, one element a thread: its first tile column and
/// their count), the output rows those columns become alone.
struct TileStrip {
  int64_t first = 0, count = 0;
};
static IndexingMap transposeMap(const HloInstruction &hero,
                                const NormalizedTranspose &n, bool output,
                                Target target, mlir::MLIRContext *context,
                                std::optional<TileStrip> strip = {}) {
  TransposeTiling tiling = transposeTiling(hero, target);
  int64_t colDim = output ? n.toMinor() : n.minor();
  int64_t rowDim = output ? n.minor() : n.toMinor();
  int64_t colSize = output ? tiling.rows : tiling.cols;
  int64_t rowSize = output ? tiling.cols : tiling.rows;
  int64_t rowsPerPass =
      output ? tiling.writeRowsPerPass() : tiling.readRowsPerPass();
  TransposeLaunch launch = getTransposeLaunch(hero, n, target);
  std::vector<int64_t> counts = tileCounts(n, tiling);
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  mlir::AffineExpr bl = mlir::getAffineDimExpr(1, context);
  mlir::AffineExpr i = mlir::getAffineSymbolExpr(0, context);
  int64_t threads = tiling.threadsOf(output);
  int64_t passes = tiling.passesOf(output);
  if (strip) {
    assert(output && passes == 1 && "strips are written one element a thread");
    threads = strip->count * tiling.rows;
    th = th + strip->first * tiling.rows;
  }
  mlir::AffineExpr col = th % colSize;
  mlir::AffineExpr row = th.floorDiv(colSize) + i * rowsPerPass;
  size_t rank = n.dims.size();
  // The block's tile, normalized dims major to minor.
  std::vector<mlir::AffineExpr> normalized(rank);
  int64_t stride = 1;
  for (size_t k = rank; k-- > 0;) {
    mlir::AffineExpr tile = stride == 1 ? bl : bl.floorDiv(stride);
    if (k > 0)
      tile = tile % counts[k];
    stride *= counts[k];
    normalized[k] = tile;
  }
  normalized[colDim] = normalized[colDim] * colSize + col;
  normalized[rowDim] = normalized[rowDim] * rowSize + row;
  // Real operand dims from the merged normalized ones.
  const std::vector<int64_t> &operandDims = hero.operand(0)->shape().dims;
  std::vector<mlir::AffineExpr> operand(
      operandDims.size(), mlir::getAffineConstantExpr(0, context));
  for (size_t k = 0; k < rank; ++k) {
    const std::vector<int64_t> &group = n.groups[k];
    int64_t inner = 1;
    for (size_t j = group.size(); j-- > 0;) {
      mlir::AffineExpr e =
          inner == 1 ? normalized[k] : normalized[k].floorDiv(inner);
      if (j > 0)
        e = e % operandDims[group[j]];
      operand[group[j]] = e;
      inner *= operandDims[group[j]];
    }
  }
  SmallVector<mlir::AffineExpr> results;
  if (output) {
    for (int64_t d : logicalPermutation(hero))
      results.push_back(operand[d]);
  } else {
    results.assign(operand.begin(), operand.end());
  }
  if (output && transposesInRegisters(hero, target)) {
    // The transposed tile: `cols` rows (the output's rows) of `rows`.
    results.push_back(row);
    results.push_back(col);
  } else {
    for (size_t k = 0; k < rank; ++k)
      results.push_back(static_cast<int64_t>(k) == colDim ? col
                        : static_cast<int64_t>(k) == rowDim
                            ? row
                            : mlir::getAffineConstantExpr(0, context));
  }
  std::vector<IndexingVariable> dims = {
      IndexingVariable(0, threads - 1, "th_x"),
      IndexingVariable(0, launch.config.numBlocks - 1, "bl_x")};
  std::vector<IndexingVariable> symbols = {
      IndexingVariable(0, passes - 1, "i")};
  IndexingMap map(mlir::AffineMap::get(2, symbols.size(), results, context),
                  dims, symbols, {});
  for (auto [d, size] :
       {std::pair(colDim, colSize), std::pair(rowDim, rowSize)})
    if (n.dims[d] % size != 0)
      map.addConstraint(normalized[d], Interval(0, n.dims[d] - 1));
  map.simplify();
  return map;
}

IndexingMap getTransposeReadMap(const HloInstruction &hero,
                                const NormalizedTranspose &n,
                                mlir::MLIRContext *context, Target target) {
  return transposeMap(hero, n, /*output=*/false, target, context);
}

IndexingMap getTransposeWriteMap(const HloInstruction &hero,
                                 const NormalizedTranspose &n,
                                 mlir::MLIRContext *context, Target target) {
  return transposeMap(hero, n, /*output=*/true, target, context);
}

/// Between the phases on the CPU, for the strip of the tile's columns from
/// `firstColumn` on, one square wide: (th_x, bl_x) -> (the first row, the
/// first column) of the square that thread th_x transposes, one square a
/// thread down the tile's rows; the threads past them do nothing (th_x's
/// range is the squares').
static IndexingMap transposeSquaresMap(const HloInstruction &hero,
                                       const NormalizedTranspose &n,
                                       int64_t lanes, int64_t firstColumn,
                                       Target target,
                                       mlir::MLIRContext *context) {
  TransposeTiling tiling = transposeTiling(hero, target);
  TransposeLaunch launch = getTransposeLaunch(hero, n, target);
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  SmallVector<mlir::AffineExpr> results = {
      th * lanes, mlir::getAffineConstantExpr(firstColumn, context)};
  std::vector<IndexingVariable> dims = {
      IndexingVariable(0, tiling.rows / lanes - 1, "th_x"),
      IndexingVariable(0, launch.config.numBlocks - 1, "bl_x")};
  return IndexingMap(mlir::AffineMap::get(2, 0, results, context), dims, {},
                     {});
}

//===----------------------------------------------------------------------===//
// The column-reduction emitter's maps
//===----------------------------------------------------------------------===//

static constexpr int64_t kReductionThreads = 256;
/// On the CPU, a batch of column reductions (the segments of a column sum)
/// gives a block a whole row of up to this many elements, so that a block
/// reads its rows in one sweep; the accumulators stay in L1.
static constexpr int64_t kCpuRowThreads = 4096;

int64_t columnReductionRowsPerStep(const ColumnReduction &r) {
  for (int64_t u : {8, 4, 2})
    if (r.rows % u == 0)
      return u;
  return 1;
}

LaunchConfig getColumnReductionLaunch(const ColumnReduction &r, Target target) {
  LaunchConfig config;
  int64_t width = kReductionThreads;
  if (target == Target::Cpu && r.rowColumns < r.columns)
    width = std::min(r.rowColumns, kCpuRowThreads);
  config.numThreads = std::min(r.columns, width);
  config.numBlocks = (r.columns + config.numThreads - 1) / config.numThreads;
  return config;
}

/// The operand index of column `column` (over the kept dims, physically
/// major to minor) and row `row` (over the reduced dims in increasing
/// order); size-1 dims are 0.
static std::vector<mlir::AffineExpr>
reductionOperandIndex(const Shape &operand, const ColumnReduction &r,
                      mlir::AffineExpr column, mlir::AffineExpr row,
                      mlir::MLIRContext *context) {
  std::vector<mlir::AffineExpr> index(operand.rank(),
                                      mlir::getAffineConstantExpr(0, context));
  auto delinearize = [&](const std::vector<int64_t> &dims,
                         mlir::AffineExpr linear) {
    int64_t stride = 1;
    for (size_t j = dims.size(); j-- > 0;) {
      mlir::AffineExpr e = stride == 1 ? linear : linear.floorDiv(stride);
      if (j > 0)
        e = e % operand.dims[dims[j]];
      index[dims[j]] = e;
      stride *= operand.dims[dims[j]];
    }
  };
  delinearize(r.keptDims, column);
  if (row)
    delinearize(r.reducedDims, row);
  return index;
}

static IndexingMap reductionMap(const HloInstruction &reduce,
                                const ColumnReduction &r, bool read,
                                mlir::MLIRContext *context, Target target) {
  LaunchConfig config = getColumnReductionLaunch(r, target);
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  mlir::AffineExpr bl = mlir::getAffineDimExpr(1, context);
  mlir::AffineExpr column = bl * config.numThreads + th;
  mlir::AffineExpr row = read ? mlir::getAffineDimExpr(2, context) : nullptr;
  const Shape &operand = reduce.operand(0)->shape();
  std::vector<mlir::AffineExpr> index =
      reductionOperandIndex(operand, r, column, row, context);
  SmallVector<mlir::AffineExpr> results;
  if (read) {
    results.assign(index.begin(), index.end());
  } else {
    std::vector<bool> isReduced(operand.rank(), false);
    for (int64_t d : reduce.dimensions())
      isReduced[d] = true;
    for (int64_t d = 0; d < operand.rank(); ++d)
      if (!isReduced[d])
        results.push_back(index[d]);
  }
  results.push_back(th);
  std::vector<IndexingVariable> dims = {
      IndexingVariable(0, config.numThreads - 1, "th_x"),
      IndexingVariable(0, config.numBlocks - 1, "bl_x")};
  if (read)
    dims.push_back(IndexingVariable(0, r.rows - 1, "row"));
  IndexingMap map(mlir::AffineMap::get(dims.size(), 0, results, context), dims,
                  {}, {});
  if (r.columns % config.numThreads != 0)
    map.addConstraint(column, Interval(0, r.columns - 1));
  map.simplify();
  return map;
}

IndexingMap getColumnReductionReadMap(const HloInstruction &reduce,
                                      const ColumnReduction &r,
                                      mlir::MLIRContext *context,
                                      Target target) {
  return reductionMap(reduce, r, /*read=*/true, context, target);
}

IndexingMap getColumnReductionWriteMap(const HloInstruction &reduce,
                                       const ColumnReduction &r,
                                       mlir::MLIRContext *context,
                                       Target target) {
  return reductionMap(reduce, r, /*read=*/false, context, target);
}

//===----------------------------------------------------------------------===//
// The GPU's row-reduction emitter's maps
//===----------------------------------------------------------------------===//

/// Rows per block (at most, when the partial results fit).
static constexpr int64_t kRowReductionRows = 16;
/// Chunks a thread of the row reduction reads before it combines them.
static constexpr int64_t kRowReductionUnroll = 8;

RowReductionLaunch getRowReductionLaunch(const RowReduction &r) {
  RowReductionLaunch launch;
  int64_t rows = std::min(kRowReductionRows, r.rows);
  while (rows > 1 && rows * r.outer * kRowReductionLanes * r.elementBytes >
                         kRowReductionTileBytes)
    rows /= 2;
  launch.rowsPerBlock = rows;
  launch.config.numThreads = rows * kRowReductionLanes;
  launch.config.numBlocks = (r.rows + rows - 1) / rows;
  launch.tileShape = {rows, r.outer, kRowReductionLanes};
  return launch;
}

/// The output index of row `row` (walked in the output's layout order, so
/// that consecutive rows are consecutive in memory) and the operand index
/// of its element at (outer, minor): the kept dims are the output's dims
/// in order, the outer run is row-major over the other reduced dims.
static void rowReductionIndices(const HloInstruction &reduce,
                                const RowReduction &r, mlir::AffineExpr row,
                                mlir::AffineExpr outer, mlir::AffineExpr minor,
                                SmallVector<mlir::AffineExpr> *output,
                                SmallVector<mlir::AffineExpr> *operandIndex,
                                mlir::MLIRContext *context) {
  mlir::AffineExpr zero = mlir::getAffineConstantExpr(0, context);
  const Shape &result = reduce.shape();
  output->assign(result.rank(), zero);
  std::vector<int64_t> order = result.layoutOrDefault().minorToMajor;
  int64_t stride = 1;
  for (size_t k = 0; k < order.size(); ++k) {
    int64_t dim = order[k];
    mlir::AffineExpr e = stride == 1 ? row : row.floorDiv(stride);
    if (k + 1 < order.size())
      e = e % result.dims[dim];
    (*output)[dim] = e;
    stride *= result.dims[dim];
  }
  if (!operandIndex)
    return;
  const Shape &operand = reduce.operand(0)->shape();
  operandIndex->assign(operand.rank(), zero);
  std::vector<bool> isReduced(operand.rank(), false);
  for (int64_t d : reduce.dimensions())
    isReduced[d] = true;
  size_t kept = 0;
  for (int64_t d = 0; d < operand.rank(); ++d)
    if (!isReduced[d])
      (*operandIndex)[d] = (*output)[kept++];
  stride = 1;
  for (size_t j = r.outerDims.size(); j-- > 0;) {
    int64_t dim = r.outerDims[j];
    mlir::AffineExpr e = stride == 1 ? outer : outer.floorDiv(stride);
    if (j > 0)
      e = e % operand.dims[dim];
    (*operandIndex)[dim] = e;
    stride *= operand.dims[dim];
  }
  (*operandIndex)[r.minorDim] = minor;
}

/// A row-reduction map over `dims` (th_x and bl_x first) with `results`,
/// restricted to real rows and, with `firstLane`, to lane 0 of each row.
static IndexingMap rowReductionMap(const RowReduction &r,
                                   const RowReductionLaunch &launch,
                                   std::vector<IndexingVariable> dims,
                                   llvm::ArrayRef<mlir::AffineExpr> results,
                                   unsigned numSymbols, bool firstLane,
                                   mlir::MLIRContext *context) {
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  mlir::AffineExpr bl = mlir::getAffineDimExpr(1, context);
  std::vector<IndexingVariable> symbols;
  if (numSymbols)
    symbols.push_back(IndexingVariable(0, r.outer - 1, "outer"));
  size_t numDims = dims.size();
  IndexingMap map(mlir::AffineMap::get(numDims, numSymbols, results, context),
                  std::move(dims), std::move(symbols), {});
  if (r.rows % launch.rowsPerBlock != 0)
    map.addConstraint(bl * launch.rowsPerBlock +
                          th.floorDiv(kRowReductionLanes),
                      Interval(0, r.rows - 1));
  if (firstLane)
    map.addConstraint(th % kRowReductionLanes, Interval(0, 0));
  map.simplify();
  return map;
}

static std::vector<IndexingVariable>
rowReductionDims(const RowReductionLaunch &launch) {
  return {IndexingVariable(0, launch.config.numThreads - 1, "th_x"),
          IndexingVariable(0, launch.config.numBlocks - 1, "bl_x")};
}

IndexingMap getRowReductionReadMap(const HloInstruction &reduce,
                                   const RowReduction &r,
                                   mlir::MLIRContext *context) {
  RowReductionLaunch launch = getRowReductionLaunch(r);
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  mlir::AffineExpr bl = mlir::getAffineDimExpr(1, context);
  mlir::AffineExpr outer = mlir::getAffineDimExpr(2, context);
  mlir::AffineExpr chunk = mlir::getAffineDimExpr(3, context);
  mlir::AffineExpr lane = th % kRowReductionLanes;
  mlir::AffineExpr rowInBlock = th.floorDiv(kRowReductionLanes);
  SmallVector<mlir::AffineExpr> output, results;
  rowReductionIndices(reduce, r, bl * launch.rowsPerBlock + rowInBlock, outer,
                      chunk * kRowReductionLanes + lane, &output, &results,
                      context);
  results.append({rowInBlock, outer, lane});
  std::vector<IndexingVariable> dims = rowReductionDims(launch);
  dims.push_back(IndexingVariable(0, r.outer - 1, "outer"));
  dims.push_back(
      IndexingVariable(0, r.minor / kRowReductionLanes - 1, "chunk"));
  return rowReductionMap(r, launch, std::move(dims), results, 0,
                         /*firstLane=*/false, context);
}

IndexingMap getRowReductionTailMap(const HloInstruction &reduce,
                                   const RowReduction &r,
                                   mlir::MLIRContext *context) {
  RowReductionLaunch launch = getRowReductionLaunch(r);
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  mlir::AffineExpr bl = mlir::getAffineDimExpr(1, context);
  mlir::AffineExpr outer = mlir::getAffineDimExpr(2, context);
  mlir::AffineExpr t = mlir::getAffineDimExpr(3, context);
  int64_t whole = r.minor / kRowReductionLanes * kRowReductionLanes;
  SmallVector<mlir::AffineExpr> output, results;
  rowReductionIndices(
      reduce, r, bl * launch.rowsPerBlock + th.floorDiv(kRowReductionLanes),
      outer, t + whole, &output, &results, context);
  std::vector<IndexingVariable> dims = rowReductionDims(launch);
  dims.push_back(IndexingVariable(0, r.outer - 1, "outer"));
  dims.push_back(IndexingVariable(0, r.minor - whole - 1, "t"));
  return rowReductionMap(r, launch, std::move(dims), results, 0,
                         /*firstLane=*/true, context);
}

IndexingMap getRowReductionWriteMap(const HloInstruction &reduce,
                                    const RowReduction &r,
                                    mlir::MLIRContext *context) {
  RowReductionLaunch launch = getRowReductionLaunch(r);
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  mlir::AffineExpr bl = mlir::getAffineDimExpr(1, context);
  mlir::AffineExpr rowInBlock = th.floorDiv(kRowReductionLanes);
  SmallVector<mlir::AffineExpr> results;
  rowReductionIndices(reduce, r, bl * launch.rowsPerBlock + rowInBlock, nullptr,
                      nullptr, &results, nullptr, context);
  results.push_back(rowInBlock);
  return rowReductionMap(r, launch, rowReductionDims(launch), results, 0,
                         /*firstLane=*/true, context);
}

/// Phase 1's loop: (th_x, bl_x)[outer] -> the tile slot (th_x floordiv 16,
/// outer, th_x mod 16) of the thread's partial result of run `outer`.
static IndexingMap getRowReductionSlotMap(const RowReduction &r,
                                          mlir::MLIRContext *context) {
  RowReductionLaunch launch = getRowReductionLaunch(r);
  mlir::AffineExpr th = mlir::getAffineDimExpr(0, context);
  return rowReductionMap(r, launch, rowReductionDims(launch),
                         {th.floorDiv(kRowReductionLanes),
                          mlir::getAffineSymbolExpr(0, context),
                          th % kRowReductionLanes},
                         1, /*firstLane=*/false, context);
}

std::vector<FusionOutput> getFusionOutputs(const HloComputation &computation) {
  std::vector<FusionOutput> outputs;
  const HloInstruction *root = computation.root();
  std::vector<const HloInstruction *> values;
  if (root->opcode() == HloOpcode::Tuple)
    values.assign(root->operands().begin(), root->operands().end());
  else
    values.push_back(root);
  for (const HloInstruction *value : values) {
    if (!value->shape().isTuple()) {
      outputs.push_back({value, -1});
      continue;
    }
    for (size_t k = 0; k < value->shape().tupleShapes.size(); ++k)
      outputs.push_back({value, static_cast<int64_t>(k)});
  }
  return outputs;
}

namespace {

/// Reports "cannot compile %name: WHY" as an error diagnostic at the
/// instruction's line and column (Dialect/ErrorDiagnostics.h).
mlir::LogicalResult cannotCompile(const HloInstruction &instruction,
                                  mlir::MLIRContext *context,
                                  const std::string &why) {
  return mlir::emitError(
             locationOf(instruction, mlir::UnknownLoc::get(context)))
         << "cannot compile %" << instruction.name() << ": " << why;
}

/// Emits the functions of one partitioned computation.
class FusionEmitter {
public:
  FusionEmitter(mlir::ModuleOp module, const HloComputation &computation,
                const PartitionedComputation &partition, std::string prefix,
                unsigned squareBits = 256)
      : module(module), computation(computation), partition(partition),
        prefix(std::move(prefix)), squareBits(squareBits),
        b(module.getContext()) {}

  /// Emits the function of every subgraph but those `skip` says the entry
  /// emits itself.
  mlir::LogicalResult
  emitSubgraphs(const std::function<bool(const Subgraph &)> &skip = nullptr);
  mlir::FailureOr<mlir::func::FuncOp>
  emitLoopEntry(llvm::StringRef name, Target target,
                llvm::ArrayRef<int64_t> selected);
  mlir::FailureOr<mlir::func::FuncOp>
  emitTransposeEntry(llvm::StringRef name, const FusionAnalysis &analysis,
                     const FusionOutput &output, Target target);
  mlir::FailureOr<mlir::func::FuncOp>
  emitColumnReductionEntry(llvm::StringRef name, const FusionAnalysis &analysis,
                           const FusionOutput &output, Target target);
  mlir::FailureOr<mlir::func::FuncOp>
  emitRowReductionEntry(llvm::StringRef name, const FusionAnalysis &analysis,
                        const FusionOutput &output);
  mlir::FailureOr<mlir::func::FuncOp>
  emitConcatenateEntry(llvm::StringRef name, const FusionAnalysis &analysis,
                       const FusionOutput &output, Target target);
  mlir::FailureOr<mlir::func::FuncOp>
  emitDynamicUpdateSliceEntry(llvm::StringRef name,
                              const FusionAnalysis &analysis,
                              const FusionOutput &output, Target target);
  mlir::FailureOr<mlir::func::FuncOp>
  emitScatterEntry(llvm::StringRef name, const FusionAnalysis &analysis,
                   llvm::ArrayRef<FusionOutput> outputs, Target target);
  mlir::FailureOr<mlir::func::FuncOp>
  emitInputSlicesEntry(llvm::StringRef name, const FusionAnalysis &analysis,
                       llvm::ArrayRef<FusionOutput> outputs, Target target);
  mlir::FailureOr<mlir::func::FuncOp>
  emitSortEntry(llvm::StringRef name, const FusionAnalysis &analysis,
                llvm::ArrayRef<FusionOutput> outputs, Target target);

private:
  mlir::LogicalResult emitSubgraph(const Subgraph &subgraph);
  /// The value(s) of `instruction` read from outside the subgraph being
  /// emitted: a parameter tensor or a call of another subgraph.
  SmallVector<Value> readOutside(const HloInstruction &instruction,
                                 mlir::ValueRange params,
                                 mlir::ValueRange indices);
  /// For a hero emitter's own ElementalEmitter: parameters and other
  /// subgraphs' roots are read (readOutside), anything else (a constant, a
  /// start index computed in place) is emitted where it is used.
  ElementalEmitter::OperandProvider
  parametersAndRootsFromOutside(mlir::ValueRange params);
  SmallVector<mlir::Type> paramTypes();

  /// The entry function of a hero emitter (transpose, column reduction,
  /// concatenate): its signature and launch attributes, the thread and
  /// block ids, and the shared tile of the hero's element type (none for an
  /// empty `tileShape`).
  /// A kernel's entry function with the launch's attributes, its body
  /// started with the thread and block ids: parameters, then one output
  /// tensor per `outputs`.
  struct KernelEntry {
    mlir::func::FuncOp function;
    mlir::ValueRange params, outs;
    mlir::Value th, bl;
  };
  /// `scratch`: tensors the kernel takes (and returns) after its outputs,
  /// at the end of `outs` (PlannedKernel::scratch).
  KernelEntry beginEntry(llvm::StringRef name,
                         llvm::ArrayRef<FusionOutput> outputs,
                         const LaunchConfig &config,
                         llvm::ArrayRef<mlir::Type> scratch = {});
  struct HeroEntry {
    mlir::func::FuncOp function;
    mlir::ValueRange params; ///< the parameter tensors (block arguments)
    mlir::Value out, th, bl, tile;
  };
  mlir::FailureOr<HeroEntry> beginHeroEntry(llvm::StringRef name,
                                            const HloInstruction &hero,
                                            const FusionOutput &output,
                                            const LaunchConfig &config,
                                            llvm::ArrayRef<int64_t> tileShape);
  /// The output's element at `outIndices`: its subgraph (the epilogue)
  /// emitted here with `heroValue` for the hero's; anything else it reads
  /// comes from outside. Null (after an error diagnostic) when it cannot be
  /// emitted.
  /// The first value of `instruction` at `at`, emitted element by element
  /// with `provider`; null, with `failed` set, when it cannot be emitted
  /// (the emitter has reported why).
  mlir::Value emitFirstValue(const ElementalEmitter::OperandProvider &provider,
                             bool &failed, const HloInstruction &instruction,
                             mlir::ValueRange at) {
    ElementalEmitter emitter(b, provider);
    auto values = emitter.emit(instruction, at);
    if (mlir::failed(values)) {
      failed = true;
      return nullptr;
    }
    return values->front();
  }
  mlir::Value emitEpilogue(const HeroEntry &e, const HloInstruction &hero,
                           const FusionOutput &output, mlir::Value heroValue,
                           mlir::ValueRange outIndices);
  /// The last phase: the output written through `writeMap` ((th_x, bl_x)
  /// -> (output index..., tile index...)), its subgraph emitted here with
  /// the hero's value read from `tile`; then the return.
  mlir::FailureOr<mlir::func::FuncOp>
  finishHeroEntry(const HeroEntry &e, const HloInstruction &hero,
                  const FusionOutput &output, const IndexingMap &writeMap,
                  mlir::Value tile);
  /// finishHeroEntry's loop alone, writing into `out`: returns the output
  /// it yields.
  mlir::FailureOr<mlir::Value> emitHeroWrite(const HeroEntry &e,
                                             const HloInstruction &hero,
                                             const FusionOutput &output,
                                             const IndexingMap &writeMap,
                                             mlir::Value tile, mlir::Value out);
  /// On the CPU, between the transpose emitter's phases: the squares of
  /// the strip of `tile` (after the barrier) from column `firstColumn` on,
  /// `across` squares of `lanes` wide (a vector holds a row of each),
  /// transposed in registers into `transposed` (the second tile), behind a
  /// barrier; returns the second tile.
  mlir::Value emitTileTranspose(const HloInstruction &hero,
                                const NormalizedTranspose &n, mlir::Value tile,
                                mlir::Value transposed, int64_t lanes,
                                int64_t across, int64_t firstColumn,
                                const HeroEntry &e, Target target);

  mlir::ModuleOp module;
  const HloComputation &computation;
  const PartitionedComputation &partition;
  std::string prefix;
  /// The transpose squares' widest rows (transposeSquareLanes).
  unsigned squareBits;
  mlir::OpBuilder b;
  llvm::DenseMap<const Subgraph *, mlir::func::FuncOp> functions;
};

SmallVector<mlir::Type> FusionEmitter::paramTypes() {
  SmallVector<mlir::Type> types;
  for (HloInstruction *param : computation.parameters())
    types.push_back(getTensorType(param->shape(), b.getContext()));
  return types;
}

ElementalEmitter::OperandProvider
FusionEmitter::parametersAndRootsFromOutside(mlir::ValueRange params) {
  return
      [this, params](const HloInstruction &instruction,
                     mlir::ValueRange at) -> std::optional<SmallVector<Value>> {
        if (instruction.parent() != &computation)
          return std::nullopt;
        const Subgraph *subgraph = partition.subgraphOf(instruction);
        if (instruction.opcode() == HloOpcode::Parameter ||
            (subgraph && subgraph->roots.front() == &instruction))
          return readOutside(instruction, params, at);
        return std::nullopt;
      };
}

SmallVector<Value> FusionEmitter::readOutside(const HloInstruction &instruction,
                                              mlir::ValueRange params,
                                              mlir::ValueRange indices) {
  mlir::Location loc = b.getUnknownLoc();
  if (instruction.opcode() == HloOpcode::Parameter) {
    Value tensor = params[instruction.parameterNumber()];
    return {b.create<mlir::tensor::ExtractOp>(loc, tensor, indices)};
  }
  const Subgraph *callee = partition.subgraphOf(instruction);
  mlir::func::FuncOp function = functions.lookup(callee);
  SmallVector<Value> args(params.begin(), params.end());
  args.append(indices.begin(), indices.end());
  auto call = b.create<PureCallOp>(loc, function, args);
  // A function of several roots returns one value per root.
  auto it = llvm::find(callee->roots, &instruction);
  size_t first = 0;
  for (auto root = callee->roots.begin(); root != it; ++root)
    first +=
        (*root)->shape().isTuple() ? (*root)->shape().tupleShapes.size() : 1;
  size_t count = instruction.shape().isTuple()
                     ? instruction.shape().tupleShapes.size()
                     : 1;
  auto results = call.getResults().slice(first, count);
  return SmallVector<Value>(results.begin(), results.end());
}

mlir::LogicalResult FusionEmitter::emitSubgraph(const Subgraph &subgraph) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const Shape &rootShape = subgraph.roots.front()->shape();
  const Shape &indexShape =
      rootShape.isTuple() ? rootShape.tupleShapes.front() : rootShape;
  SmallVector<mlir::Type> inputs = paramTypes();
  size_t numParams = inputs.size();
  inputs.append(indexShape.rank(), b.getIndexType());
  SmallVector<mlir::Type> results;
  for (const HloInstruction *root : subgraph.roots) {
    const Shape &shape = root->shape();
    for (const Shape &s :
         shape.isTuple() ? shape.tupleShapes : std::vector<Shape>{shape}) {
      std::string typeError;
      mlir::Type t = getStorageType(s.elementType, context, &typeError);
      if (!t) {
        return cannotCompile(*root, module.getContext(), typeError);
      }
      results.push_back(t);
    }
  }
  b.setInsertionPointToEnd(module.getBody());
  auto function = b.create<mlir::func::FuncOp>(
      loc, prefix + subgraph.name, b.getFunctionType(inputs, results));
  function.setPrivate();
  mlir::Block *body = function.addEntryBlock();
  b.setInsertionPointToStart(body);
  mlir::ValueRange params = body->getArguments().take_front(numParams);
  mlir::ValueRange indices = body->getArguments().drop_front(numParams);

  llvm::DenseSet<const HloInstruction *> members(subgraph.instructions.begin(),
                                                 subgraph.instructions.end());
  ElementalEmitter emitter(
      b,
      [&](const HloInstruction &instruction,
          mlir::ValueRange at) -> std::optional<SmallVector<Value>> {
        if (instruction.parent() != &computation || members.count(&instruction))
          return std::nullopt;
        return readOutside(instruction, params, at);
      });
  SmallVector<Value> returned;
  for (const HloInstruction *root : subgraph.roots) {
    auto values = emitter.emit(*root, indices);
    if (mlir::failed(values))
      return mlir::failure();
    returned.append(values->begin(), values->end());
  }
  b.create<mlir::func::ReturnOp>(loc, returned);
  functions[&subgraph] = function;
  return mlir::success();
}

mlir::LogicalResult FusionEmitter::emitSubgraphs(
    const std::function<bool(const Subgraph &)> &skip) {
  for (const Subgraph &subgraph : partition.subgraphs)
    if ((!skip || !skip(subgraph)) && mlir::failed(emitSubgraph(subgraph)))
      return mlir::failure();
  return mlir::success();
}

mlir::FailureOr<mlir::func::FuncOp>
FusionEmitter::emitLoopEntry(llvm::StringRef name, Target target,
                             llvm::ArrayRef<int64_t> selected) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  std::vector<FusionOutput> all = getFusionOutputs(computation);
  std::vector<FusionOutput> outputs;
  if (selected.empty())
    outputs = all;
  for (int64_t i : selected)
    outputs.push_back(all[i]);
  for (const FusionOutput &output : outputs) {
    if (!output.shape().isArray()) {
      return cannotCompile(*output.instruction, module.getContext(),
                           "a fusion output must be an array (nested tuples "
                           "are not supported)");
    }
    if (output.shape().dims != outputs.front().shape().dims) {
      return cannotCompile(
          *computation.root(), module.getContext(),
          "the outputs of a loop fusion must have the same dims, %" +
              outputs.front().instruction->name() + " and %" +
              output.instruction->name() + " differ");
    }
  }
  const Shape &shape = outputs.front().shape();
  LaunchConfig config =
      getLoopLaunchConfig(shape, target, getLoopWorkPerElement(computation));
  IndexingMap map = getLoopThreadToOutputMap(shape, config, context);

  KernelEntry e = beginEntry(name, outputs, config);
  mlir::func::FuncOp entry = e.function;
  mlir::ValueRange params = e.params, outs = e.outs;
  Value th = e.th, bl = e.bl;
  auto loop = b.create<LoopOp>(
      loc, map, mlir::ValueRange{th, bl}, outs,
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange indices, mlir::ValueRange iters) {
        SmallVector<Value> next;
        for (auto [k, output] : llvm::enumerate(outputs)) {
          SmallVector<Value> values =
              readOutside(*output.instruction, params, indices);
          Value value = values[std::max<int64_t>(output.element, 0)];
          next.push_back(
              nb.create<mlir::tensor::InsertOp>(l, value, iters[k], indices));
        }
        nb.create<YieldOp>(l, next);
      });
  b.create<mlir::func::ReturnOp>(loc, loop.getResults());
  return entry;
}

FusionEmitter::KernelEntry FusionEmitter::beginEntry(
    llvm::StringRef name, llvm::ArrayRef<FusionOutput> outputs,
    const LaunchConfig &config, llvm::ArrayRef<mlir::Type> scratch) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  SmallVector<mlir::Type> inputs = paramTypes();
  size_t numParams = inputs.size();
  SmallVector<mlir::Type> resultTypes;
  for (const FusionOutput &output : outputs)
    resultTypes.push_back(getTensorType(output.shape(), context));
  resultTypes.append(scratch.begin(), scratch.end());
  inputs.append(resultTypes.begin(), resultTypes.end());
  b.setInsertionPointToEnd(module.getBody());
  KernelEntry e;
  e.function = b.create<mlir::func::FuncOp>(
      loc, name, b.getFunctionType(inputs, resultTypes));
  e.function->setAttr("tessel.num_threads",
                      b.getI64IntegerAttr(config.numThreads));
  e.function->setAttr("tessel.num_blocks",
                      b.getI64IntegerAttr(config.numBlocks));
  mlir::Block *body = e.function.addEntryBlock();
  b.setInsertionPointToStart(body);
  e.params = body->getArguments().take_front(numParams);
  e.outs = body->getArguments().drop_front(numParams);
  e.th = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x,
                                         b.getIndexAttr(config.numThreads));
  e.bl = b.create<mlir::gpu::BlockIdOp>(loc, mlir::gpu::Dimension::x,
                                        b.getIndexAttr(config.numBlocks));
  return e;
}

mlir::FailureOr<FusionEmitter::HeroEntry>
FusionEmitter::beginHeroEntry(llvm::StringRef name, const HloInstruction &hero,
                              const FusionOutput &output,
                              const LaunchConfig &config,
                              llvm::ArrayRef<int64_t> tileShape) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  std::string typeError;
  mlir::Type element =
      getStorageType(hero.shape().elementType, context, &typeError);
  if (!element) {
    return cannotCompile(hero, module.getContext(), typeError);
  }
  KernelEntry k = beginEntry(name, {output}, config);
  HeroEntry e;
  e.function = k.function;
  e.params = k.params;
  e.out = k.outs.front();
  e.th = k.th;
  e.bl = k.bl;
  if (!tileShape.empty())
    e.tile = b.create<AllocateSharedOp>(
        loc, mlir::RankedTensorType::get(tileShape, element));
  return e;
}

Value FusionEmitter::emitEpilogue(const HeroEntry &e,
                                  const HloInstruction &hero,
                                  const FusionOutput &output, Value heroValue,
                                  mlir::ValueRange outIndices) {
  const Subgraph *rootSubgraph = partition.subgraphOf(*output.instruction);
  llvm::DenseSet<const HloInstruction *> members;
  if (rootSubgraph && output.instruction != &hero)
    members.insert(rootSubgraph->instructions.begin(),
                   rootSubgraph->instructions.end());
  ElementalEmitter emitter(
      b,
      [&](const HloInstruction &instruction,
          mlir::ValueRange at) -> std::optional<SmallVector<Value>> {
        if (&instruction == &hero)
          return SmallVector<Value>{heroValue};
        if (instruction.parent() != &computation || members.count(&instruction))
          return std::nullopt;
        return readOutside(instruction, e.params, at);
      });
  auto values = emitter.emit(*output.instruction, outIndices);
  if (mlir::failed(values))
    return nullptr;
  return values->front();
}

mlir::FailureOr<Value> FusionEmitter::emitHeroWrite(const HeroEntry &e,
                                                    const HloInstruction &hero,
                                                    const FusionOutput &output,
                                                    const IndexingMap &writeMap,
                                                    Value tile, Value out) {
  mlir::Location loc = b.getUnknownLoc();
  size_t outputRank = hero.shape().rank();
  bool failed = false;
  auto write = b.create<LoopOp>(
      loc, writeMap, mlir::ValueRange{e.th, e.bl}, mlir::ValueRange{out},
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange indices, mlir::ValueRange iters) {
        mlir::ValueRange outIndices = indices.take_front(outputRank);
        Value fromTile = b.create<mlir::tensor::ExtractOp>(
            l, tile, indices.drop_front(outputRank));
        Value value = emitEpilogue(e, hero, output, fromTile, outIndices);
        if (!value) {
          failed = true;
          value = fromTile;
        }
        Value inserted =
            b.create<mlir::tensor::InsertOp>(l, value, iters[0], outIndices);
        b.create<YieldOp>(l, inserted);
      });
  if (failed)
    return mlir::failure();
  return write.getResult(0);
}

mlir::FailureOr<mlir::func::FuncOp>
FusionEmitter::finishHeroEntry(const HeroEntry &e, const HloInstruction &hero,
                               const FusionOutput &output,
                               const IndexingMap &writeMap, Value tile) {
  mlir::FailureOr<Value> written =
      emitHeroWrite(e, hero, output, writeMap, tile, e.out);
  if (mlir::failed(written))
    return mlir::failure();
  b.create<mlir::func::ReturnOp>(b.getUnknownLoc(), *written);
  return e.function;
}

mlir::FailureOr<mlir::func::FuncOp>
FusionEmitter::emitTransposeEntry(llvm::StringRef name,
                                  const FusionAnalysis &analysis,
                                  const FusionOutput &output, Target target) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const HloInstruction &hero = *analysis.hero;
  TransposeLaunch launch = getTransposeLaunch(hero, analysis.transpose, target);
  auto e = beginHeroEntry(name, hero, output, launch.config, launch.tileShape);
  if (mlir::failed(e))
    return mlir::failure();

  // Phase 1: the hero's operand, read along the input's minor dim, into
  // the tile.
  const HloInstruction &operand = *hero.operand(0);
  size_t operandRank = operand.shape().rank();
  auto read = b.create<LoopOp>(
      loc, getTransposeReadMap(hero, analysis.transpose, context, target),
      mlir::ValueRange{e->th, e->bl}, mlir::ValueRange{e->tile},
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange indices, mlir::ValueRange iters) {
        Value value =
            readOutside(operand, e->params, indices.take_front(operandRank))[0];
        Value inserted = b.create<mlir::tensor::InsertOp>(
            l, value, iters[0], indices.drop_front(operandRank));
        b.create<YieldOp>(l, inserted);
      });
  Value tile = b.create<SyncThreadsOp>(loc, read.getResults()).getResult(0);
  if (!transposesInRegisters(hero, target)) {
    // Phase 2: the tile read transposed, the epilogue, the output written
    // along its minor dim.
    return finishHeroEntry(
        *e, hero, output,
        getTransposeWriteMap(hero, analysis.transpose, context, target), tile);
  }
  // On the CPU, strip by strip of the tile's columns, one square wide: the
  // strip's squares transposed in registers into a second tile, then the
  // output rows they make written (256 bytes of each, 16 rows of f32). The
  // streaming stores of one strip's rows then drain while the next strip's
  // squares are transposed, where the whole tile's squares before its whole
  // writing phase left the memory idle during the shuffles: Zen 5, one
  // thread, CPU time, 64 MiB, f32 negate -> transpose -> abs 5.1-5.2 ->
  // 4.7-4.8 ms (strips of two squares 4.6-4.9, of four 4.8-5.1), s8 7.0-8.0
  // -> 6.4-7.1, the bf16 transpose 5.6 -> 4.7-5.3 (--no-relayout). Reading
  // the tile strip by strip too (a line of each of its rows a strip) was
  // 2.3x slower.
  if (int64_t lanes = transposeCpuLanes(hero, target); lanes != 32)
    e->function->setAttr("tessel.cpu_lanes", b.getI64IntegerAttr(lanes));
  TransposeTiling tiling = transposeTiling(hero, target);
  int64_t lanes = transposeSquareLanes(hero, target, squareBits);
  int64_t across = transposeSquaresAcross(hero, target, squareBits);
  int64_t width = lanes * across;
  Value transposed = b.create<AllocateSharedOp>(
      loc,
      mlir::RankedTensorType::get(
          {tiling.cols, tiling.rows},
          llvm::cast<mlir::RankedTensorType>(tile.getType()).getElementType()));
  Value out = e->out;
  for (int64_t first = 0; first < tiling.cols; first += width) {
    transposed = emitTileTranspose(hero, analysis.transpose, tile, transposed,
                                   lanes, across, first, *e, target);
    mlir::FailureOr<Value> written =
        emitHeroWrite(*e, hero, output,
                      transposeMap(hero, analysis.transpose, /*output=*/true,
                                   target, context, TileStrip{first, width}),
                      transposed, out);
    if (mlir::failed(written))
      return mlir::failure();
    out = *written;
    // The next strip's phases update it again.
    if (first + width < tiling.cols)
      out = b.create<SyncThreadsOp>(loc, out).getResult(0);
  }
  b.create<mlir::func::ReturnOp>(loc, out);
  return e->function;
}

Value FusionEmitter::emitTileTranspose(const HloInstruction &hero,
                                       const NormalizedTranspose &n, Value tile,
                                       Value transposed, int64_t lanes,
                                       int64_t across, int64_t firstColumn,
                                       const HeroEntry &e, Target target) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  auto tileType = llvm::cast<mlir::RankedTensorType>(tile.getType());
  mlir::Type element = tileType.getElementType();
  // `across` squares side by side: each vector holds a row of each.
  int64_t width = lanes * across;
  auto vectorType = mlir::VectorType::get({width}, element);
  auto squares = b.create<LoopOp>(
      loc, transposeSquaresMap(hero, n, lanes, firstColumn, target, context),
      mlir::ValueRange{e.th, e.bl}, mlir::ValueRange{transposed},
      [&](mlir::OpBuilder &nb, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange corner, mlir::ValueRange iters) {
        auto plus = [&](Value v, int64_t k) -> Value {
          if (k == 0)
            return v;
          return nb.create<mlir::arith::AddIOp>(
              l, v, nb.create<mlir::arith::ConstantIndexOp>(l, k));
        };
        Value zero = nb.create<mlir::arith::ConstantIndexOp>(l, 0);
        Value padding =
            nb.create<mlir::arith::ConstantOp>(l, nb.getZeroAttr(element));
        // The square's rows: row r0 + k of the tile, columns c0...
        SmallVector<Value> rows;
        for (int64_t k = 0; k < lanes; ++k) {
          SmallVector<Value> at(tileType.getRank(), zero);
          at[n.toMinor()] = plus(corner[0], k);
          at[n.minor()] = corner[1];
          rows.push_back(nb.create<mlir::vector::TransferReadOp>(
              l, vectorType, tile, at, padding, llvm::ArrayRef<bool>{true}));
        }
        // ... transposed by swapping the off-diagonal blocks of halves,
        // quarters, ...: rows i and i + h exchange the elements at columns
        // with bit h set in row i with those without it in row i + h, in
        // each square alike (the bit is of the column within its square).
        for (int64_t h = lanes / 2; h >= 1; h /= 2)
          for (int64_t i = 0; i < lanes; ++i) {
            if (i & h)
              continue;
            SmallVector<int64_t> low, high;
            for (int64_t c = 0; c < width; ++c) {
              bool set = (c % lanes) & h;
              low.push_back(set ? width + c - h : c);
              high.push_back(set ? width + c : c + h);
            }
            Value a = rows[i], bv = rows[i + h];
            rows[i] = nb.create<mlir::vector::ShuffleOp>(l, a, bv, low);
            rows[i + h] = nb.create<mlir::vector::ShuffleOp>(l, a, bv, high);
          }
        // Row j's square q is now column c0 + q * lanes + j: that row of
        // the transposed tile.
        Value next = iters[0];
        for (int64_t q = 0; q < across; ++q)
          for (int64_t j = 0; j < lanes; ++j) {
            Value part = rows[j];
            if (across > 1)
              part = nb.create<mlir::vector::ExtractStridedSliceOp>(
                  l, rows[j], llvm::ArrayRef<int64_t>{q * lanes},
                  llvm::ArrayRef<int64_t>{lanes}, llvm::ArrayRef<int64_t>{1});
            next = nb.create<mlir::vector::TransferWriteOp>(
                         l, part, next,
                         mlir::ValueRange{plus(corner[1], q * lanes + j),
                                          corner[0]},
                         llvm::ArrayRef<bool>{true})
                       .getResult();
          }
        nb.create<YieldOp>(l, next);
      });
  return b.create<SyncThreadsOp>(loc, squares.getResults()).getResult(0);
}

mlir::FailureOr<mlir::func::FuncOp>
FusionEmitter::emitConcatenateEntry(llvm::StringRef name,
                                    const FusionAnalysis &analysis,
                                    const FusionOutput &output, Target target) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const HloInstruction &hero = *analysis.hero;
  LaunchConfig config = getConcatenateLaunch(hero, target);
  auto e = beginHeroEntry(name, hero, output, config, /*tileShape=*/{});
  if (mlir::failed(e))
    return mlir::failure();
  // A loop per operand; the epilogue takes the operand's element for the
  // hero's.
  Value out = e->out;
  int64_t dim = hero.dimensions().front();
  int64_t offset = 0;
  bool failed = false;
  for (int64_t k = 0; k < hero.operandCount(); ++k) {
    const HloInstruction &operand = *hero.operand(k);
    int64_t start = offset;
    offset += operand.shape().dims[dim];
    if (elementCount(operand.shape()) == 0)
      continue;
    auto loop = b.create<LoopOp>(
        loc, getConcatenateOperandMap(hero, k, config, context),
        mlir::ValueRange{e->th, e->bl}, mlir::ValueRange{out},
        [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
            mlir::ValueRange indices, mlir::ValueRange iters) {
          Value element = readOutside(operand, e->params, indices)[0];
          SmallVector<Value> outIndices(indices.begin(), indices.end());
          if (start != 0)
            outIndices[dim] = b.create<mlir::arith::AddIOp>(
                l, outIndices[dim],
                b.create<mlir::arith::ConstantIndexOp>(l, start));
          Value value = emitEpilogue(*e, hero, output, element, outIndices);
          if (!value) {
            failed = true;
            value = element;
          }
          Value inserted =
              b.create<mlir::tensor::InsertOp>(l, value, iters[0], outIndices);
          b.create<YieldOp>(l, inserted);
        });
    if (failed)
      return mlir::failure();
    out = loop.getResult(0);
  }
  b.create<mlir::func::ReturnOp>(loc, out);
  return e->function;
}

mlir::FailureOr<mlir::func::FuncOp> FusionEmitter::emitDynamicUpdateSliceEntry(
    llvm::StringRef name, const FusionAnalysis &analysis,
    const FusionOutput &output, Target target) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const HloInstruction &dus = *analysis.hero;
  LaunchConfig config = getDynamicUpdateSliceLaunch(dus, target);
  auto e = beginHeroEntry(name, dus, output, config, /*tileShape=*/{});
  if (mlir::failed(e))
    return mlir::failure();
  // The start indices, once per thread.
  auto provider = parametersAndRootsFromOutside(e->params);
  const Shape &update = dus.operand(1)->shape();
  SmallVector<Value> starts;
  for (int64_t d = 0; d < update.rank(); ++d) {
    const HloInstruction &index = *dus.operand(2 + d);
    ElementalEmitter emitter(b, provider);
    auto value = emitter.emit(index, {});
    if (mlir::failed(value))
      return mlir::failure();
    // XLA clamps the start so that the update lies inside the operand.
    starts.push_back(
        emitter.emitClampedStart(value->front(), index.shape().elementType,
                                 dus.shape().dims[d] - update.dims[d]));
  }
  // The update's elements, each to its place; nothing else is written.
  const HloInstruction &source = *dus.operand(1);
  auto loop = b.create<LoopOp>(
      loc, getDynamicUpdateSliceMap(dus, config, context),
      mlir::ValueRange{e->th, e->bl}, mlir::ValueRange{e->out},
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange indices, mlir::ValueRange iters) {
        Value element = readOutside(source, e->params, indices)[0];
        SmallVector<Value> at;
        for (size_t d = 0; d < indices.size(); ++d)
          at.push_back(b.create<mlir::arith::AddIOp>(l, starts[d], indices[d]));
        Value inserted =
            b.create<mlir::tensor::InsertOp>(l, element, iters[0], at);
        b.create<YieldOp>(l, inserted);
      });
  b.create<mlir::func::ReturnOp>(loc, loop.getResults());
  return e->function;
}

mlir::FailureOr<mlir::func::FuncOp> FusionEmitter::emitScatterEntry(
    llvm::StringRef name, const FusionAnalysis &analysis,
    llvm::ArrayRef<FusionOutput> outputs, Target target) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const HloInstruction &scatter = *analysis.hero;
  Expected<ScatterDimensions> dimsOr = getScatterDimensions(scatter);
  if (!dimsOr)
    return cannotCompile(scatter, context, dimsOr.error().message);
  const ScatterDimensions &dims = *dimsOr;
  int64_t n = dims.operands;
  if (static_cast<int64_t>(outputs.size()) != n)
    return cannotCompile(scatter, context,
                         "the kernel writes " + std::to_string(outputs.size()) +
                             " of its " + std::to_string(n) + " results");
  for (const FusionOutput &output : outputs) {
    std::string typeError;
    if (!getStorageType(output.shape().elementType, context, &typeError))
      return cannotCompile(scatter, context, typeError);
  }
  LaunchConfig config = getScatterLaunch(scatter, dims.uniqueIndices, target);
  KernelEntry e = beginEntry(name, outputs, config);
  const HloInstruction &indices = *scatter.operand(n);
  const HloInstruction &updates0 = *scatter.operand(n + 1);
  int64_t count = 1;
  for (int64_t d : updates0.shape().dims)
    count *= d;
  if (count == 0) {
    // No updates: the outputs are the operands, in the buffers already.
    b.create<mlir::func::ReturnOp>(loc, e.outs);
    return e.function;
  }
  const std::vector<int64_t> &operandDims = outputs.front().shape().dims;
  int64_t rank = static_cast<int64_t>(operandDims.size());
  int64_t indicesRank = indices.shape().rank();
  using mlir::arith::CmpIPredicate;
  auto constant = [&](int64_t v) -> Value {
    return b.create<mlir::arith::ConstantIndexOp>(loc, v);
  };
  SmallVector<mlir::Type> outTypes;
  for (Value out : e.outs)
    outTypes.push_back(out.getType());
  bool failed = false;
  auto loop = b.create<LoopOp>(
      loc, getScatterUpdateMap(scatter, dims.uniqueIndices, config, context),
      mlir::ValueRange{e.th, e.bl}, e.outs,
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange u, mlir::ValueRange iters) {
        // The start of the window: index vector components and batch
        // indices.
        SmallVector<Value> batch;
        for (int64_t d : dims.scatterDims)
          batch.push_back(u[d]);
        SmallVector<Value> start(rank, constant(0));
        for (size_t k = 0; k < dims.scatterDimsToOperandDims.size(); ++k) {
          SmallVector<Value> at;
          for (int64_t d = 0, next = 0; d < indicesRank; ++d)
            at.push_back(d == dims.indexVectorDim
                             ? constant(static_cast<int64_t>(k))
                             : batch[next++]);
          Value v = readOutside(indices, e.params, at)[0];
          start[dims.scatterDimsToOperandDims[k]] =
              isUnsignedInteger(indices.shape().elementType)
                  ? Value(b.create<mlir::arith::IndexCastUIOp>(
                        l, b.getIndexType(), v))
                  : Value(b.create<mlir::arith::IndexCastOp>(
                        l, b.getIndexType(), v));
        }
        for (size_t k = 0; k < dims.inputBatchingDims.size(); ++k) {
          int64_t d = dims.scatterIndicesBatchingDims[k];
          start[dims.inputBatchingDims[k]] =
              batch[d < dims.indexVectorDim ? d : d - 1];
        }
        // The whole window must fit, else the update is skipped (XLA does
        // not clamp a scatter's indices).
        Value fits = b.create<mlir::arith::ConstantIntOp>(l, 1, 1);
        for (int64_t d = 0; d < rank; ++d) {
          fits = b.create<mlir::arith::AndIOp>(
              l, fits,
              b.create<mlir::arith::CmpIOp>(l, CmpIPredicate::sge, start[d],
                                            constant(0)));
          fits = b.create<mlir::arith::AndIOp>(
              l, fits,
              b.create<mlir::arith::CmpIOp>(
                  l, CmpIPredicate::sle, start[d],
                  constant(operandDims[d] - dims.windowSizes[d])));
        }
        SmallVector<Value> to(start.begin(), start.end());
        for (size_t w = 0; w < dims.windowDims.size(); ++w) {
          int64_t d = dims.windowDims[w];
          to[d] = b.create<mlir::arith::AddIOp>(l, to[d],
                                                u[dims.updateWindowDims[w]]);
        }
        auto branch = b.create<mlir::scf::IfOp>(l, outTypes, fits,
                                                /*withElseRegion=*/true);
        {
          mlir::OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(branch.thenBlock());
          // The combiner takes the n current elements, then the n updates
          // (the evaluator's order), and returns the n new ones.
          SmallVector<Value> args;
          for (Value out : iters)
            args.push_back(b.create<mlir::tensor::ExtractOp>(l, out, to));
          for (int64_t k = 0; k < n; ++k)
            args.push_back(
                readOutside(*scatter.operand(n + 1 + k), e.params, u)[0]);
          ElementalEmitter emitter(b,
                                   [](const HloInstruction &, mlir::ValueRange)
                                       -> std::optional<SmallVector<Value>> {
                                     return std::nullopt;
                                   });
          auto combined = emitter.emitScalarComputation(*dims.combiner, args);
          if (mlir::failed(combined) ||
              static_cast<int64_t>(combined->size()) != n)
            failed = true;
          SmallVector<Value> inserted;
          for (int64_t k = 0; k < n; ++k)
            inserted.push_back(b.create<mlir::tensor::InsertOp>(
                l, failed ? args[k] : (*combined)[k], iters[k], to));
          b.create<mlir::scf::YieldOp>(l, inserted);
          b.setInsertionPointToStart(branch.elseBlock());
          b.create<mlir::scf::YieldOp>(l, iters);
        }
        b.create<YieldOp>(l, branch.getResults());
      });
  if (failed)
    return mlir::failure();
  b.create<mlir::func::ReturnOp>(loc, loop.getResults());
  return e.function;
}

mlir::FailureOr<mlir::func::FuncOp> FusionEmitter::emitSortEntry(
    llvm::StringRef name, const FusionAnalysis &analysis,
    llvm::ArrayRef<FusionOutput> outputs, Target target) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const HloInstruction &sort = *analysis.hero;
  Expected<SortDimensions> dimsOr = getSortDimensions(sort);
  if (!dimsOr)
    return cannotCompile(sort, context, dimsOr.error().message);
  const SortDimensions &s = *dimsOr;
  if (static_cast<int64_t>(outputs.size()) != s.operands)
    return cannotCompile(sort, context,
                         "the kernel writes " + std::to_string(outputs.size()) +
                             " of its " + std::to_string(s.operands) +
                             " results");
  for (const FusionOutput &output : outputs) {
    std::string typeError;
    if (!getStorageType(output.shape().elementType, context, &typeError))
      return cannotCompile(sort, context, typeError);
  }
  mlir::Type positionType =
      getTensorType(Shape(s.positionType(), s.dims), context);
  LaunchConfig config = getSortLaunch(sort, target);
  KernelEntry e =
      beginEntry(name, outputs, config, {positionType, positionType});
  int64_t elements = 1;
  for (int64_t d : s.dims)
    elements *= d;
  if (elements == 0 || s.keep == 0) {
    b.create<mlir::func::ReturnOp>(loc, e.outs);
    return e.function;
  }
  auto constant = [&](int64_t v) -> Value {
    return b.create<mlir::arith::ConstantIndexOp>(loc, v);
  };
  using mlir::arith::CmpIPredicate;
  int64_t n = s.length, outs = static_cast<int64_t>(outputs.size());
  // The comparator sees the first array only when it takes 2 parameters.
  int64_t compared =
      !s.comparator || s.comparator->parameters().size() == 2 ? 1 : s.operands;
  bool failed = false;
  auto loop = b.create<LoopOp>(
      loc, getSortLineMap(sort, config, context), mlir::ValueRange{e.th, e.bl},
      e.outs,
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange line, mlir::ValueRange iters) {
        // The index of position `t` (an index value) of this line.
        auto at = [&](Value t) {
          SmallVector<Value> index(line.begin(), line.end());
          index[s.dim] = t;
          return index;
        };
        auto toIndex = [&](Value v) -> Value {
          return b.create<mlir::arith::IndexCastOp>(l, b.getIndexType(), v);
        };
        mlir::Type positionElement = s.positionType() == PrimitiveType::S32
                                         ? b.getI32Type()
                                         : b.getI64Type();
        auto toPosition = [&](Value v) -> Value {
          return b.create<mlir::arith::IndexCastOp>(l, positionElement, v);
        };
        // Element `position` of array m (TopK's second array is the iota
        // of s32 along the line).
        auto element = [&](int64_t m, Value position) -> Value {
          if (s.topK && m == 1)
            return b.create<mlir::arith::IndexCastOp>(l, b.getI32Type(),
                                                      position);
          return readOutside(*sort.operand(m), e.params, at(position))[0];
        };
        Value zero = constant(0), one = constant(1), length = constant(n);
        // The identity order in the first scratch buffer.
        auto init = b.create<mlir::scf::ForOp>(
            l, zero, length, one,
            mlir::ValueRange{iters[outs], iters[outs + 1]},
            [&](mlir::OpBuilder &, mlir::Location l2, Value t,
                mlir::ValueRange acc) {
              // Both buffers, so that each is written (the grid lowering
              // traces every buffer a kernel returns to its writes).
              Value position = toPosition(t);
              SmallVector<Value> next = {
                  b.create<mlir::tensor::InsertOp>(l2, position, acc[0], at(t)),
                  b.create<mlir::tensor::InsertOp>(l2, position, acc[1],
                                                   at(t))};
              b.create<mlir::scf::YieldOp>(l2, next);
            });
        Value from = init.getResult(0), to = init.getResult(1);
        // The evaluator's passes (EvaluatorSort.cpp, mergeSort): runs of
        // `width` merged pairwise from one buffer into the other.
        int64_t passes = 0;
        for (int64_t width = 1; width < n; width *= 2, ++passes) {
          Value source = from;
          auto pass = b.create<mlir::scf::ForOp>(
              l, zero, length, constant(2 * width), mlir::ValueRange{to},
              [&](mlir::OpBuilder &, mlir::Location l2, Value lo,
                  mlir::ValueRange acc) {
                Value mid = b.create<mlir::arith::MinSIOp>(
                    l2, b.create<mlir::arith::AddIOp>(l2, lo, constant(width)),
                    length);
                Value hi = b.create<mlir::arith::MinSIOp>(
                    l2,
                    b.create<mlir::arith::AddIOp>(l2, lo, constant(2 * width)),
                    length);
                // while (i < mid && j < hi): the right run's next element
                // goes first when less(right, left).
                SmallVector<mlir::Type> types = {
                    b.getIndexType(), b.getIndexType(), b.getIndexType(),
                    acc[0].getType()};
                auto merge = b.create<mlir::scf::WhileOp>(
                    l2, types, mlir::ValueRange{lo, mid, lo, acc[0]});
                {
                  mlir::OpBuilder::InsertionGuard guard(b);
                  mlir::Block *before = b.createBlock(&merge.getBefore(), {},
                                                      types, {l2, l2, l2, l2});
                  Value i = before->getArgument(0), j = before->getArgument(1);
                  Value more = b.create<mlir::arith::AndIOp>(
                      l2,
                      b.create<mlir::arith::CmpIOp>(l2, CmpIPredicate::slt, i,
                                                    mid),
                      b.create<mlir::arith::CmpIOp>(l2, CmpIPredicate::slt, j,
                                                    hi));
                  b.create<mlir::scf::ConditionOp>(l2, more,
                                                   before->getArguments());
                  mlir::Block *after = b.createBlock(&merge.getAfter(), {},
                                                     types, {l2, l2, l2, l2});
                  i = after->getArgument(0);
                  j = after->getArgument(1);
                  Value k = after->getArgument(2), out = after->getArgument(3);
                  Value left =
                      b.create<mlir::tensor::ExtractOp>(l2, source, at(i));
                  Value right =
                      b.create<mlir::tensor::ExtractOp>(l2, source, at(j));
                  Value leftAt = toIndex(left), rightAt = toIndex(right);
                  SmallVector<Value> args;
                  for (int64_t m = 0; m < compared; ++m) {
                    args.push_back(element(m, rightAt));
                    args.push_back(element(m, leftAt));
                  }
                  ElementalEmitter emitter(
                      b,
                      [](const HloInstruction &, mlir::ValueRange)
                          -> std::optional<SmallVector<Value>> {
                        return std::nullopt;
                      });
                  mlir::FailureOr<SmallVector<Value>> less = mlir::failure();
                  if (s.comparator) {
                    less = emitter.emitScalarComputation(*s.comparator, args);
                  } else {
                    // The topk op: the larger (smaller) first, floats in
                    // their total order (the evaluator's topKOp).
                    PrimitiveType type = sort.operand(0)->shape().elementType;
                    HloAttributes compare;
                    compare.comparisonDirection = s.largest
                                                      ? ComparisonDirection::Gt
                                                      : ComparisonDirection::Lt;
                    if (isFloat(type))
                      compare.comparisonType = ComparisonType::TotalOrder;
                    ScalarOpEmitter ops(b, l2);
                    auto c = ops.compare(compare, args[0], args[1], type);
                    if (mlir::succeeded(c))
                      less = SmallVector<Value>{*c};
                    else
                      (void)cannotCompile(sort, context, ops.error());
                  }
                  Value rightFirst;
                  if (mlir::failed(less) || less->size() != 1) {
                    failed = true;
                    rightFirst = b.create<mlir::arith::ConstantIntOp>(l2, 0, 1);
                  } else {
                    rightFirst = less->front();
                  }
                  Value taken = b.create<mlir::arith::SelectOp>(l2, rightFirst,
                                                                right, left);
                  Value written =
                      b.create<mlir::tensor::InsertOp>(l2, taken, out, at(k));
                  Value nextI = b.create<mlir::arith::SelectOp>(
                      l2, rightFirst, i,
                      b.create<mlir::arith::AddIOp>(l2, i, one));
                  Value nextJ = b.create<mlir::arith::SelectOp>(
                      l2, rightFirst, b.create<mlir::arith::AddIOp>(l2, j, one),
                      j);
                  Value nextK = b.create<mlir::arith::AddIOp>(l2, k, one);
                  b.create<mlir::scf::YieldOp>(
                      l2, mlir::ValueRange{nextI, nextJ, nextK, written});
                }
                // What is left of either run, in order.
                auto copyRest = [&](Value first, Value end, Value k0,
                                    Value into) -> Value {
                  auto rest = b.create<mlir::scf::ForOp>(
                      l2, first, end, one, mlir::ValueRange{into},
                      [&](mlir::OpBuilder &, mlir::Location l3, Value t,
                          mlir::ValueRange acc2) {
                        Value k = b.create<mlir::arith::AddIOp>(
                            l3, k0,
                            b.create<mlir::arith::SubIOp>(l3, t, first));
                        Value v = b.create<mlir::tensor::ExtractOp>(l3, source,
                                                                    at(t));
                        b.create<mlir::scf::YieldOp>(
                            l3, Value(b.create<mlir::tensor::InsertOp>(
                                    l3, v, acc2[0], at(k))));
                      });
                  return rest.getResult(0);
                };
                Value i = merge.getResult(0), j = merge.getResult(1),
                      k = merge.getResult(2);
                Value merged = copyRest(i, mid, k, merge.getResult(3));
                Value k2 = b.create<mlir::arith::AddIOp>(
                    l2, k, b.create<mlir::arith::SubIOp>(l2, mid, i));
                merged = copyRest(j, hi, k2, merged);
                b.create<mlir::scf::YieldOp>(l2, merged);
              });
          to = from;
          from = pass.getResult(0);
        }
        // Every array moved to the sorted positions (the first `keep`).
        SmallVector<Value> results(iters.take_front(outs).begin(),
                                   iters.take_front(outs).end());
        auto write = b.create<mlir::scf::ForOp>(
            l, zero, constant(s.keep), one, results,
            [&](mlir::OpBuilder &, mlir::Location l2, Value t,
                mlir::ValueRange acc) {
              Value position =
                  toIndex(b.create<mlir::tensor::ExtractOp>(l2, from, at(t)));
              SmallVector<Value> next;
              for (int64_t m = 0; m < outs; ++m)
                next.push_back(b.create<mlir::tensor::InsertOp>(
                    l2, element(m, position), acc[m], at(t)));
              b.create<mlir::scf::YieldOp>(l2, next);
            });
        SmallVector<Value> yielded(write.getResults().begin(),
                                   write.getResults().end());
        // The scratch buffers, in the order the kernel takes them.
        bool odd = passes % 2 == 1;
        yielded.push_back(odd ? to : from);
        yielded.push_back(odd ? from : to);
        b.create<YieldOp>(l, yielded);
      });
  if (failed)
    return mlir::failure();
  b.create<mlir::func::ReturnOp>(loc, loop.getResults());
  return e.function;
}

mlir::FailureOr<mlir::func::FuncOp> FusionEmitter::emitInputSlicesEntry(
    llvm::StringRef name, const FusionAnalysis &analysis,
    llvm::ArrayRef<FusionOutput> outputs, Target target) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const HloInstruction &input = *analysis.hero;
  LaunchConfig config = getInputSlicesLaunch(input, target);
  KernelEntry e = beginEntry(name, outputs, config);
  mlir::func::FuncOp entry = e.function;
  mlir::ValueRange params = e.params, outs = e.outs;
  Value th = e.th, bl = e.bl;
  using mlir::arith::CmpIPredicate;
  auto loop = b.create<LoopOp>(
      loc, getInputSlicesMap(input, config, context), mlir::ValueRange{th, bl},
      outs,
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange indices, mlir::ValueRange iters) {
        Value element = readOutside(input, params, indices)[0];
        SmallVector<Value> next;
        for (auto [k, output] : llvm::enumerate(outputs)) {
          // Inside the slice: start <= i < limit and (i - start) % stride
          // == 0 in every dim; its index there is (i - start) / stride.
          const std::vector<SliceDim> &slice =
              output.instruction->attributes().slice;
          Value inside = b.create<mlir::arith::ConstantIntOp>(l, 1, 1);
          SmallVector<Value> at;
          for (size_t d = 0; d < slice.size(); ++d) {
            auto constant = [&](int64_t v) -> Value {
              return b.create<mlir::arith::ConstantIndexOp>(l, v);
            };
            const SliceDim &s = slice[d];
            Value i = indices[d];
            Value rel = b.create<mlir::arith::SubIOp>(l, i, constant(s.start));
            inside = b.create<mlir::arith::AndIOp>(
                l, inside,
                b.create<mlir::arith::CmpIOp>(l, CmpIPredicate::sge, i,
                                              constant(s.start)));
            inside = b.create<mlir::arith::AndIOp>(
                l, inside,
                b.create<mlir::arith::CmpIOp>(l, CmpIPredicate::slt, i,
                                              constant(s.limit)));
            if (s.stride != 1) {
              Value rem =
                  b.create<mlir::arith::RemSIOp>(l, rel, constant(s.stride));
              inside = b.create<mlir::arith::AndIOp>(
                  l, inside,
                  b.create<mlir::arith::CmpIOp>(l, CmpIPredicate::eq, rem,
                                                constant(0)));
              rel = b.create<mlir::arith::DivSIOp>(l, rel, constant(s.stride));
            }
            at.push_back(rel);
          }
          Value out = iters[k];
          auto branch = b.create<mlir::scf::IfOp>(l, out.getType(), inside,
                                                  /*withElseRegion=*/true);
          {
            mlir::OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(branch.thenBlock());
            Value inserted =
                b.create<mlir::tensor::InsertOp>(l, element, out, at);
            b.create<mlir::scf::YieldOp>(l, inserted);
            b.setInsertionPointToStart(branch.elseBlock());
            b.create<mlir::scf::YieldOp>(l, out);
          }
          next.push_back(branch.getResult(0));
        }
        b.create<YieldOp>(l, next);
      });
  b.create<mlir::func::ReturnOp>(loc, loop.getResults());
  return entry;
}

mlir::FailureOr<mlir::func::FuncOp> FusionEmitter::emitColumnReductionEntry(
    llvm::StringRef name, const FusionAnalysis &analysis,
    const FusionOutput &output, Target target) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const HloInstruction &reduce = *analysis.hero;
  const ColumnReduction &r = analysis.reduction;
  LaunchConfig config = getColumnReductionLaunch(r, target);
  auto e = beginHeroEntry(name, reduce, output, config, {config.numThreads});
  if (mlir::failed(e))
    return mlir::failure();
  IndexingMap initMap(
      mlir::AffineMap::get(2, 0, {mlir::getAffineDimExpr(0, context)}, context),
      {IndexingVariable(0, config.numThreads - 1, "th_x"),
       IndexingVariable(0, config.numBlocks - 1, "bl_x")},
      {}, {});

  // Values read from outside the entry; a constant init value is emitted
  // in place.
  auto provider = parametersAndRootsFromOutside(e->params);
  bool failed = false;

  // Phase 1: every accumulator starts at the init value.
  auto init = b.create<LoopOp>(
      loc, initMap, mlir::ValueRange{e->th, e->bl}, mlir::ValueRange{e->tile},
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange indices, mlir::ValueRange iters) {
        Value value = emitFirstValue(provider, failed, *reduce.operand(1), {});
        if (!value)
          value = b.create<mlir::tensor::ExtractOp>(l, iters[0], indices);
        Value inserted =
            b.create<mlir::tensor::InsertOp>(l, value, iters[0], indices);
        b.create<YieldOp>(l, inserted);
      });
  auto synced = b.create<SyncThreadsOp>(loc, init.getResults());

  // Phase 2: the rows in order, each for all threads of the block (the
  // loop is uniform: every thread runs the same rows). A step takes up to
  // 8 rows (a divisor of their number), read before they are added in
  // order: on the GPU each thread has as many loads in flight; on the CPU
  // an accumulator is loaded and stored once per 8 rows instead of once per
  // row, and 8 input rows stream at once. On Zen 3 (one thread, 128 MiB)
  // the column max went from 8.6 to 5.5-6.3 ms and the column sum from
  // 7.1-7.6 to 5.5-6.4, bit-exact as before (the same order).
  IndexingMap readMap = getColumnReductionReadMap(reduce, r, context, target);
  int64_t unroll = columnReductionRowsPerStep(r);
  Value zero = b.create<mlir::arith::ConstantIndexOp>(loc, 0);
  Value step = b.create<mlir::arith::ConstantIndexOp>(loc, unroll);
  Value rows = b.create<mlir::arith::ConstantIndexOp>(loc, r.rows);
  size_t operandRank = reduce.operand(0)->shape().rank();
  auto rowLoop = b.create<mlir::scf::ForOp>(
      loc, zero, rows, step, mlir::ValueRange{synced.getResult(0)},
      [&](mlir::OpBuilder &, mlir::Location l, Value row,
          mlir::ValueRange rowIters) {
        auto rowStep = b.create<LoopOp>(
            l, readMap, mlir::ValueRange{e->th, e->bl, row}, rowIters,
            [&](mlir::OpBuilder &, mlir::Location l2, mlir::ValueRange,
                mlir::ValueRange indices, mlir::ValueRange iters) {
              Value slot = indices[operandRank];
              SmallVector<Value> xs = {
                  emitFirstValue(provider, failed, *reduce.operand(0),
                                 indices.take_front(operandRank))};
              for (int64_t u = 1; u < unroll; ++u) {
                Value next = b.create<mlir::arith::AddIOp>(
                    l2, row, b.create<mlir::arith::ConstantIndexOp>(l2, u));
                auto at = b.create<ApplyIndexingOp>(
                    l2, mlir::ValueRange{e->th, e->bl, next},
                    mlir::ValueRange{}, readMap);
                xs.push_back(
                    emitFirstValue(provider, failed, *reduce.operand(0),
                                   at.getResults().take_front(operandRank)));
              }
              Value acc = b.create<mlir::tensor::ExtractOp>(
                  l2, iters[0], mlir::ValueRange{slot});
              Value next = acc;
              for (Value x : xs) {
                if (!x)
                  break;
                ElementalEmitter emitter(b, provider);
                auto sum = emitter.emitScalarComputation(
                    *reduce.calledComputation(), {next, x});
                if (mlir::failed(sum)) {
                  failed = true;
                  break;
                }
                next = sum->front();
              }
              Value inserted = b.create<mlir::tensor::InsertOp>(
                  l2, next, iters[0], mlir::ValueRange{slot});
              b.create<YieldOp>(l2, inserted);
            });
        b.create<mlir::scf::YieldOp>(l, rowStep.getResults());
      });
  rowLoop->setAttr("tessel.uniform", b.getUnitAttr());
  auto done = b.create<SyncThreadsOp>(loc, rowLoop.getResults());
  if (failed)
    return mlir::failure();

  // Phase 3: the epilogue, with the reduce's value from the tile.
  return finishHeroEntry(*e, reduce, output,
                         getColumnReductionWriteMap(reduce, r, context, target),
                         done.getResult(0));
}

mlir::FailureOr<mlir::func::FuncOp>
FusionEmitter::emitRowReductionEntry(llvm::StringRef name,
                                     const FusionAnalysis &analysis,
                                     const FusionOutput &output) {
  mlir::MLIRContext *context = b.getContext();
  mlir::Location loc = b.getUnknownLoc();
  const HloInstruction &reduce = *analysis.hero;
  const RowReduction &r = analysis.rowReduction;
  RowReductionLaunch launch = getRowReductionLaunch(r);
  auto e =
      beginHeroEntry(name, reduce, output, launch.config, launch.tileShape);
  if (mlir::failed(e))
    return mlir::failure();
  auto provider = parametersAndRootsFromOutside(e->params);
  bool failed = false;
  auto combine = [&](Value acc, Value x) -> Value {
    if (!acc || !x)
      return acc;
    ElementalEmitter emitter(b, provider);
    auto next =
        emitter.emitScalarComputation(*reduce.calledComputation(), {acc, x});
    if (mlir::failed(next)) {
      failed = true;
      return acc;
    }
    return next->front();
  };
  size_t operandRank = reduce.operand(0)->shape().rank();
  // The operand's element at (outer, position) through `map` ((th_x, bl_x,
  // outer, position) -> operand index...).
  auto element = [&](const IndexingMap &map, Value outer, Value position) {
    auto index = b.create<ApplyIndexingOp>(
        loc, mlir::ValueRange{e->th, e->bl, outer, position},
        mlir::ValueRange{}, map);
    return emitFirstValue(provider, failed, *reduce.operand(0),
                          index.getResults().take_front(operandRank));
  };
  auto constant = [&](int64_t v) {
    return b.create<mlir::arith::ConstantIndexOp>(loc, v).getResult();
  };

  // Phase 1: thread j of a row combines partial result j of each outer run,
  // the chunks in order (the first element starts it), into the tile. The
  // chunks go kRowReductionUnroll at a time, their elements read before
  // they are combined (in order), so that each thread has that many loads
  // in flight.
  IndexingMap readMap = getRowReductionReadMap(reduce, r, context);
  int64_t chunks = r.minor / kRowReductionLanes;
  int64_t groups = (chunks - 1) / kRowReductionUnroll;
  auto combineChunks = [&](Value acc, Value outer, Value firstChunk,
                           int64_t count) {
    SmallVector<Value> xs;
    for (int64_t u = 0; u < count; ++u) {
      Value chunk =
          u == 0 ? firstChunk
                 : b.create<mlir::arith::AddIOp>(loc, firstChunk, constant(u))
                       .getResult();
      xs.push_back(element(readMap, outer, chunk));
    }
    for (Value x : xs)
      acc = combine(acc, x);
    return acc;
  };
  auto partials = b.create<LoopOp>(
      loc, getRowReductionSlotMap(r, context), mlir::ValueRange{e->th, e->bl},
      mlir::ValueRange{e->tile},
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange symbols,
          mlir::ValueRange slot, mlir::ValueRange iters) {
        // The simplifier drops the run's variable when there is one run.
        Value outer = symbols.empty() ? constant(0) : symbols[0];
        Value first = element(readMap, outer, constant(0));
        Value acc = first;
        if (first && groups > 0) {
          auto loop = b.create<mlir::scf::ForOp>(
              l, constant(1), constant(1 + groups * kRowReductionUnroll),
              constant(kRowReductionUnroll), mlir::ValueRange{first},
              [&](mlir::OpBuilder &, mlir::Location l2, Value chunk,
                  mlir::ValueRange accs) {
                Value next =
                    combineChunks(accs[0], outer, chunk, kRowReductionUnroll);
                b.create<mlir::scf::YieldOp>(l2, next);
              });
          acc = loop.getResult(0);
        }
        int64_t done = 1 + groups * kRowReductionUnroll;
        if (acc && done < chunks)
          acc = combineChunks(acc, outer, constant(done), chunks - done);
        if (!acc)
          acc = b.create<mlir::tensor::ExtractOp>(l, iters[0], slot);
        Value inserted =
            b.create<mlir::tensor::InsertOp>(l, acc, iters[0], slot);
        b.create<YieldOp>(l, inserted);
      });
  auto synced = b.create<SyncThreadsOp>(loc, partials.getResults());
  Value tile = synced.getResult(0);

  // Phase 2: the first thread of each row folds the partial results of
  // each outer run in order into the accumulator, then the run's tail, and
  // writes the epilogue's value.
  int64_t tail = r.minor - chunks * kRowReductionLanes;
  std::optional<IndexingMap> tailMap;
  if (tail > 0)
    tailMap = getRowReductionTailMap(reduce, r, context);
  size_t outputRank = reduce.shape().rank();
  auto write = b.create<LoopOp>(
      loc, getRowReductionWriteMap(reduce, r, context),
      mlir::ValueRange{e->th, e->bl}, mlir::ValueRange{e->out},
      [&](mlir::OpBuilder &, mlir::Location l, mlir::ValueRange,
          mlir::ValueRange indices, mlir::ValueRange iters) {
        mlir::ValueRange outIndices = indices.take_front(outputRank);
        Value row = indices[outputRank];
        Value init = emitFirstValue(provider, failed, *reduce.operand(1), {});
        Value acc = init;
        if (init) {
          auto runs = b.create<mlir::scf::ForOp>(
              l, constant(0), constant(r.outer), constant(1),
              mlir::ValueRange{init},
              [&](mlir::OpBuilder &, mlir::Location l2, Value outer,
                  mlir::ValueRange accs) {
                Value a = accs[0];
                for (int64_t j = 0; j < kRowReductionLanes; ++j)
                  a = combine(
                      a,
                      b.create<mlir::tensor::ExtractOp>(
                          l2, tile, mlir::ValueRange{row, outer, constant(j)}));
                for (int64_t t = 0; t < tail; ++t)
                  a = combine(a, element(*tailMap, outer, constant(t)));
                b.create<mlir::scf::YieldOp>(l2, a);
              });
          acc = runs.getResult(0);
        }
        Value value =
            acc ? emitEpilogue(*e, reduce, output, acc, outIndices) : nullptr;
        if (!value) {
          failed = true;
          value = b.create<mlir::tensor::ExtractOp>(l, iters[0], outIndices);
        }
        Value inserted =
            b.create<mlir::tensor::InsertOp>(l, value, iters[0], outIndices);
        b.create<YieldOp>(l, inserted);
      });
  if (failed)
    return mlir::failure();
  b.create<mlir::func::ReturnOp>(loc, write.getResults());
  return e->function;
}

} // namespace

LaunchConfig getConcatenateLaunch(const HloInstruction &concatenate,
                                  Target target) {
  const HloInstruction *largest = concatenate.operand(0);
  for (const HloInstruction *operand : concatenate.operands())
    if (elementCount(operand->shape()) > elementCount(largest->shape()))
      largest = operand;
  LaunchConfig config = getLoopLaunchConfig(
      getConcatenateOperandWalk(concatenate, *largest), target);
  // One element per thread: the operands' minor dims need not be multiples
  // of a vector.
  config.numBlocks *= config.vectorSize;
  config.vectorSize = 1;
  return config;
}

Shape getConcatenateOperandWalk(const HloInstruction &concatenate,
                                const HloInstruction &operand) {
  Shape walk(operand.shape().elementType, operand.shape().dims);
  Layout layout;
  layout.minorToMajor = concatenate.shape().layoutOrDefault().minorToMajor;
  walk.layout = layout;
  return walk;
}

IndexingMap getConcatenateOperandMap(const HloInstruction &concatenate,
                                     int64_t operand,
                                     const LaunchConfig &config,
                                     mlir::MLIRContext *context) {
  return getLoopThreadToOutputMap(
      getConcatenateOperandWalk(concatenate, *concatenate.operand(operand)),
      config, context);
}

LaunchConfig getInputSlicesLaunch(const HloInstruction &input, Target target) {
  LaunchConfig config = getLoopLaunchConfig(input.shape(), target);
  // One element per thread: the slices' bounds need not be multiples of a
  // vector.
  config.numBlocks *= config.vectorSize;
  config.vectorSize = 1;
  return config;
}

LaunchConfig getDynamicUpdateSliceLaunch(const HloInstruction &dus,
                                         Target target) {
  LaunchConfig config = getLoopLaunchConfig(
      getConcatenateOperandWalk(dus, *dus.operand(1)), target);
  config.numBlocks *= config.vectorSize;
  config.vectorSize = 1;
  return config;
}

IndexingMap getDynamicUpdateSliceMap(const HloInstruction &dus,
                                     const LaunchConfig &config,
                                     mlir::MLIRContext *context) {
  return getLoopThreadToOutputMap(
      getConcatenateOperandWalk(dus, *dus.operand(1)), config, context);
}

/// A scatter's first update (operand n + 1 of n operands).
static const HloInstruction &firstScatterUpdate(const HloInstruction &scatter) {
  return *scatter.operand(scatter.operandCount() / 2 + 1);
}

LaunchConfig getScatterLaunch(const HloInstruction &scatter, bool uniqueIndices,
                              Target target) {
  if (!uniqueIndices)
    return LaunchConfig{};
  LaunchConfig config =
      getLoopLaunchConfig(firstScatterUpdate(scatter).shape(), target);
  config.numBlocks *= config.vectorSize;
  config.vectorSize = 1;
  return config;
}

IndexingMap getScatterUpdateMap(const HloInstruction &scatter,
                                bool uniqueIndices, const LaunchConfig &config,
                                mlir::MLIRContext *context) {
  const Shape &updates = firstScatterUpdate(scatter).shape();
  if (uniqueIndices)
    return getLoopThreadToOutputMap(updates, config, context);
  SmallVector<mlir::AffineExpr> results;
  std::vector<IndexingVariable> symbols;
  for (int64_t d = 0; d < updates.rank(); ++d) {
    results.push_back(mlir::getAffineSymbolExpr(d, context));
    symbols.push_back(
        IndexingVariable(0, std::max<int64_t>(updates.dims[d], 1) - 1));
  }
  return IndexingMap(
      mlir::AffineMap::get(2, updates.rank(), results, context),
      {IndexingVariable(0, 0, "th_x"), IndexingVariable(0, 0, "bl_x")}, symbols,
      {});
}

LaunchConfig getSortLaunch(const HloInstruction &sort, Target target) {
  Expected<SortDimensions> dims = getSortDimensions(sort);
  if (!dims)
    return LaunchConfig{};
  int64_t lines = 1;
  for (size_t d = 0; d < dims->dims.size(); ++d)
    if (static_cast<int64_t>(d) != dims->dim)
      lines *= dims->dims[d];
  lines = std::max<int64_t>(lines, 1);
  LaunchConfig config;
  // The CPU: a block per line (the workers take blocks); the GPU: a
  // thread per line, in blocks of up to 64.
  config.numThreads = target == Target::Gpu ? std::min<int64_t>(64, lines) : 1;
  config.numBlocks = (lines + config.numThreads - 1) / config.numThreads;
  return config;
}

IndexingMap getSortLineMap(const HloInstruction &sort,
                           const LaunchConfig &config,
                           mlir::MLIRContext *context) {
  Shape lines = sort.operand(0)->shape();
  Expected<SortDimensions> dims = getSortDimensions(sort);
  if (dims && lines.rank() > 0)
    lines.dims[dims->dim] = 1;
  return getLoopThreadToOutputMap(lines, config, context);
}

IndexingMap getInputSlicesMap(const HloInstruction &input,
                              const LaunchConfig &config,
                              mlir::MLIRContext *context) {
  return getLoopThreadToOutputMap(input.shape(), config, context);
}

PartitionOptions getPartitionOptions(const FusionAnalysis &analysis) {
  PartitionOptions options;
  if (analysis.kind == EmitterKind::InputSlices) {
    const HloInstruction *input = analysis.hero;
    options.isSubgraphRoot = [input](const HloInstruction &instruction) {
      return &instruction == input;
    };
    options.rootReason = "the array %" + input->name() +
                         " that the input-slices emitter reads once for all "
                         "of its slices";
    return options;
  }
  if (analysis.kind == EmitterKind::Concatenate) {
    const HloInstruction *hero = analysis.hero;
    options.isSubgraphRoot = [hero](const HloInstruction &instruction) {
      if (&instruction == hero)
        return true;
      for (const HloInstruction *operand : hero->operands())
        if (operand == &instruction)
          return true;
      return false;
    };
    options.rootReason = "the concatenate emitter's hero %" + hero->name() +
                         " or one of its operands (the entry reads each "
                         "operand in a loop of its own)";
    return options;
  }
  if (analysis.kind == EmitterKind::Scatter) {
    const HloInstruction *hero = analysis.hero;
    options.isSubgraphRoot = [hero](const HloInstruction &instruction) {
      if (&instruction == hero)
        return true;
      // The indices and the updates: operands n to 2n.
      for (int64_t k = hero->operandCount() / 2; k < hero->operandCount(); ++k)
        if (&instruction == hero->operand(k))
          return true;
      return false;
    };
    options.rootReason = "the scatter %" + hero->name() +
                         ", its indices or its updates (the entry reads "
                         "them for each update element)";
    return options;
  }
  if (analysis.kind == EmitterKind::Sort) {
    const HloInstruction *hero = analysis.hero;
    options.isSubgraphRoot = [hero](const HloInstruction &instruction) {
      if (&instruction == hero)
        return true;
      for (const HloInstruction *operand : hero->operands())
        if (&instruction == operand)
          return true;
      return false;
    };
    options.rootReason = "the sort %" + hero->name() +
                         " or one of its operands (the entry reads them "
                         "at the positions it sorts)";
    return options;
  }
  if (analysis.kind == EmitterKind::DynamicUpdateSlice) {
    const HloInstruction *hero = analysis.hero;
    options.isSubgraphRoot = [hero](const HloInstruction &instruction) {
      return &instruction == hero || &instruction == hero->operand(1);
    };
    options.rootReason = "the in-place dynamic-update-slice %" + hero->name() +
                         " or its update (the entry writes the update's "
                         "elements only)";
    return options;
  }
  if (const HloInstruction *hero = analysis.hero) {
    options.isSubgraphRoot = [hero](const HloInstruction &instruction) {
      return &instruction == hero || &instruction == hero->operand(0);
    };
    options.rootReason = std::string("the ") + emitterKindName(analysis.kind) +
                         " emitter's hero %" + hero->name() +
                         " or its operand (the entry reads and writes them "
                         "through shared memory)";
  }
  return options;
}

/// The subgraphs `from` calls, directly or through others, `from`
/// included: those whose root an instruction of a called one reads.
static std::set<const Subgraph *>
calledSubgraphs(const PartitionedComputation &partition,
                std::vector<const Subgraph *> from) {
  std::set<const Subgraph *> seen;
  while (!from.empty()) {
    const Subgraph *subgraph = from.back();
    from.pop_back();
    if (!subgraph || !seen.insert(subgraph).second)
      continue;
    for (const HloInstruction *instruction : subgraph->instructions)
      for (const HloInstruction *operand : instruction->operands())
        if (const Subgraph *callee = partition.subgraphOf(*operand))
          if (callee != subgraph && !subgraph->contains(*operand))
            from.push_back(callee);
  }
  return seen;
}

mlir::FailureOr<mlir::func::FuncOp>
emitFusion(mlir::ModuleOp module, const HloComputation &computation,
           llvm::StringRef name, Target target, llvm::ArrayRef<int64_t> outputs,
           unsigned squareBits) {
  FusionAnalysis analysis = analyzeFusion(
      computation, std::vector<int64_t>(outputs.begin(), outputs.end()),
      target);
  if (analysis.kind == EmitterKind::Loop)
    return emitLoopFusion(module, computation, name, target, outputs);
  mlir::MLIRContext *context = module.getContext();
  context->loadDialect<TesselDialect, mlir::gpu::GPUDialect,
                       mlir::arith::ArithDialect, mlir::math::MathDialect,
                       mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                       mlir::func::FuncDialect>();
  const HloInstruction *hero = analysis.hero;
  Expected<PartitionedComputation> partition =
      partitionComputation(computation, context, getPartitionOptions(analysis));
  if (!partition)
    return emitError(module.getLoc(), partition.error());
  std::vector<FusionOutput> all = getFusionOutputs(computation);
  FusionOutput output = outputs.empty() ? all.front() : all[outputs.front()];
  FusionEmitter emitter(module, computation, *partition, name.str() + "_",
                        squareBits);
  std::vector<FusionOutput> selected;
  for (int64_t i : outputs)
    selected.push_back(all[i]);
  if (outputs.empty())
    selected = all;
  if (analysis.kind == EmitterKind::InputSlices) {
    // The slices are written by the entry itself; every other subgraph
    // (the sliced array's) is a function it calls.
    auto entry =
        mlir::failed(emitter.emitSubgraphs())
            ? mlir::FailureOr<mlir::func::FuncOp>(mlir::failure())
            : emitter.emitInputSlicesEntry(name, analysis, selected, target);
    return entry;
  }
  // The hero and the epilogue (the output's subgraph) are emitted into the
  // entry function itself.
  const Subgraph *heroSubgraph = partition->subgraphOf(*hero);
  const Subgraph *outputSubgraph = partition->subgraphOf(*output.instruction);
  // Only the functions this kernel's output calls: another output of the
  // computation (a kernel of its own) may call the hero's subgraph, which
  // has no function here.
  std::set<const Subgraph *> needed =
      calledSubgraphs(*partition, {heroSubgraph, outputSubgraph});
  if (mlir::failed(emitter.emitSubgraphs([&](const Subgraph &subgraph) {
        return &subgraph == heroSubgraph || &subgraph == outputSubgraph ||
               !needed.count(&subgraph);
      })))
    return mlir::failure();
  auto entry =
      analysis.kind == EmitterKind::Transpose
          ? emitter.emitTransposeEntry(name, analysis, output, target)
      : analysis.kind == EmitterKind::Concatenate
          ? emitter.emitConcatenateEntry(name, analysis, output, target)
      : analysis.kind == EmitterKind::DynamicUpdateSlice
          ? emitter.emitDynamicUpdateSliceEntry(name, analysis, output, target)
      : analysis.kind == EmitterKind::Scatter
          ? emitter.emitScatterEntry(name, analysis, selected, target)
      : analysis.kind == EmitterKind::Sort
          ? emitter.emitSortEntry(name, analysis, selected, target)
      : analysis.kind == EmitterKind::RowReduction
          ? emitter.emitRowReductionEntry(name, analysis, output)
          : emitter.emitColumnReductionEntry(name, analysis, output, target);
  return entry;
}

mlir::FailureOr<mlir::func::FuncOp>
emitLoopFusion(mlir::ModuleOp module, const HloComputation &computation,
               llvm::StringRef name, Target target,
               llvm::ArrayRef<int64_t> outputs) {
  mlir::MLIRContext *context = module.getContext();
  context->loadDialect<TesselDialect, mlir::gpu::GPUDialect,
                       mlir::arith::ArithDialect, mlir::math::MathDialect,
                       mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                       mlir::func::FuncDialect>();
  Expected<PartitionedComputation> partition =
      partitionComputation(computation, context);
  if (!partition)
    return emitError(module.getLoc(), partition.error());
  FusionEmitter emitter(module, computation, *partition, name.str() + "_");
  if (mlir::failed(emitter.emitSubgraphs()))
    return mlir::failure();
  auto entry = emitter.emitLoopEntry(name, target, outputs);
  return entry;
}

} // namespace tessel
