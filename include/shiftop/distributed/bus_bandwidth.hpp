// The bandwidth of a collective as nccl-tests reports it (NCCL's doc/PERFORMANCE.md): the
// algorithm bandwidth algBW = bytes / seconds of one call on a buffer of `bytes`, and the bus
// bandwidth busBW = algBW * factor, with a factor of the collective and of the number n of ranks
// that makes busBW comparable with the peak bandwidth of the links whatever n is:
// 2(n-1)/n for an all-reduce, 1 for a broadcast and for a reduce.
#pragma once

#include <string_view>

namespace shiftop::distributed {

enum class Collective { Broadcast, Reduce, AllReduce };

/// "broadcast", "reduce", "allreduce".
std::string_view to_string(Collective collective);

double bus_bandwidth_factor(Collective collective, int ranks);

}  // namespace shiftop::distributed
