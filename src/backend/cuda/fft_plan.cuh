// Batched real FFTs of an even length L (2*Nt in Venkat et al., Algorithm 2, phases 2 and 4):
// forward out-of-place from zero-padded real series to L/2+1 complex values, inverse in place
// (complex series of L/2+1 values to real series of L with row length 2*(L/2+1)). Plans do not
// allocate their own work area: the engine gives all of them one shared area.
#pragma once

#include <cufft.h>

#include <cstddef>
#include <cstdint>

namespace shiftop::cuda {

enum class FftKind { Forward, Inverse };

template <typename T>
class FftPlan {
 public:
  FftPlan(FftKind kind, std::int64_t length, std::int64_t batch);
  FftPlan(FftPlan&& other) noexcept;
  FftPlan& operator=(FftPlan&&) = delete;
  FftPlan(const FftPlan&) = delete;
  ~FftPlan();

  std::size_t work_bytes() const { return work_bytes_; }
  void set_work_area(void* area, cudaStream_t stream);
  /// Forward: in = real series (row length L), out = complex. Inverse: in = out (in place).
  void execute(void* in, void* out) const;

 private:
  cufftHandle handle_ = 0;
  bool valid_ = false;
  FftKind kind_;
  std::size_t work_bytes_ = 0;
};

}  // namespace shiftop::cuda
