// Sizes of a block Toeplitz operator and the operations it supports (DESIGN.md, "mathematics").
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace shiftop {

using index_t = std::int64_t;

/// F is (nd*nt) x (nm*nt): nd observation blocks, nm parameter blocks, nt time steps.
struct Shape {
  index_t nd = 0;
  index_t nm = 0;
  index_t nt = 0;

  /// Number of kernel entries nd*nm*nt (the first block column).
  index_t kernel_size() const { return nd * nm * nt; }
  /// Length of the zero-padded time series: the block-circulant embedding has period 2*nt.
  index_t padded_length() const { return 2 * nt; }
  /// Frequencies kept by the real FFT of length 2*nt.
  index_t frequencies() const { return nt + 1; }
  /// Throws shiftop::Error unless all sizes are positive and the kernel count fits in memory.
  void validate() const;
  std::string str() const;
  bool operator==(const Shape&) const = default;
};

/// The four actions of a plan: F, its adjoint F*, the Gauss-Newton Hessian F*F and FF*.
enum class Op { F, Fadj, FadjF, FFadj };

inline constexpr std::array<Op, 4> kAllOps = {Op::F, Op::Fadj, Op::FadjF, Op::FFadj};

std::string_view to_string(Op op);
/// Parses "F", "Fadj", "FadjF", "FFadj"; throws shiftop::Error naming the accepted words.
Op parse_op(std::string_view text);

/// Blocks of the input vector of `op` (nm for F and F*F, nd for F* and FF*).
index_t input_blocks(Op op, const Shape& shape);
/// Blocks of the output vector of `op`.
index_t output_blocks(Op op, const Shape& shape);

}  // namespace shiftop
