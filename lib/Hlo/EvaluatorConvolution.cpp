//===- EvaluatorConvolution.cpp - convolution with every attribute --------===//
//
// `dim_labels=b01f_01io->b01f` names, for lhs, rhs and output, which dim is
// the batch (b), feature (f), input/output feature of the kernel (i/o) and
// each spatial dim (0, 1, ...). For output position y of spatial dim d and
// kernel position k, the input read is at
//
//   p = y * stride + k * rhs_dilate - pad_low     (in the padded, dilated
//   input) input index p / lhs_dilate, when p >= 0, p % lhs_dilate == 0 and
//   inside;
//
// kernel position k reads kernel element size-1-k under rhs_reversal.
// feature_group_count splits the input and output features into groups
// (output feature o reads input features of group o / (O / G));
// batch_group_count splits the lhs batch instead (o reads batch group
// o / (O / B), whose N / B elements make the output batch). Products
// accumulate in double (floats) or wrap (integers) and round once to the
// result type, which may differ from the operands'.
//
//===----------------------------------------------------------------------===//
#include "EvaluatorOps.h"
#include "RawAttributes.h"

#include "tessel/Support/MathExtras.h"

#include <algorithm>

namespace tessel::eval {
namespace {

Status parseLabels(std::string_view text, char a, char b,
                   ConvolutionLabels &labels) {
  labels = ConvolutionLabels();
  std::vector<int64_t> spatialAt(text.size(), -1);
  for (size_t pos = 0; pos < text.size(); ++pos) {
    char c = text[pos];
    int64_t dim = static_cast<int64_t>(pos);
    if (c == a && labels.first < 0) {
      labels.first = dim;
    } else if (c == b && labels.second < 0) {
      labels.second = dim;
    } else if (c >= '0' && c <= '9' &&
               c - '0' < static_cast<int>(text.size()) &&
               spatialAt[c - '0'] < 0) {
      spatialAt[c - '0'] = dim;
    } else {
      return Error("dim_labels part '" + std::string(text) + "' has '" +
                   std::string(1, c) + "' at " + std::to_string(pos) +
                   ", expected " + a + ", " + b +
                   " and the digits 0.. once each");
    }
  }
  if (labels.first < 0 || labels.second < 0)
    return Error("dim_labels part '" + std::string(text) + "' lacks " + a +
                 " or " + b);
  size_t spatial = text.size() - 2;
  for (size_t s = 0; s < spatial; ++s) {
    if (spatialAt[s] < 0)
      return Error("dim_labels part '" + std::string(text) +
                   "' lacks spatial dim " + std::to_string(s));
    labels.spatial.push_back(spatialAt[s]);
  }
  return {};
}

std::string dimsText(const std::vector<int64_t> &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

} // namespace

Expected<ConvolutionDims> convolutionDims(const HloInstruction &inst,
                                          const Shape &lhs, const Shape &rhs) {
  const std::string *labelText = inst.rawAttribute("dim_labels");
  if (!labelText)
    return Error("convolution needs the attribute dim_labels=");
  std::string_view all = *labelText;
  size_t underscore = all.find('_'), arrow = all.find("->");
  if (underscore == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < underscore)
    return Error("dim_labels=" + *labelText + ", expected LHS_RHS->OUT");
  ConvolutionDims c;
  ConvolutionLabels &l = c.lhs, &r = c.rhs, &o = c.out;
  if (Status e = parseLabels(all.substr(0, underscore), 'b', 'f', l); !e)
    return e.takeError();
  if (Status e = parseLabels(all.substr(underscore + 1, arrow - underscore - 1),
                             'i', 'o', r);
      !e)
    return e.takeError();
  if (Status e = parseLabels(all.substr(arrow + 2), 'b', 'f', o); !e)
    return e.takeError();
  size_t spatial = l.spatial.size();
  if (r.spatial.size() != spatial || o.spatial.size() != spatial)
    return Error("dim_labels=" + *labelText +
                 " gives the operands different numbers of spatial dims");
  if (lhs.isTuple() || rhs.isTuple() ||
      lhs.rank() != static_cast<int64_t>(spatial + 2) ||
      rhs.rank() != static_cast<int64_t>(spatial + 2))
    return Error("dim_labels=" + *labelText + " does not fit the ranks of " +
                 lhs.toStringWithoutLayout() + " and " +
                 rhs.toStringWithoutLayout());
  Expected<std::vector<WindowDim>> window =
      windowAttribute(inst, static_cast<int64_t>(spatial));
  if (!window)
    return window.takeError();
  c.window = *window;
  Expected<int64_t> featureGroups =
      intAttribute(inst, "feature_group_count", 1);
  if (!featureGroups)
    return featureGroups.takeError();
  Expected<int64_t> batchGroups = intAttribute(inst, "batch_group_count", 1);
  if (!batchGroups)
    return batchGroups.takeError();
  int64_t batch = lhs.dims[l.first], features = lhs.dims[l.second];
  int64_t kernelIn = rhs.dims[r.first], kernelOut = rhs.dims[r.second];
  int64_t g = *featureGroups, bg = *batchGroups;
  if (g < 1 || bg < 1 || (g > 1 && bg > 1))
    return Error("feature_group_count=" + std::to_string(g) +
                 " and batch_group_count=" + std::to_string(bg) +
                 ", expected counts of at least 1, one of them 1");
  if (features % g != 0 || features / g != kernelIn || kernelOut % g != 0)
    return Error("the lhs has " + std::to_string(features) +
                 " features, the kernel " + std::to_string(kernelIn) +
                 " inputs and " + std::to_string(kernelOut) +
                 " outputs: expected lhs features = kernel inputs x "
                 "feature_group_count (" +
                 std::to_string(g) + ") and outputs divisible by it");
  if (batch % bg != 0 || kernelOut % bg != 0)
    return Error("batch_group_count=" + std::to_string(bg) +
                 " must divide the lhs batch (" + std::to_string(batch) +
                 ") and the kernel outputs (" + std::to_string(kernelOut) +
                 ")");
  c.featureGroups = g;
  c.batchGroups = bg;
  // The output dims.
  std::vector<int64_t> &outDims = c.outDims;
  outDims.resize(spatial + 2);
  outDims[o.first] = batch / bg;
  outDims[o.second] = kernelOut;
  for (size_t s = 0; s < spatial; ++s) {
    const WindowDim &w = (*window)[s];
    int64_t in = lhs.dims[l.spatial[s]], k = rhs.dims[r.spatial[s]];
    if (w.size != k)
      return Error("window size " + std::to_string(w.size) +
                   " of spatial dim " + std::to_string(s) +
                   " differs from the kernel's " + std::to_string(k));
    std::optional<int64_t> dilatedIn =
        in == 0
            ? std::optional<int64_t>(0)
            : checkedAdd(checkedMul(in - 1, w.baseDilation).value_or(-1), 1);
    std::optional<int64_t> dilatedK =
        k == 0
            ? std::optional<int64_t>(0)
            : checkedAdd(checkedMul(k - 1, w.windowDilation).value_or(-1), 1);
    if (!dilatedIn || !dilatedK || *dilatedIn < 0 || *dilatedK < 0)
      return Error("the dilated sizes of spatial dim " + std::to_string(s) +
                   " overflow");
    std::optional<int64_t> padded =
        checkedAdd(*dilatedIn,
                   checkedAdd(w.paddingLow, w.paddingHigh).value_or(INT64_MAX));
    if (!padded || *padded == INT64_MAX)
      return Error("the padded size of spatial dim " + std::to_string(s) +
                   " overflows");
    outDims[o.spatial[s]] =
        *padded < *dilatedK ? 0 : (*padded - *dilatedK) / w.stride + 1;
  }
  return c;
}

Expected<Literal> convolution(const HloInstruction &inst, const Literal &lhs,
                              const Literal &rhs) {
  Expected<ConvolutionDims> c = convolutionDims(inst, lhs.shape(), rhs.shape());
  if (!c)
    return c.takeError();
  const ConvolutionLabels &l = c->lhs, &r = c->rhs, &o = c->out;
  const std::vector<int64_t> &outDims = c->outDims;
  const std::vector<WindowDim> *window = &c->window;
  size_t spatial = l.spatial.size();
  int64_t g = c->featureGroups, bg = c->batchGroups;
  int64_t batch = lhs.dims()[l.first];
  int64_t kernelIn = rhs.dims()[r.first], kernelOut = rhs.dims()[r.second];
  const Shape &shape = inst.shape();
  if (shape.isTuple() || shape.dims != outDims)
    return Error("declared shape " + shape.toStringWithoutLayout() +
                 " does not match the inferred " +
                 std::string(primitiveTypeName(shape.elementType)) +
                 dimsText(outDims));
  Kind kind = kindOf(shape.elementType);
  for (Kind k : {kind, kindOf(lhs.elementType()), kindOf(rhs.elementType())})
    if (k == Kind::Complex || k == Kind::Other || k == Kind::Pred)
      return Error("convolution of these element types is not supported by "
                   "the evaluator");
  bool isFloatResult = kind == Kind::Narrow || kind == Kind::F64;
  Literal out(Shape(shape.elementType, outDims));
  std::vector<int64_t> ls = stridesOf(lhs.dims()), rs = stridesOf(rhs.dims());
  std::vector<int64_t> kernelDims(spatial);
  for (size_t s = 0; s < spatial; ++s)
    kernelDims[s] = rhs.dims()[r.spatial[s]];
  int64_t kernelPoints = 1;
  for (int64_t k : kernelDims)
    kernelPoints *= k;
  int64_t outGroupSize = kernelOut / g, batchGroupOut = kernelOut / bg;
  int64_t batchGroupSize = batch / bg;
  std::vector<int64_t> index(outDims.size(), 0), k(spatial);
  for (int64_t i = 0; i < out.elementCount(); ++i) {
    int64_t n = index[o.first], f = index[o.second];
    int64_t lhsBatch = n + (f / batchGroupOut) * batchGroupSize;
    int64_t firstFeature = (f / outGroupSize) * kernelIn;
    double sum = 0;
    uint64_t isum = 0;
    std::fill(k.begin(), k.end(), 0);
    for (int64_t p = 0; p < kernelPoints; ++p) {
      int64_t lBase = lhsBatch * ls[l.first], rBase = f * rs[r.second];
      bool inside = true;
      for (size_t s = 0; s < spatial && inside; ++s) {
        const WindowDim &w = (*window)[s];
        int64_t pos = index[o.spatial[s]] * w.stride + k[s] * w.windowDilation -
                      w.paddingLow;
        inside = pos >= 0 && pos % w.baseDilation == 0 &&
                 pos / w.baseDilation < lhs.dims()[l.spatial[s]];
        if (!inside)
          break;
        lBase += (pos / w.baseDilation) * ls[l.spatial[s]];
        int64_t kk = w.reversal ? kernelDims[s] - 1 - k[s] : k[s];
        rBase += kk * rs[r.spatial[s]];
      }
      if (inside) {
        for (int64_t c = 0; c < kernelIn; ++c) {
          int64_t li = lBase + (firstFeature + c) * ls[l.second];
          int64_t ri = rBase + c * rs[r.first];
          if (isFloatResult)
            sum += lhs.getDouble(li) * rhs.getDouble(ri);
          else
            isum += static_cast<uint64_t>(lhs.getInt(li)) *
                    static_cast<uint64_t>(rhs.getInt(ri));
        }
      }
      for (int64_t s = static_cast<int64_t>(spatial) - 1; s >= 0; --s) {
        if (++k[s] < kernelDims[s])
          break;
        k[s] = 0;
      }
    }
    if (isFloatResult)
      out.setDouble(i, sum);
    else
      out.setInt(i, static_cast<int64_t>(isum));
    for (int64_t d = static_cast<int64_t>(outDims.size()) - 1; d >= 0; --d) {
      if (++index[d] < outDims[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

} // namespace tessel::eval
