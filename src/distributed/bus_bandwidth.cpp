#include "shiftop/distributed/bus_bandwidth.hpp"

#include <array>

#include "shiftop/core/error.hpp"

namespace shiftop::distributed {

std::string_view to_string(Collective collective) {
  constexpr std::array<std::string_view, 3> names = {"broadcast", "reduce", "allreduce"};
  return names[static_cast<std::size_t>(collective)];
}

double bus_bandwidth_factor(Collective collective, int ranks) {
  require(ranks >= 1, "invalid number of ranks {}: expected at least 1", ranks);
  if (collective == Collective::AllReduce) return 2.0 * (ranks - 1) / ranks;
  return 1.0;
}

}  // namespace shiftop::distributed
