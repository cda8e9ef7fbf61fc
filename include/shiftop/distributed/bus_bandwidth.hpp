// The bandwidth of a collective as nccl-tests reports it (NCCL's doc/PERFORMANCE.md): the
// algorithm bandwidth algBW = bytes / seconds of one call on a buffer of `bytes`, and the bus
// bandwidth busBW = algBW * factor, with a factor of the collective and of the number n of ranks
// that makes busBW comparable with the peak bandwidth of the links whatever n is:
// 2(n-1)/n for an all-reduce, 1 for a broadcast and for a reduce.
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include "shiftop/core/enum_names.hpp"

namespace shiftop::distributed {

enum class Collective { Broadcast, Reduce, AllReduce };

}  // namespace shiftop::distributed

template <>
struct shiftop::EnumNames<shiftop::distributed::Collective> {
  static constexpr std::array<std::pair<distributed::Collective, std::string_view>, 3> table{
      {{distributed::Collective::Broadcast, "broadcast"},
       {distributed::Collective::Reduce, "reduce"},
       {distributed::Collective::AllReduce, "allreduce"}}};
};

namespace shiftop::distributed {

double bus_bandwidth_factor(Collective collective, int ranks);

}  // namespace shiftop::distributed
