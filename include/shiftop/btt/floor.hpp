// The roofline floor of an apply (bench/README.md, "The floor"): what one apply must at least move
// through memory and compute, and the least time that takes at a given memory bandwidth and flop
// rate. A measured apply divided by its floor says how far from the hardware limit it runs; the
// tool's `bench` reports it, and programs that time plans can too.
#pragma once

#include "shiftop/btt/op.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/precision.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::btt {

/// Bytes of F^ read by one apply: the L/2+1 frequencies of an FFT of length `fft_length` (0: the
/// shortest embedding 2*Nt, Nt+1 frequencies) of an Nd x Nm complex matrix in the phase-3
/// precision (8 bytes per FP32 complex, 16 per FP64), once per pass (group of right-hand sides)
/// and once per half of F*F / FF*.
double matrix_bytes(const Shape& shape, const PrecisionConfig& precision, Op op, index_t passes,
                    index_t fft_length = 0);

/// What one apply must at least move and compute: F^ at the plan's FFT length and phase-3
/// precision once per group actually run and per half of F*F / FF* (matrix_bytes), the input
/// vectors read once and the outputs written once (FP64), and the flops of the phase-3 products
/// (8 per complex multiply-add).
struct ApplyFloor {
  double spectrum_bytes = 0, input_bytes = 0, output_bytes = 0, flops = 0;
  index_t groups = 0;  ///< ceil(nrhs / group size): the passes that each read F^
  double bytes() const { return spectrum_bytes + input_bytes + output_bytes; }
};

/// The floor of `op` on `nrhs` vectors with a plan of FFT length `fft_length` (0: 2*Nt) that
/// runs groups of at most `group_size` vectors. Throws shiftop::Error for a group size below 1.
ApplyFloor apply_floor(const Shape& shape, const PrecisionConfig& precision, Op op, index_t nrhs,
                       index_t fft_length, index_t group_size);

/// The floor of `op` on `nrhs` vectors with `plan` as it is: its shape, precision, FFT length and
/// group size (Plan::choices).
ApplyFloor apply_floor(const Plan& plan, Op op, index_t nrhs);

/// The least times (seconds) an apply with the floor `need` takes: all its bytes at
/// `read_bytes_per_second` (the whole-apply floor), F^'s bytes alone (the F^-only floor), and its
/// flops at `flops_per_second` (0: no flop ceiling known, as on the CPU).
struct FloorTimes {
  double whole_apply = 0, spectrum_only = 0, flops = 0;
  /// The floor: the larger of the memory and the flop floor.
  double floor() const { return whole_apply > flops ? whole_apply : flops; }
  bool flop_bound() const { return flops > whole_apply; }
};

/// Throws shiftop::Error unless `read_bytes_per_second` is positive and `flops_per_second` is not
/// negative.
FloorTimes floor_times(const ApplyFloor& need, double read_bytes_per_second,
                       double flops_per_second = 0);

}  // namespace shiftop::btt
