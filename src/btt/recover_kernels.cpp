#include "shiftop/btt/recover_kernels.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "shiftop/btt/op.hpp"

namespace shiftop::btt {
namespace {

/// The responses of `op` (F or F*) to a unit impulse at time `step` in each of its input blocks:
/// [input block b][output block][t], one right-hand side per input block.
std::vector<double> impulse_responses(Plan& plan, Op op, index_t step) {
  const Shape& s = plan.shape();
  const index_t in = input_blocks(op, s), out = output_blocks(op, s);
  std::vector<double> impulses(static_cast<std::size_t>(in * in * s.nt), 0.0);
  for (index_t b = 0; b < in; ++b)
    impulses[static_cast<std::size_t>((b * in + b) * s.nt + step)] = 1.0;
  std::vector<double> responses(static_cast<std::size_t>(in * out * s.nt));
  plan.apply(op, impulses, responses, in);
  return responses;
}

/// Kernels `(i, j)` in [Nd][Nm][Nt] from the responses of impulse_responses: `by_row` when the
/// impulses went into F*'s input blocks i (responses [i][j][t]), else into F's blocks j
/// (responses [j][i][t]); `reversed` reads each series from its end.
std::vector<double> kernels_from(const std::vector<double>& responses, const Shape& s, bool by_row,
                                 bool reversed) {
  std::vector<double> k(static_cast<std::size_t>(s.kernel_size()));
  for (index_t i = 0; i < s.nd; ++i)
    for (index_t j = 0; j < s.nm; ++j) {
      const index_t series = by_row ? i * s.nm + j : j * s.nd + i;
      const double* from = responses.data() + series * s.nt;
      double* to = k.data() + (i * s.nm + j) * s.nt;
      if (reversed)
        std::reverse_copy(from, from + s.nt, to);
      else
        std::copy(from, from + s.nt, to);
    }
  return k;
}

/// Runs the plan in FP64 while it lives and gives it its precision back.
class Fp64Scope {
 public:
  explicit Fp64Scope(Plan& plan) : plan_(plan), saved_(plan.precision().str()) {
    plan_.set_precision("DDDDD");
  }
  Fp64Scope(const Fp64Scope&) = delete;
  Fp64Scope& operator=(const Fp64Scope&) = delete;
  /// Restores the precision; throws what set_precision throws (the FP32 copy of F^ may need
  /// memory again), which the destructor cannot.
  void restore() {
    if (restored_) return;
    restored_ = true;
    plan_.set_precision(saved_);
  }
  ~Fp64Scope() {
    if (restored_) return;
    try {
      plan_.set_precision(saved_);
    } catch (...) {  // unwinding already: the first error is the one to report
    }
  }

 private:
  Plan& plan_;
  std::string saved_;
  bool restored_ = false;
};

}  // namespace

Kernels recover_kernels(Plan& plan) {
  const Shape s = plan.shape();
  const index_t last = s.nt - 1;
  Fp64Scope fp64(plan);
  Kernels k{.shape = s, .first_column = {}, .first_row = {}};
  // The fewer impulses: min(Nd, Nm) right-hand sides, into F*'s Nd blocks or F's Nm blocks.
  // F*: K[i, j, t] = (F* e_i(Nt-1))_j[Nt-1-t];  F: K[i, j, t] = (F e_j(0))_i[t].
  if (s.nd <= s.nm)
    k.first_column = kernels_from(impulse_responses(plan, Op::Fadj, last), s, true, true);
  else
    k.first_column = kernels_from(impulse_responses(plan, Op::F, 0), s, false, false);
  if (!plan.triangular()) {
    // F: row[i, j, k] = (F e_j(Nt-1))_i[Nt-1-k];  F*: row[i, j, k] = (F* e_i(0))_j[k].
    if (s.nm <= s.nd)
      k.first_row = kernels_from(impulse_responses(plan, Op::F, last), s, false, true);
    else
      k.first_row = kernels_from(impulse_responses(plan, Op::Fadj, 0), s, true, false);
    // Lag 0 is the one block both hold; the two recoveries agree up to rounding: make it exact.
    for (index_t ij = 0; ij < s.nd * s.nm; ++ij)
      k.first_row[static_cast<std::size_t>(ij * s.nt)] =
          k.first_column[static_cast<std::size_t>(ij * s.nt)];
  }
  fp64.restore();
  return k;
}

}  // namespace shiftop::btt
