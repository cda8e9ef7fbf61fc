// The device-array SVD's plans kept per shape (svd::GpuPlan: the checks, the method, the
// workspaces and the strategy tables made once): shiftop.svd on CuPy or PyTorch arrays of a shape
// it has seen executes that shape's plan instead of allocating and uploading again (FFTW's plan
// once, execute many). The kCapacity most recently used plans are kept; each holds its workspaces
// (for one large n x n matrix with U and V about 4 n^2 elements), hence only a few, and its
// context, which it refers to. Thread-safe: lookups take the cache's mutex; a plan runs under its
// device's shared-context lock (the caller's), and an evicted plan lives on while a caller holds
// it.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>

#include "shiftop/gpu/context.hpp"
#include "shiftop/svd/jacobi_gpu.hpp"

namespace shiftop::python {

template <class T>
class GpuPlanCache {
 public:
  static constexpr std::size_t kCapacity = 4;

  /// The plan of this device, shape and options: the cached one, or a new one (made under the
  /// caller's lock of `context`, outside the cache's mutex).
  std::shared_ptr<svd::GpuPlan<T>> get(const std::shared_ptr<gpu::Context>& context, int device,
                                       index_t batch, index_t rows, index_t cols,
                                       const svd::JacobiOptions& options) {
    const Key key{device, batch, rows, cols, options};
    {
      const std::lock_guard<std::mutex> guard(mutex_);
      for (auto it = entries_.begin(); it != entries_.end(); ++it)
        if (it->key == key) {
          entries_.splice(entries_.begin(), entries_, it);  // most recent first
          return it->plan;
        }
    }
    auto plan = std::make_shared<svd::GpuPlan<T>>(*context, batch, rows, cols, options);
    const std::lock_guard<std::mutex> guard(mutex_);
    entries_.push_front(Entry{key, context, plan});
    if (entries_.size() > kCapacity) entries_.pop_back();
    return plan;
  }

 private:
  // What a plan depends on: the device, the shape and the options the Python layer sets
  // (python/src/svd_bindings.cpp, jacobi_options).
  struct Key {
    int device;
    index_t batch, rows, cols;
    svd::JacobiOptions options;
    bool operator==(const Key& other) const {
      const svd::JacobiOptions &a = options, &b = other.options;
      return device == other.device && batch == other.batch && rows == other.rows &&
             cols == other.cols && a.compute_u == b.compute_u && a.compute_v == b.compute_v &&
             a.n_plus == b.n_plus && a.variant == b.variant && a.strategy == b.strategy &&
             a.rank_tolerance == b.rank_tolerance && a.max_sweeps == b.max_sweeps &&
             a.block_width == b.block_width && a.preprocess == b.preprocess;
    }
  };
  struct Entry {
    Key key;
    std::shared_ptr<gpu::Context> context;  // the plan refers to it
    std::shared_ptr<svd::GpuPlan<T>> plan;
  };
  std::mutex mutex_;
  std::list<Entry> entries_;
};

}  // namespace shiftop::python
