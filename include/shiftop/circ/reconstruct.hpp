// Iterative reconstruction on a block-circulant system matrix C (sparse-block-circulant-spmv,
// section 1): MLEM (Shepp and Vardi 1982, the paper's target), SIRT and CGLS. Each iteration is
// one product with C and one with C^T, applied by circ::Operator on whichever backend it was
// made for; C^T is C's exact transpose, so CGLS's theory holds.
#pragma once

#include <array>
#include <functional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/circ/operator.hpp"
#include "shiftop/core/enum_names.hpp"

namespace shiftop::circ {

enum class ReconMethod { Mlem, Sirt, Cgls };

}  // namespace shiftop::circ

template <>
struct shiftop::EnumNames<shiftop::circ::ReconMethod> {
  static constexpr std::array<std::pair<circ::ReconMethod, std::string_view>, 3> table{
      {{circ::ReconMethod::Mlem, "mlem"},
       {circ::ReconMethod::Sirt, "sirt"},
       {circ::ReconMethod::Cgls, "cgls"}}};
};

namespace shiftop::circ {

/// One iteration's report.
struct ReconProgress {
  int iteration = 0;
  /// ||C x - b||_2 / ||b||_2 after the iteration.
  double relative_residual = 0;
  /// MLEM: the Poisson negative log-likelihood sum(C x - b log(C x)) (terms with b = 0 and
  /// C x = 0 count 0); SIRT and CGLS: 0.
  double neg_log_likelihood = 0;
  double seconds = 0;  // since the start
};

struct ReconOptions {
  int iterations = 20;
  /// Called after every iteration (the tool prints a line per iteration from it).
  std::function<void(const ReconProgress&)> progress{};
};

template <class T>
struct ReconResult {
  std::vector<T> image;  // length k*nb, column order
  std::vector<ReconProgress> history;
};

/// x_{n+1} = x_n / (C^T 1) * C^T (b / C x_n) from x_0 = 1 (zero where C^T 1 is 0). b >= 0.
template <class T>
ReconResult<T> mlem(circ::Operator<T>& c, std::span<const T> sinogram, const ReconOptions& options);
/// x_{n+1} = max(0, x_n + D_col^{-1} C^T D_row^{-1} (b - C x_n)) from x_0 = 0, D the row and
/// column sums of C (SIRT with a nonnegativity projection).
template <class T>
ReconResult<T> sirt(circ::Operator<T>& c, std::span<const T> sinogram, const ReconOptions& options);
/// Conjugate gradients on C^T C x = C^T b from x_0 = 0 (CGLS: residuals updated, never formed).
/// Stops early, as LSQR's second rule, once ||C^T r|| <= 10 eps ||C|| ||r|| (||C|| estimated from
/// below by the iterations): beyond it FP32 CGLS diverged in the tests, so the history can be
/// shorter than `iterations`.
template <class T>
ReconResult<T> cgls(circ::Operator<T>& c, std::span<const T> sinogram, const ReconOptions& options);

}  // namespace shiftop::circ
