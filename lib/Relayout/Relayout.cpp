//===- Relayout.cpp - Plans that convert buffers between layouts ----------===//
#include "tessel/Relayout/Relayout.h"

#include "Kernels.h"
#include "tessel/Support/Host.h"

#include <mutex>

namespace tessel {

using namespace relayout;

namespace {

enum class Kind {
  Empty,
  Permute,
  Tile,
  Retile,
  TiledTranspose,
  SubBytePermute,
  TwoSteps,
  Generic,
  Reference
};

/// Streaming stores pay once the destination would push the working set
/// out of the last-level cache: half of what a core can count on
/// (CacheSizes::usableL3: the L3 as the CPU reports it, at most 32 MiB).
/// On the 2-core EPYC VM, 32 MiB of L3, ordinary stores are 15-40% faster
/// at 4 MiB and streaming ones up to 1.7x faster at 64 MiB. hostCaches()
/// falls back to 32 MiB where nothing plausible is reported; it reads
/// sysfs first because the C library reports the host's whole L3 under a
/// VM.
int64_t defaultStreamingThreshold() { return hostCaches().usableL3() / 2; }
/// Below this many bytes moved, execute() stays on the calling thread.
constexpr int64_t kParallelThreshold = int64_t(1) << 20;
/// Table entries the generic kernel may allocate before it gives up.
constexpr int64_t kMaxTableEntries = int64_t(1) << 24;

} // namespace

struct RelayoutPlan::Impl {
  TiledLayout from, to;
  RelayoutOptions options;
  Kind kind = Kind::Reference;
  GenericPlan generic;
  TilePlan tile;
  PermutePlan permute;
  RetilePlan retile;
  TiledTransposePlan tiledTranspose;
  SubBytePermutePlan subBytePermute;
  /// Kind::TwoSteps: a permute and a tiling (or an untiling and a permute)
  /// through a plain buffer in the middle (chooseTwoSteps).
  std::unique_ptr<RelayoutPlan> first, second;
  /// The middle buffer, kept after the first execute for the next (its
  /// pages are then mapped already: allocating and faulting in a fresh one
  /// each time cost as much as a copy). An execute that finds it in use by
  /// another thread allocates its own.
  mutable std::mutex middleMutex;
  mutable HostBuffer middle;
  const KernelSet *kernels = nullptr;

  Impl(TiledLayout from, TiledLayout to, RelayoutOptions options)
      : from(std::move(from)), to(std::move(to)), options(options) {}

  int64_t streamingThreshold() const {
    return options.streamingThresholdBytes < 0
               ? defaultStreamingThreshold()
               : options.streamingThresholdBytes;
  }
  bool streaming() const { return to.physicalBytes() >= streamingThreshold(); }
  int threads() const {
    int64_t threshold = options.parallelThresholdBytes < 0
                            ? kParallelThreshold
                            : options.parallelThresholdBytes;
    if (from.physicalBytes() + to.physicalBytes() < threshold)
      return 1;
    return resolveThreads(options.threads);
  }
  std::string storesText() const {
    return streaming() ? "streaming stores" : "ordinary stores";
  }
  /// Picks the kernel (the fastest one that applies).
  void choose();
  /// Whether a tiling in another dim order goes in two fast steps rather
  /// than by `generic` (null: no generic plan).
  bool chooseTwoSteps(const GenericPlan *generic);
};

static std::string elementText(const TiledLayout &layout) {
  int64_t bits = layout.elementBits();
  if (bits % 8 == 0)
    return std::to_string(bits / 8) + "-byte elements";
  return std::to_string(bits) + "-bit elements";
}

void RelayoutPlan::Impl::choose() {
  if (from.logicalElements() == 0) {
    kind = Kind::Empty;
    return;
  }
  if (std::optional<PermutePlan> plan = planPermute(from, to, kernels)) {
    kind = Kind::Permute;
    permute = std::move(*plan);
    return;
  }
  if (std::optional<TilePlan> plan = planTile(from, to)) {
    kind = Kind::Tile;
    tile = *plan;
    tile.kernels = kernels;
    return;
  }
  if (std::optional<RetilePlan> plan = planRetile(from, to)) {
    kind = Kind::Retile;
    retile = *plan;
    retile.source.kernels = retile.destination.kernels = kernels;
    return;
  }
  if (std::optional<TiledTransposePlan> plan = planTiledTranspose(from, to)) {
    kind = Kind::TiledTranspose;
    tiledTranspose = *plan;
    tiledTranspose.kernels = kernels;
    return;
  }
  if (std::optional<SubBytePermutePlan> plan = planSubBytePermute(from, to)) {
    kind = Kind::SubBytePermute;
    subBytePermute = std::move(*plan);
    subBytePermute.dims.kernels = kernels;
    return;
  }
  std::optional<GenericPlan> plan = planGeneric(from, to, kMaxTableEntries);
  if (chooseTwoSteps(plan ? &*plan : nullptr)) {
    kind = Kind::TwoSteps;
    return;
  }
  if (plan) {
    kind = Kind::Generic;
    generic = std::move(*plan);
    return;
  }
  kind = Kind::Reference;
}

/// Whether the generic kernel would copy runs of 256 bytes or more on
/// average: then it moves the data once at near a copy's speed, and two
/// steps would be slower (f32[64,256,1024]{2,1,0} to {2,0,1:T(8,128)},
/// whose minor dim stays, runs of 512 bytes: 53-61% of a copy generic,
/// 42-43% in two steps, Zen 5, one thread).
static bool genericRunsAreLong(const GenericPlan *plan) {
  if (!plan || plan->elementBytes == 0 || plan->runs.empty())
    return false;
  int64_t inner = plan->groups.back().size;
  return inner * plan->elementBytes / static_cast<int64_t>(plan->runs.size()) >=
         256;
}

/// A TPU tiling whose dim order is not the source's (f32[64,256,1024]
/// {2,1,0} to {1,2,0:T(8,128)}), or the reverse, has no kernel of its own,
/// and the generic kernel moves it element by element where the orders
/// differ in the minor dim (4 GB/s). It goes in two steps instead, through
/// a buffer of the tiled side's dim order without its tiles: a permute,
/// then a tiling in that order; or an untiling, then a permute. Each
/// crosses memory once, so the data crosses it twice, at the speed of the
/// fast kernels (Zen 5, one thread, 64 MiB: 9% of a copy through the
/// generic kernel, 41% in two steps). Tiled on both sides in different
/// orders: an untiling into the source's order, then those two steps.
/// Taken only where every step is one of those kernels and the generic
/// kernel's runs are short.
bool RelayoutPlan::Impl::chooseTwoSteps(const GenericPlan *generic) {
  bool fromTiles = !from.layout().tiles.empty();
  bool toTiles = !to.layout().tiles.empty();
  if (!fromTiles && !toTiles)
    return false;
  bool toTiled = toTiles && !fromTiles;
  if (fromTiles && toTiles &&
      from.layout().minorToMajor == to.layout().minorToMajor)
    return false;
  const TiledLayout &tiled = toTiled ? to : from;
  Layout plain = tiled.layout();
  plain.tiles.clear();
  plain.tailPaddingAlignment = 1;
  // The other side already in the middle's layout: one step would be the
  // whole relayout again (and choosing it would recurse).
  if (plain == (toTiled ? from : to).layout())
    return false;
  if (genericRunsAreLong(generic))
    return false;
  Shape middle(tiled.shape().elementType, tiled.shape().dims, plain);
  middle.dynamicDims = tiled.shape().dynamicDims;
  Expected<RelayoutPlan> one =
      RelayoutPlan::create(from.shape(), middle, options);
  if (!one)
    return false;
  Expected<RelayoutPlan> two =
      RelayoutPlan::create(middle, to.shape(), options);
  if (!two)
    return false;
  // A permute of packed 4-bit (or 1- and 2-bit) elements is a
  // SubBytePermute.
  auto permutes = [](Kind kind) {
    return kind == Kind::Permute || kind == Kind::SubBytePermute;
  };
  bool fast =
      toTiled ? permutes(one->impl->kind) && two->impl->kind == Kind::Tile
      : !toTiles
          ? one->impl->kind == Kind::Tile && permutes(two->impl->kind)
          : one->impl->kind == Kind::Tile && two->impl->kind == Kind::TwoSteps;
  if (!fast)
    return false;
  first = std::make_unique<RelayoutPlan>(std::move(*one));
  second = std::make_unique<RelayoutPlan>(std::move(*two));
  return true;
}

Expected<RelayoutPlan> RelayoutPlan::create(const Shape &shape,
                                            const Layout &from,
                                            const Layout &to,
                                            const RelayoutOptions &options) {
  if (!shape.isArray())
    return Error("expected an array shape, got " + shape.toString());
  Shape source(shape.elementType, shape.dims, from);
  source.dynamicDims = shape.dynamicDims;
  Shape destination(shape.elementType, shape.dims, to);
  destination.dynamicDims = shape.dynamicDims;
  return create(source, destination, options);
}

Expected<RelayoutPlan> RelayoutPlan::create(const Shape &from, const Shape &to,
                                            const RelayoutOptions &options) {
  if (from.isArray() && to.isArray() &&
      (from.elementType != to.elementType || from.dims != to.dims))
    return Error("source " + from.toStringWithoutLayout() +
                 " and destination " + to.toStringWithoutLayout() +
                 " differ; a relayout keeps the element type and dims");
  Expected<TiledLayout> source = TiledLayout::get(from);
  if (!source)
    return Error("source layout: " + source.error().message);
  Expected<TiledLayout> destination = TiledLayout::get(to);
  if (!destination)
    return Error("destination layout: " + destination.error().message);
  Expected<IsaLevel> level = chooseLevel(options.isa);
  if (!level)
    return level.error();
  auto impl = std::make_unique<Impl>(std::move(*source),
                                     std::move(*destination), options);
  impl->kernels = &kernelSet(*level);
  impl->choose();
  return RelayoutPlan(std::move(impl));
}

RelayoutPlan::RelayoutPlan(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
RelayoutPlan::RelayoutPlan(RelayoutPlan &&) noexcept = default;
RelayoutPlan &RelayoutPlan::operator=(RelayoutPlan &&) noexcept = default;
RelayoutPlan::~RelayoutPlan() = default;

const TiledLayout &RelayoutPlan::source() const { return impl->from; }
const TiledLayout &RelayoutPlan::destination() const { return impl->to; }
int64_t RelayoutPlan::sourceBytes() const { return impl->from.physicalBytes(); }
int64_t RelayoutPlan::destinationBytes() const {
  return impl->to.physicalBytes();
}

std::string RelayoutPlan::isa() const { return isaName(impl->kernels->level); }

Expected<RowInterleaver> RowInterleaver::create(const std::string &isa) {
  Expected<IsaLevel> level = chooseLevel(isa);
  if (!level)
    return level.error();
  return RowInterleaver(&kernelSet(*level));
}

void RowInterleaver::interleave(uint8_t *out, const uint8_t *const *rows,
                                int64_t count, int64_t elementBytes,
                                int64_t k) const {
  int64_t j = kernels->interleave(out, rows, count, elementBytes, k, false);
  for (; j < count; ++j)
    for (int64_t q = 0; q < k; ++q)
      std::memcpy(out + (j * k + q) * elementBytes, rows[q] + j * elementBytes,
                  elementBytes);
}

void RowInterleaver::deinterleave(const uint8_t *in, uint8_t *const *rows,
                                  int64_t count, int64_t elementBytes,
                                  int64_t k) const {
  int64_t j = kernels->deinterleave(in, rows, count, elementBytes, k, false);
  for (; j < count; ++j)
    for (int64_t q = 0; q < k; ++q)
      std::memcpy(rows[q] + j * elementBytes, in + (j * k + q) * elementBytes,
                  elementBytes);
}

std::string RowInterleaver::isa() const { return isaName(kernels->level); }

int64_t relayoutDefaultStreamingThreshold() {
  return defaultStreamingThreshold();
}

std::vector<std::string> relayoutIsaLevels() {
  std::vector<std::string> names;
  for (IsaLevel level : supportedLevels())
    names.push_back(isaName(level));
  return names;
}

std::string RelayoutPlan::describe() const {
  return describeKernel() + ", " + isa();
}

std::string RelayoutPlan::describeKernel() const {
  switch (impl->kind) {
  case Kind::Empty:
    return "empty array: zero the destination";
  case Kind::Permute:
    return describePermute(impl->permute) + ", " + impl->storesText();
  case Kind::Tile:
    return describeTile(impl->tile) + ", " + impl->storesText();
  case Kind::Retile:
    return describeRetile(impl->retile) + ", " + impl->storesText();
  case Kind::TiledTranspose:
    return describeTiledTranspose(impl->tiledTranspose) + ", " +
           impl->storesText();
  case Kind::SubBytePermute:
    return describeSubBytePermute(impl->subBytePermute) + ", " +
           (impl->subBytePermute.bits == 4 ? impl->storesText()
                                           : "ordinary stores");
  case Kind::TwoSteps:
    return "two steps through a " +
           impl->first->destination().shape().toString() +
           " buffer: " + impl->first->describeKernel() + "; then " +
           impl->second->describeKernel();
  case Kind::Generic: {
    const GenericPlan &plan = impl->generic;
    const GenericPlan::Group &inner = plan.groups.back();
    if (plan.elementBytes == 0) {
      using Split = GenericPlan::BitSplit;
      std::string split =
          plan.bitSplit == Split::Any
              ? "split among threads"
              : "one thread (destination bytes shared across the walk)";
      return "generic bit copy: " + elementText(impl->from) + " to " +
             elementText(impl->to) +
             (plan.bitRunsAreBytes ? ", runs of whole bytes copied" : "") +
             ", " + split;
    }
    return "generic: " + std::to_string(plan.groups.size() - 1) +
           " outer dim groups, inner group of " + std::to_string(inner.size) +
           " elements in " + std::to_string(plan.runs.size()) +
           " contiguous runs, " + elementText(impl->from) +
           (plan.dstHasPadding ? ", padding zeroed first" : "");
  }
  case Kind::Reference:
    return "per-element reference (combined dims too large for tables)";
  }
  return "";
}

Status RelayoutPlan::execute(const void *src, int64_t srcBytes, void *dst,
                             int64_t dstBytes) const {
  auto sizeError = [](const char *what, int64_t bytes, const TiledLayout &l) {
    return Error(std::string(what) + " buffer has " + std::to_string(bytes) +
                 " bytes, " + l.shape().toString() + " needs " +
                 std::to_string(l.physicalBytes()));
  };
  if (srcBytes != sourceBytes())
    return sizeError("source", srcBytes, impl->from);
  if (dstBytes != destinationBytes())
    return sizeError("destination", dstBytes, impl->to);
  if ((srcBytes > 0 && !src) || (dstBytes > 0 && !dst))
    return Error("null buffer for a relayout of " + std::to_string(srcBytes) +
                 " to " + std::to_string(dstBytes) + " bytes");
  const auto *in = static_cast<const uint8_t *>(src);
  auto *out = static_cast<uint8_t *>(dst);
  switch (impl->kind) {
  case Kind::Empty:
    if (dstBytes > 0)
      std::memset(out, 0, dstBytes);
    break;
  case Kind::Permute:
    runPermute(impl->permute, in, out, impl->threads(), impl->streaming());
    break;
  case Kind::Tile:
    runTile(impl->tile, in, out, impl->threads(), impl->streaming());
    break;
  case Kind::Retile:
    runRetile(impl->retile, in, out, impl->threads(), impl->streaming());
    break;
  case Kind::TiledTranspose:
    runTiledTranspose(impl->tiledTranspose, in, out, impl->threads(),
                      impl->streaming());
    break;
  case Kind::SubBytePermute:
    runSubBytePermute(impl->subBytePermute, in, out, impl->threads(),
                      impl->streaming());
    break;
  case Kind::TwoSteps: {
    int64_t middleBytes = impl->first->destinationBytes();
    std::unique_lock<std::mutex> lock(impl->middleMutex, std::try_to_lock);
    HostBuffer own;
    HostBuffer &middle = lock.owns_lock() ? impl->middle : own;
    if (middle.size() != middleBytes) {
      if (!canAllocate(static_cast<double>(middleBytes)))
        return Error("a relayout in two steps needs a buffer of " +
                     describeBytes(static_cast<double>(middleBytes)) +
                     " in the middle, more than this machine can allocate");
      middle = HostBuffer(middleBytes);
      if (middleBytes > 0 && !middle.data())
        return Error("could not allocate the middle buffer of " +
                     describeBytes(static_cast<double>(middleBytes)) +
                     " for a relayout in two steps");
    }
    if (Status status =
            impl->first->execute(in, srcBytes, middle.data(), middleBytes);
        !status)
      return status;
    return impl->second->execute(middle.data(), middleBytes, out, dstBytes);
  }
  case Kind::Generic:
    runGeneric(impl->generic, in, out, impl->threads(), impl->streaming());
    break;
  case Kind::Reference:
    relayoutReference(impl->from, impl->to, in, out);
    break;
  }
  return {};
}

bool isPlainRowMajor(const TiledLayout &layout) {
  const Layout &l = layout.layout();
  return l.tiles.empty() && l.tailPaddingAlignment == 1 &&
         l.minorToMajor == Layout::rowMajor(layout.rank()).minorToMajor &&
         layout.elementBits() == 8 * byteWidth(layout.shape().elementType);
}

std::string describePhysicalSize(const TiledLayout &layout) {
  int64_t bits = layout.elementBits();
  std::string element = bits % 8 == 0 ? std::to_string(bits / 8) + " bytes"
                                      : std::to_string(bits) + " bits";
  std::string reason =
      std::to_string(layout.physicalElements()) + " elements of " + element;
  if (layout.physicalElements() != layout.logicalElements())
    reason += ", padding included";
  return reason;
}

static std::string tupleText(const std::vector<int64_t> &dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i)
    out += (i ? "," : "") + std::to_string(dims[i]);
  return out + (dims.size() == 1 ? ",)" : ")");
}

Status checkSourceArray(const TiledLayout &from,
                        const std::vector<int64_t> &dims, bool fortranOrder,
                        int64_t dataBytes, const std::string &name,
                        bool isArrayFile) {
  if (isArrayFile && isPlainRowMajor(from) &&
      (dims != from.logicalDims() || fortranOrder))
    return Error(name + ": shape " + tupleText(dims) +
                 (fortranOrder ? " in Fortran order" : "") + ", expected " +
                 tupleText(from.logicalDims()) + " for " +
                 from.shape().toString());
  if (dataBytes != from.physicalBytes())
    return Error(name + " has " + std::to_string(dataBytes) + " bytes" +
                 (isArrayFile ? " of data" : "") + ", " +
                 from.shape().toString() + " needs " +
                 std::to_string(from.physicalBytes()) + " (" +
                 describePhysicalSize(from) + ")");
  return {};
}

} // namespace tessel
