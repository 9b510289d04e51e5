//===- NpuPicture.h - Pictures of NPU local memory --------------*- C++ -*-===//
//
// Three pictures, each as terminal text and as SVG, that regenerate the
// seed's figures:
//
//  * addresses: every NPU's memory in rows of blocks, the blocks holding the
//    given addresses marked A, B, C, ... (the seed's address figure);
//  * scatter: one box per channel slot, NPUs across, (n, slot) rows down, so
//    the features (n, c) of a tensor show which NPU and slot hold them;
//  * memory: every block of the tensors' byte ranges, NPUs down, offsets
//    across, each block labelled with the element (or padding, empty slot,
//    dummy lane) it holds. Sub-block elements (int8, int16, 4N/2N lanes)
//    split a block into parts.
//
// Terminal memory picture of fp32 (2,3,4,5) aligned at address 0, X = 4:
//
//   npu 0         0 |aaaaaaaa aaaaaaaa aaaa.... ........|
//               128 |dddddddd dddddddd dddd.... ........|
//   npu 1         0 |bbbbbbbb bbbbbbbb bbbb.... ........|
//   ...
//   a (0,0)  b (0,1)  c (0,2)  d (1,0)  e (1,1)  f (1,2)
//   . padding  (blank) free
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RENDER_NPUPICTURE_H
#define TESSEL_RENDER_NPUPICTURE_H

#include "tessel/Npu/LocalTensor.h"

#include <string>
#include <vector>

namespace tessel {

struct NpuPictureOptions {
  /// Bytes per block (the seed draws 4-byte blocks) and per picture row.
  int64_t blockBytes = 4;
  int64_t rowBytes = 128;
  /// Refuse pictures with more rows than this per NPU.
  int64_t maxRowsPerNpu = 256;
  /// A line (terminal) or heading (SVG) on top; empty for none.
  std::string title;
  /// Memory pictures: one symbol per tensor instead of one per feature.
  bool byTensor = false;
};

/// A tensor to draw, with the name the legend uses.
struct NamedTensor {
  std::string name;
  LocalTensor tensor;
};

/// The memory picture of one or more tensors of one configuration.
Expected<std::string> drawMemoryText(const std::vector<NamedTensor> &tensors,
                                     const NpuPictureOptions &options);
Expected<std::string> drawMemorySvg(const std::vector<NamedTensor> &tensors,
                                    const NpuPictureOptions &options);

/// The scatter picture of one tensor: which NPU and slot hold each (n, c).
std::string drawScatterText(const LocalTensor &tensor,
                            const NpuPictureOptions &options);
std::string drawScatterSvg(const LocalTensor &tensor,
                           const NpuPictureOptions &options);

/// The address picture: where each address falls. @pre every address is in
/// [0, X*S).
Expected<std::string> drawAddressesText(const NpuConfig &config,
                                        const std::vector<int64_t> &addresses,
                                        const NpuPictureOptions &options);
Expected<std::string> drawAddressesSvg(const NpuConfig &config,
                                       const std::vector<int64_t> &addresses,
                                       const NpuPictureOptions &options);

} // namespace tessel

#endif // TESSEL_RENDER_NPUPICTURE_H
