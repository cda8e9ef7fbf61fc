// How an operation decomposes into passes (one F or F* product each) and right-hand sides into
// groups: written once for the CPU engine, the GPU engine and the distributed plan.
#pragma once

#include <algorithm>

#include "shiftop/btt/op.hpp"

namespace shiftop::btt {

/// F and F* are one pass; F*F is F then F*, FF* is F* then F. The unpad and pad between the two
/// passes of a chain cannot be skipped: F is Toeplitz, not circulant.
struct Passes {
  bool first_adjoint;
  bool chained;
  bool last_adjoint() const { return chained ? !first_adjoint : first_adjoint; }
};

constexpr Passes passes_of(Op op) {
  return {.first_adjoint = op == Op::Fadj || op == Op::FFadj,
          .chained = op == Op::FadjF || op == Op::FFadj};
}

/// Runs the passes of `op` from x to y: pass(adjoint, in, out). A chain writes its first pass to
/// `middle` and calls between() before the second (the distributed plan's all-reduce).
template <typename Pass, typename Between>
void run_passes(Op op, const double* x, double* middle, double* y, Pass&& pass, Between&& between) {
  const Passes p = passes_of(op);
  if (!p.chained) {
    pass(p.first_adjoint, x, y);
    return;
  }
  pass(p.first_adjoint, x, middle);
  between();
  pass(!p.first_adjoint, middle, y);
}

template <typename Pass>
void run_passes(Op op, const double* x, double* middle, double* y, Pass&& pass) {
  run_passes(op, x, middle, y, pass, [] {});
}

/// Calls group(first, count) for consecutive groups of at most `group_size` of `nrhs` right-hand
/// sides: the unit of one pass, in which F^ is read once for all of them.
template <typename Group>
void for_each_group(index_t nrhs, index_t group_size, Group&& group) {
  for (index_t first = 0; first < nrhs; first += group_size)
    group(first, std::min(group_size, nrhs - first));
}

}  // namespace shiftop::btt
