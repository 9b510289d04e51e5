//===- FusionEmitter.cpp - Subgraph functions and the loop emitter --------===//
#include "tessel/Codegen/FusionEmitter.h"

#include "ElementalEmitter.h"
#include "tessel/Codegen/ComputationPartitioner.h"
#include "tessel/Dialect/TesselDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

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

LaunchConfig getLoopLaunchConfig(const Shape &output, Target target) {
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

/// "LINE:COLUMN: cannot compile %name: " for an error about `instruction`.
std::string cannotCompile(const HloInstruction &instruction) {
  SourceLocation where = instruction.location();
  std::string prefix;
  if (where.line > 0)
    prefix =
        std::to_string(where.line) + ":" + std::to_string(where.column) + ": ";
  return prefix + "cannot compile %" + instruction.name() + ": ";
}

/// Emits the functions of one partitioned computation.
class FusionEmitter {
public:
  FusionEmitter(mlir::ModuleOp module, const HloComputation &computation,
                const PartitionedComputation &partition, std::string prefix)
      : module(module), computation(computation), partition(partition),
        prefix(std::move(prefix)), b(module.getContext()) {}

  mlir::LogicalResult emitSubgraphs();
  mlir::FailureOr<mlir::func::FuncOp>
  emitLoopEntry(llvm::StringRef name, Target target,
                llvm::ArrayRef<int64_t> selected);
  std::string error;

private:
  mlir::LogicalResult emitSubgraph(const Subgraph &subgraph);
  /// The value(s) of `instruction` read from outside the subgraph being
  /// emitted: a parameter tensor or a call of another subgraph.
  SmallVector<Value> readOutside(const HloInstruction &instruction,
                                 mlir::ValueRange params,
                                 mlir::ValueRange indices);
  SmallVector<mlir::Type> paramTypes();

  mlir::ModuleOp module;
  const HloComputation &computation;
  const PartitionedComputation &partition;
  std::string prefix;
  mlir::OpBuilder b;
  llvm::DenseMap<const Subgraph *, mlir::func::FuncOp> functions;
};

SmallVector<mlir::Type> FusionEmitter::paramTypes() {
  SmallVector<mlir::Type> types;
  for (HloInstruction *param : computation.parameters())
    types.push_back(getTensorType(param->shape(), b.getContext()));
  return types;
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
        error = cannotCompile(*root) + typeError;
        return mlir::failure();
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
    if (mlir::failed(values)) {
      error = emitter.error();
      return mlir::failure();
    }
    returned.append(values->begin(), values->end());
  }
  b.create<mlir::func::ReturnOp>(loc, returned);
  functions[&subgraph] = function;
  return mlir::success();
}

mlir::LogicalResult FusionEmitter::emitSubgraphs() {
  for (const Subgraph &subgraph : partition.subgraphs)
    if (mlir::failed(emitSubgraph(subgraph)))
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
      error = cannotCompile(*output.instruction) +
              "a fusion output must be an array (nested tuples are not "
              "supported)";
      return mlir::failure();
    }
    if (output.shape().dims != outputs.front().shape().dims) {
      error = cannotCompile(*computation.root()) +
              "the outputs of a loop fusion must have the same dims, %" +
              outputs.front().instruction->name() + " and %" +
              output.instruction->name() + " differ";
      return mlir::failure();
    }
  }
  const Shape &shape = outputs.front().shape();
  LaunchConfig config = getLoopLaunchConfig(shape, target);
  IndexingMap map = getLoopThreadToOutputMap(shape, config, context);

  SmallVector<mlir::Type> inputs = paramTypes();
  size_t numParams = inputs.size();
  SmallVector<mlir::Type> resultTypes;
  for (const FusionOutput &output : outputs)
    resultTypes.push_back(getTensorType(output.shape(), context));
  inputs.append(resultTypes.begin(), resultTypes.end());

  b.setInsertionPointToEnd(module.getBody());
  auto entry = b.create<mlir::func::FuncOp>(
      loc, name, b.getFunctionType(inputs, resultTypes));
  entry->setAttr("tessel.num_threads", b.getI64IntegerAttr(config.numThreads));
  entry->setAttr("tessel.num_blocks", b.getI64IntegerAttr(config.numBlocks));
  mlir::Block *body = entry.addEntryBlock();
  b.setInsertionPointToStart(body);
  mlir::ValueRange params = body->getArguments().take_front(numParams);
  mlir::ValueRange outs = body->getArguments().drop_front(numParams);

  Value th = b.create<mlir::gpu::ThreadIdOp>(loc, mlir::gpu::Dimension::x,
                                             b.getIndexAttr(config.numThreads));
  Value bl = b.create<mlir::gpu::BlockIdOp>(loc, mlir::gpu::Dimension::x,
                                            b.getIndexAttr(config.numBlocks));
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

} // namespace

mlir::FailureOr<mlir::func::FuncOp>
emitLoopFusion(mlir::ModuleOp module, const HloComputation &computation,
               llvm::StringRef name, Target target, std::string *error,
               llvm::ArrayRef<int64_t> outputs) {
  mlir::MLIRContext *context = module.getContext();
  context->loadDialect<TesselDialect, mlir::gpu::GPUDialect,
                       mlir::arith::ArithDialect, mlir::math::MathDialect,
                       mlir::scf::SCFDialect, mlir::tensor::TensorDialect,
                       mlir::func::FuncDialect>();
  Expected<PartitionedComputation> partition =
      partitionComputation(computation, context);
  if (!partition) {
    *error = partition.error().message;
    return mlir::failure();
  }
  FusionEmitter emitter(module, computation, *partition, name.str() + "_");
  if (mlir::failed(emitter.emitSubgraphs())) {
    *error = emitter.error;
    return mlir::failure();
  }
  auto entry = emitter.emitLoopEntry(name, target, outputs);
  if (mlir::failed(entry))
    *error = emitter.error;
  return entry;
}

} // namespace tessel
