#include "shiftop/inverse/prior.hpp"

#include "shiftop/core/error.hpp"

namespace shiftop::inverse {

void Prior::check_sizes(std::span<const double> x, std::span<double> y, index_t nrhs,
                        std::string_view what) const {
  require(nrhs >= 1, "{} prior {}: nrhs {} is not positive", name(), what, nrhs);
  const auto expected = static_cast<std::size_t>(nrhs * blocks() * nt());
  require(x.size() == expected && y.size() == expected,
          "{} prior {}: x holds {} and y {} values, expected nrhs*Nm*Nt = {}*{}*{} = {}", name(),
          what, x.size(), y.size(), nrhs, blocks(), nt(), expected);
}

}  // namespace shiftop::inverse
