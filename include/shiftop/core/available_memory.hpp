// How much memory the machine can still give this process, so that readers refuse an absurd
// size before allocating instead of being killed by the kernel half-way through.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace shiftop {

/// MemAvailable from /proc/meminfo in bytes; nothing where that file or line is absent.
std::optional<std::uint64_t> available_memory_bytes();

/// Throws shiftop::Error "<what> needs N bytes (x GiB) but only M bytes (y GiB) are available"
/// unless `bytes` can be allocated: at most the addressable size and, where known, MemAvailable.
/// `bytes` is a double so that callers can pass products of untrusted sizes without overflow.
void require_available_memory(double bytes, std::string_view what);

}  // namespace shiftop
