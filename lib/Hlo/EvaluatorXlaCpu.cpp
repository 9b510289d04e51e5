//===- EvaluatorXlaCpu.cpp - XLA:CPU's reduction order and contraction ----===//
//
// What Numerics::XlaCpu changes (HloEvaluator.h), found by running jax
// 0.10.2 on x86-64 with XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text
// and reading the optimized HLO and LLVM IR, then checked bit for bit
// against jax on random inputs (HloXlaCpuNumericsTest, the corpus):
//
//   f32[4,37] reduce dims={1}           f32[4,37] reduce-window
//                                 ->      window={size=1x32 stride=1x32
//                                                 pad=0_0x13_14}
//                                       f32[4,2] reduce dims={1}
//
// each window folded in row-major order from the init value, padding
// skipped; the LLVM IR adds with `fadd reassoc`, but for one reduced dim
// LLVM keeps the order. Elementwise code is compiled with fp-contract=fast:
// `add(multiply(a, b), c)` is one fma when the multiply has no other use.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorOps.h"

#include "tessel/Hlo/HloEvaluator.h"

#include <cmath>

namespace tessel::eval {

std::optional<TreeWindow>
xlaCpuTreeWindow(const std::vector<int64_t> &dims,
                 const std::vector<int64_t> &reduced) {
  bool split = false;
  for (int64_t d : reduced)
    split |= dims[d] > kXlaCpuReduceWindow;
  if (!split)
    return std::nullopt;
  TreeWindow w;
  w.size.assign(dims.size(), 1);
  w.low.assign(dims.size(), 0);
  w.outDims = dims;
  for (int64_t d : reduced) {
    int64_t n = dims[d];
    w.size[d] = std::min(n, kXlaCpuReduceWindow);
    int64_t windows = (n + w.size[d] - 1) / w.size[d];
    // XLA's "same" padding: the shortfall split, the smaller half first.
    w.low[d] = (windows * w.size[d] - n) / 2;
    w.outDims[d] = windows;
  }
  return w;
}

bool dividesByConstant(const HloInstruction &inst) {
  if (inst.opcode() != HloOpcode::Divide || !inst.shape().isArray() ||
      !isFloat(inst.shape().elementType))
    return false;
  const HloInstruction *divisor = inst.operand(1);
  if (divisor->opcode() == HloOpcode::Broadcast)
    divisor = divisor->operand(0);
  return divisor->opcode() == HloOpcode::Constant &&
         inst.operand(0)->opcode() != HloOpcode::Constant;
}

Expected<Literal> reciprocal(const Literal &divisor) {
  if (divisor.isTuple())
    return Error("the divisor is a tuple");
  Literal ones(Shape(divisor.elementType(), divisor.dims()));
  for (int64_t i = 0; i < ones.elementCount(); ++i)
    ones.setDouble(i, 1.0);
  return binary(HloOpcode::Divide, ones, divisor,
                Shape(divisor.elementType(), divisor.dims()));
}

std::optional<int> contractedOperand(const HloInstruction &inst) {
  if (inst.opcode() != HloOpcode::Add && inst.opcode() != HloOpcode::Subtract)
    return std::nullopt;
  const Shape &shape = inst.shape();
  if (!shape.isArray() || (shape.elementType != PrimitiveType::F32 &&
                           shape.elementType != PrimitiveType::F64))
    return std::nullopt;
  if (inst.operand(0) == inst.operand(1))
    return std::nullopt;
  for (int k : {0, 1}) {
    const HloInstruction *m = inst.operand(k);
    if ((m->opcode() == HloOpcode::Multiply || dividesByConstant(*m)) &&
        m->users().size() == 1 && !m->isRoot() && m->shape().isArray() &&
        m->shape().elementType == shape.elementType &&
        m->operand(0)->shape().isArray() && m->operand(1)->shape().isArray())
      return k;
  }
  return std::nullopt;
}

Expected<Literal> fusedMultiplyAdd(HloOpcode op, int k, const Literal &a,
                                   const Literal &b, const Literal &c,
                                   const Shape &shape) {
  if (a.isTuple() || b.isTuple() || c.isTuple() || a.dims() != shape.dims ||
      b.dims() != shape.dims || c.dims() != shape.dims)
    return Error("the contracted multiply-add needs operands of one shape");
  Literal out(Shape(shape.elementType, shape.dims));
  bool isF32 = shape.elementType == PrimitiveType::F32;
  // add: a*b + c; subtract: a*b - c (the multiply first) or c - a*b.
  double signProduct = op == HloOpcode::Subtract && k == 1 ? -1 : 1;
  double signAddend = op == HloOpcode::Subtract && k == 0 ? -1 : 1;
  for (int64_t i = 0; i < out.elementCount(); ++i) {
    double x = signProduct * a.getDouble(i), y = b.getDouble(i),
           z = signAddend * c.getDouble(i);
    if (isF32)
      out.setDouble(i, std::fmaf(static_cast<float>(x), static_cast<float>(y),
                                 static_cast<float>(z)));
    else
      out.setDouble(i, std::fma(x, y, z));
  }
  return out;
}

float xlaCpuTreeSum(std::vector<float> values) {
  auto fold = [](const float *begin, const float *end) {
    float sum = 0;
    for (const float *x = begin; x != end; ++x)
      sum += *x;
    return sum;
  };
  while (std::optional<TreeWindow> w =
             xlaCpuTreeWindow({static_cast<int64_t>(values.size())}, {0})) {
    int64_t n = static_cast<int64_t>(values.size()), size = w->size[0];
    std::vector<float> sums(w->outDims[0]);
    for (int64_t k = 0; k < w->outDims[0]; ++k) {
      int64_t begin = std::max<int64_t>(k * size - w->low[0], 0);
      int64_t end = std::min<int64_t>(k * size - w->low[0] + size, n);
      sums[k] = fold(values.data() + begin, values.data() + end);
    }
    values = std::move(sums);
  }
  return fold(values.data(), values.data() + values.size());
}

float xlaCpuRowGemvDot(const std::vector<float> &a,
                       const std::vector<float> &x) {
  constexpr int64_t kLanes = 8;
  int64_t k = static_cast<int64_t>(a.size());
  int64_t whole = k / kLanes * kLanes;
  float lanes[kLanes] = {};
  for (int64_t p = 0; p < whole; ++p)
    lanes[p % kLanes] = std::fmaf(a[p], x[p], lanes[p % kLanes]);
  // The horizontal sum: halves added lane by lane.
  for (int64_t half = kLanes / 2; half >= 1; half /= 2)
    for (int64_t l = 0; l < half; ++l)
      lanes[l] += lanes[l + half];
  float tail = 0;
  for (int64_t p = whole; p < k; ++p)
    tail = std::fmaf(a[p], x[p], tail);
  return lanes[0] + tail;
}

XlaCpuDot xlaCpuDotKind(const DotDimensionNumbers &dn,
                        const std::vector<int64_t> &lhsDims,
                        const std::vector<int64_t> &rhsDims) {
  if (!dn.lhsBatchDims.empty() || dn.lhsContractingDims.size() != 1)
    return XlaCpuDot::Fma;
  auto freeSize = [](const std::vector<int64_t> &dims, int64_t contracting) {
    int64_t size = 1;
    for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d)
      if (d != contracting)
        size *= dims[d];
    return size;
  };
  int64_t lhsFree = freeSize(lhsDims, dn.lhsContractingDims[0]);
  int64_t rhsFree = freeSize(rhsDims, dn.rhsContractingDims[0]);
  if (lhsFree == 1 && rhsFree == 1)
    return XlaCpuDot::MultiplyReduce;
  if (rhsFree == 1 &&
      dn.lhsContractingDims[0] == static_cast<int64_t>(lhsDims.size()) - 1)
    return XlaCpuDot::RowGemv;
  return XlaCpuDot::Fma;
}

} // namespace tessel::eval
