#include "shiftop/distributed/bus_bandwidth.hpp"

#include "shiftop/core/error.hpp"

namespace shiftop::distributed {

double bus_bandwidth_factor(Collective collective, int ranks) {
  require(ranks >= 1, "invalid number of ranks {}: expected at least 1", ranks);
  if (collective == Collective::AllReduce) return 2.0 * (ranks - 1) / ranks;
  return 1.0;
}

}  // namespace shiftop::distributed
