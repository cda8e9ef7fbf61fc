// The four actions of a block Toeplitz plan and the sizes of the circulant embedding they run
// through (docs/btt.md, "The operator in one page"; Venkat et al., Algorithms 1-2).
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include "shiftop/core/enum_names.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::btt {

/// F, its adjoint F*, the Gauss-Newton Hessian F*F and FF*.
enum class Op { F, Fadj, FadjF, FFadj };

inline constexpr std::array<Op, 4> kAllOps = {Op::F, Op::Fadj, Op::FadjF, Op::FFadj};

}  // namespace shiftop::btt

template <>
struct shiftop::EnumNames<shiftop::btt::Op> {
  static constexpr std::array<std::pair<btt::Op, std::string_view>, 4> table{
      {{btt::Op::F, "F"},
       {btt::Op::Fadj, "Fadj"},
       {btt::Op::FadjF, "FadjF"},
       {btt::Op::FFadj, "FFadj"}}};
};

namespace shiftop::btt {

/// Blocks of the input vector of `op` (nm for F and F*F, nd for F* and FF*).
index_t input_blocks(Op op, const Shape& shape);
/// Blocks of the output vector of `op`.
index_t output_blocks(Op op, const Shape& shape);

/// Length of the zero-padded time series: the block-circulant embedding has period 2*Nt.
inline index_t padded_length(const Shape& shape) {
  return 2 * shape.nt;
}
/// Frequencies kept by the real FFT of length 2*Nt.
inline index_t frequencies(const Shape& shape) {
  return shape.nt + 1;
}

}  // namespace shiftop::btt
