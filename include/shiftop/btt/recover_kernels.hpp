// The kernels of a planned operator. A btt::Plan keeps F^ (the DFT of the kernels, possibly of an
// FFT length other than 2*Nt), not the kernels themselves; what needs them again (the spectrum,
// the regularisation path of a Python Operator) recovers them here from impulse responses.
#pragma once

#include <vector>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::btt {

/// The kernels of a block Toeplitz operator as Plan::create and Plan::create_general take them.
struct Kernels {
  Shape shape;
  /// double[Nd][Nm][Nt] (SOTI): first_column[(i*Nm + j)*Nt + t] = (F_t)_ij.
  std::vector<double> first_column;
  /// The first block row, same layout, first_row[(i*Nm + j)*Nt + k] = (F_{-k})_ij; empty for a
  /// block lower-triangular operator. Its lag 0 equals first_column's exactly.
  std::vector<double> first_row;
};

/// The kernels `plan` was made from, recovered by applying it in FP64 to min(Nd, Nm) unit
/// impulses per block (F* when Nd <= Nm, else F): column t of F e_j(0) is K[:, j, t], and
/// F* e_i(Nt-1) holds K[i, :, Nt-1-t]; F* e_i(0) and F e_j(Nt-1) give the first block row the
/// same way. Exact up to the FFT round trip's rounding, about log2(L) * eps relative to each
/// kernel series' norm (L the plan's FFT length). The plan runs in FP64 for the call and gets its
/// precision back afterwards, also when the call throws; like apply, it uses the plan's
/// workspaces (calls on one plan must not overlap). Memory for the call: the impulses and their
/// responses, at most twice the kernels.
Kernels recover_kernels(Plan& plan);

}  // namespace shiftop::btt
