// Where a distributed plan keeps its vectors and buffers, and the work on them that is not a
// collective: host memory (OpenMP casts, btt::Plan::apply) or the memory of one GPU (CUDA
// kernels and btt::Plan::apply_device, in order on one stream). The apply algorithm of
// DistributedPlan is written once against this interface.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include "shiftop/btt/plan.hpp"

namespace shiftop::distributed {

/// `count` values of T in one memory space, freed with the last copy of the handle.
template <typename T>
class SpaceArray {
 public:
  SpaceArray() = default;
  SpaceArray(std::shared_ptr<void> memory, std::size_t count)
      : memory_(std::move(memory)), size_(count) {}

  T* data() const { return static_cast<T*>(memory_.get()); }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  std::shared_ptr<void> memory_;
  std::size_t size_ = 0;
};

class MemorySpace {
 public:
  virtual ~MemorySpace() = default;

  template <typename T>
  SpaceArray<T> allocate(std::size_t count) {
    return SpaceArray<T>(allocate_bytes(count * sizeof(T)), count);
  }

  /// to[k] = float(from[k]) and back, for `count` values in this space.
  virtual void convert(const double* from, float* to, index_t count) = 0;
  virtual void convert(const float* from, double* to, index_t count) = 0;
  virtual void fill_zero(double* values, index_t count) = 0;
  /// y = op(F) x with the local plan, on this space's vectors.
  virtual void apply(btt::Plan& plan, btt::Op op, const double* x, double* y, index_t nrhs) = 0;
  /// Returns once all work queued so far in this space is done (nothing to wait for on the
  /// host), so that a wall clock around a collective times the collective.
  virtual void synchronize() = 0;

 protected:
  /// Owned memory of `bytes` bytes (null for none).
  virtual std::shared_ptr<void> allocate_bytes(std::size_t bytes) = 0;
};

/// Host memory; casts run on OpenMP threads.
std::unique_ptr<MemorySpace> make_host_space();

}  // namespace shiftop::distributed
