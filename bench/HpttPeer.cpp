//===- HpttPeer.cpp - HPTT as a peer column of relayout-bench -------------===//
//
// HPTT (github.com/springer13/hptt, "High-Performance Tensor Transposition")
// is the public transposer issue 15 measures tessel against. It is not in
// Debian and not vendored here: bench/build-hptt-peer.sh compiles this file
// together with a checkout of HPTT's sources into a shared library, and
// `relayout-bench --hptt LIB` loads it with dlopen, so that tessel builds and
// tests without it.
//
// The library's interface is C, so that relayout-bench needs none of HPTT's
// headers:
//
//   void *tessel_hptt_plan(perm, rank, dims, elementBytes, src, dst, threads,
//                          tune)
//       a plan that writes the row-major tensor `src` of `dims`, permuted
//       so that output dim k is input dim perm[k] (Eigen's shuffle and
//       numpy's transpose convention), to `dst`: B = 1 * A (beta 0), with
//       `threads` OpenMP threads; `tune` asks HPTT to time candidates
//       (hptt::MEASURE) instead of choosing by its model (hptt::ESTIMATE).
//       Null for element sizes HPTT has no type for (it has 4- and 8-byte
//       floats and complex numbers only).
//   void tessel_hptt_execute(void *plan)
//   void tessel_hptt_free(void *plan)
//
//===----------------------------------------------------------------------===//
#include "hptt.h"

#include <memory>
#include <vector>

namespace {

/// One plan of either float type, kept alive by the pointer handed out.
struct Plan {
  std::shared_ptr<hptt::Transpose<float>> f32;
  std::shared_ptr<hptt::Transpose<double>> f64;
};

} // namespace

extern "C" {

void *tessel_hptt_plan(const int *perm, int rank, const long long *dims,
                       int elementBytes, const void *src, void *dst,
                       int threads, int tune) {
  // The outer sizes are the tensors' own: HPTT reads them even where its
  // documentation allows null.
  std::vector<int> size(dims, dims + rank), out(rank);
  for (int k = 0; k < rank; ++k)
    out[k] = size[perm[k]];
  hptt::SelectionMethod method = tune ? hptt::MEASURE : hptt::ESTIMATE;
  auto plan = std::make_unique<Plan>();
  if (elementBytes == 4)
    plan->f32 = hptt::create_plan(perm, rank, 1.0f,
                                  static_cast<const float *>(src), size.data(),
                                  size.data(), 0.0f, static_cast<float *>(dst),
                                  out.data(), method, threads, nullptr, true);
  else if (elementBytes == 8)
    plan->f64 = hptt::create_plan(perm, rank, 1.0,
                                  static_cast<const double *>(src), size.data(),
                                  size.data(), 0.0, static_cast<double *>(dst),
                                  out.data(), method, threads, nullptr, true);
  else
    return nullptr;
  return plan.release();
}

void tessel_hptt_execute(void *plan) {
  auto *p = static_cast<Plan *>(plan);
  if (p->f32)
    p->f32->execute();
  else
    p->f64->execute();
}

void tessel_hptt_free(void *plan) { delete static_cast<Plan *>(plan); }

} // extern "C"
