//===- ConvolutionDimensions.h - A convolution's dimension numbers -*- C++
//-*-===//
//
// The attributes of a convolution (kept verbatim by the parser) read once and
// checked against its operands, for the code generator. For
// `convolution(x, k), window={size=3x3 pad=1_1x1_1},
// dim_labels=b01f_01io->b01f` on f32[8,32,32,16] and f32[3,3,16,64]:
//
//   lhs: first (b) 0, second (f) 3, spatial {1,2}
//   rhs: first (i) 2, second (o) 3, spatial {0,1}
//   out: first (b) 0, second (f) 3, spatial {1,2}; outDims [8,32,32,64]
//
// Output element (n, f, y...) sums, over kernel positions k (row-major) and
// then input features c, lhs[n', g f0 + c, p / lhs_dilate] * rhs[c, f, k'],
// where p = y stride + k rhs_dilate - pad_low must be >= 0, a multiple of
// lhs_dilate and inside, k' is k or (size - 1 - k) under reversal, and the
// feature or batch groups pick g f0 and n' (HloEvaluator's convolution).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_HLO_CONVOLUTIONDIMENSIONS_H
#define TESSEL_HLO_CONVOLUTIONDIMENSIONS_H

#include "tessel/Hlo/HloModule.h"
#include "tessel/Support/Expected.h"

#include <vector>

namespace tessel {

struct ConvolutionDimensions {
  /// Where each dim_labels letter sits in one operand's dims.
  struct Labels {
    int64_t first = -1;  ///< b (lhs, output) or i (rhs)
    int64_t second = -1; ///< f (lhs, output) or o (rhs)
    std::vector<int64_t> spatial;
  };
  Labels lhs, rhs, out;
  std::vector<WindowDim> window;
  int64_t featureGroups = 1, batchGroups = 1;
  std::vector<int64_t> outDims;
};

/// The dimension numbers of a convolution, checked as XLA's shape inference
/// checks them; an error names the attribute that does not fit.
Expected<ConvolutionDimensions>
getConvolutionDimensions(const HloInstruction &convolution);

} // namespace tessel

#endif // TESSEL_HLO_CONVOLUTIONDIMENSIONS_H
