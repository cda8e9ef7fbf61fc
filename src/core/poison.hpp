// Workspace poisoning for test builds: with SHIFTOP_POISON_WORKSPACES (a CMake option, ON when
// the tests are built) every workspace is filled with the byte kPoisonByte when it is allocated
// (host: core/aligned_buffer.hpp; device: backend/cuda/device_memory.cuh). All-ones bytes are a
// quiet NaN in FP32 and in FP64, so an element that a phase reads before any phase wrote it, such
// as unwritten padding, turns the result into NaN and fails every test instead of reading
// whatever the allocator left there (often zeros, which would hide it).
#pragma once

namespace shiftop {

inline constexpr unsigned char kPoisonByte = 0xFF;

#ifdef SHIFTOP_POISON_WORKSPACES
inline constexpr bool kPoisonWorkspaces = true;
#else
inline constexpr bool kPoisonWorkspaces = false;
#endif

}  // namespace shiftop
