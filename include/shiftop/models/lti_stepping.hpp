// The time stepping the PDE models share (Heat2d, Wave2d): a real LTI system (multi-GPU paper,
// section 2.1, eqs. (2)-(5)) with s = `substeps` PDE steps per observation step and the source
// m_k held constant over them,
//   x <- A x + C m_k (s times),   d_k = B x,   k = 0..nt-1,   x_0 = 0,
// where C puts parameter j at one state entry with a gain and B reads one state entry per sensor.
// A model supplies A as a two-buffer step: step(current, other) leaves A applied to `current` in
// `other` (which may also carry the previous state on entry, as leapfrog does), and the caller
// swaps the two; likewise A^T. F is block lower-triangular Toeplitz with F_t = B (A^s)^t S C,
// S = sum_{q<s} A^q.
#pragma once

#include <algorithm>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/core/error.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::models {

/// Where the sources enter and the sensors read, as offsets into a state buffer.
struct LtiPorts {
  Shape shape;  // nd sensors, nm sources, nt observation steps
  index_t substeps = 1;
  std::size_t state_size = 0;  // doubles per state buffer
  std::span<const index_t> sources;
  std::span<const double> gains;  // C's entry of each source
  std::span<const index_t> sensors;
  std::string_view model;  // the model's name, for error messages
};

/// The two state buffers of a solve, zero-initialised: advance(step) calls step(current, next)
/// and swaps the two, so `current` always holds the latest state.
class LtiStates {
 public:
  explicit LtiStates(std::size_t size) : first_(size), second_(size) {}
  LtiStates(const LtiStates&) = delete;
  LtiStates& operator=(const LtiStates&) = delete;

  double* current() { return current_; }
  /// Zeroes both buffers, as for a fresh solve.
  void reset() {
    std::ranges::fill(first_, 0.0);
    std::ranges::fill(second_, 0.0);
    current_ = first_.data();
    next_ = second_.data();
  }
  template <typename Step>
  void advance(const Step& step) {
    step(current_, next_);
    std::swap(current_, next_);
  }

 private:
  std::vector<double> first_;
  std::vector<double> second_;
  double* current_ = first_.data();
  double* next_ = second_.data();
};

/// The first block column, double[nd][nm][nt] (SOTI). Row i of every F_t is C^T S^T z_t with
/// z_t = ((A^T)^s)^t B^T e_i: one adjoint solve per sensor gives all nt blocks' row i. Sensors are
/// few (nd << nm in inverse problems), so nd adjoint solves are far cheaper than nm forward solves
/// (one per source), which would give the columns instead. The s transposed substeps from z_t to
/// z_{t+1} pass through (A^T)^q z_t for q = 0..s-1, whose sum is S^T z_t.
template <typename StepTransposed>
std::vector<double> lti_kernels(const LtiPorts& p, const StepTransposed& step_transposed) {
  const Shape s = p.shape;
  std::vector<double> result(static_cast<std::size_t>(s.kernel_size()));  // zero-initialised
#pragma omp parallel
  {
    LtiStates z(p.state_size);
#pragma omp for schedule(static)
    for (index_t i = 0; i < s.nd; ++i) {
      z.reset();
      z.current()[p.sensors[i]] = 1;  // z_0 = B^T e_i
      double* row = result.data() + i * s.nm * s.nt;
      for (index_t t = 0; t < s.nt; ++t) {
        for (index_t q = 0; q < p.substeps; ++q) {
          const double* current = z.current();
          for (index_t j = 0; j < s.nm; ++j)  // accumulate (A^T)^q z_t at the source points
            row[j * s.nt + t] += current[p.sources[j]];
          if (t + 1 == s.nt && q + 1 == p.substeps) break;  // z_nt is not needed
          z.advance(step_transposed);
        }
        for (index_t j = 0; j < s.nm; ++j)  // then C^T
          row[j * s.nt + t] *= p.gains[j];
      }
    }
  }
  return result;
}

/// Checks that m ([nm][nt]) and d ([nd][nt]) have the sizes of `p`, naming the model and its
/// `operation` in the error.
inline void check_lti_vectors(const LtiPorts& p, std::string_view operation, std::size_t m_size,
                              std::size_t d_size) {
  const Shape s = p.shape;
  require(static_cast<index_t>(m_size) == s.nm * s.nt,
          "{} {}: m has {} entries, expected nm*nt = {}*{} = {}", p.model, operation, m_size, s.nm,
          s.nt, s.nm * s.nt);
  require(static_cast<index_t>(d_size) == s.nd * s.nt,
          "{} {}: d has {} entries, expected nd*nt = {}*{} = {}", p.model, operation, d_size, s.nd,
          s.nt, s.nd * s.nt);
}

/// d = F m by forward time stepping; m is [nm][nt], d is [nd][nt] (SOTI), their sizes checked.
template <typename Step>
void lti_forward(const LtiPorts& p, const Step& step, std::span<const double> m,
                 std::span<double> d) {
  check_lti_vectors(p, "apply_forward", m.size(), d.size());
  const Shape s = p.shape;
  LtiStates x(p.state_size);
  for (index_t k = 0; k < s.nt; ++k) {
    for (index_t q = 0; q < p.substeps; ++q) {
      x.advance(step);  // x <- A x + C m_k, m_k held over the observation interval
      double* current = x.current();
      for (index_t j = 0; j < s.nm; ++j)
        current[p.sources[j]] += p.gains[j] * m[j * s.nt + k];
    }
    const double* current = x.current();
    for (index_t i = 0; i < s.nd; ++i)  // d_k = B x_{k+1}
      d[i * s.nt + k] = current[p.sensors[i]];
  }
}

/// m = F^T d by backward (adjoint) time stepping: mu <- A^T mu (+ B^T d_k at the last substep of
/// observation step k, where d_k is read); m_k = C^T (sum of mu over step k's substeps). The
/// sizes of d and m are checked.
template <typename StepTransposed>
void lti_adjoint(const LtiPorts& p, const StepTransposed& step_transposed,
                 std::span<const double> d, std::span<double> m) {
  check_lti_vectors(p, "apply_adjoint", m.size(), d.size());
  const Shape s = p.shape;
  LtiStates mu(p.state_size);
  for (index_t k = s.nt - 1; k >= 0; --k) {
    for (index_t j = 0; j < s.nm; ++j)
      m[j * s.nt + k] = 0;
    for (index_t q = p.substeps - 1; q >= 0; --q) {
      mu.advance(step_transposed);
      double* current = mu.current();
      if (q + 1 == p.substeps)
        for (index_t i = 0; i < s.nd; ++i)
          current[p.sensors[i]] += d[i * s.nt + k];
      for (index_t j = 0; j < s.nm; ++j)
        m[j * s.nt + k] += current[p.sources[j]];
    }
    for (index_t j = 0; j < s.nm; ++j)
      m[j * s.nt + k] *= p.gains[j];
  }
}

}  // namespace shiftop::models
