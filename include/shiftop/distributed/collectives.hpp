// The three collectives of a distributed apply (Venkat et al., sections 3.2 and 3.5), along one
// axis of the process grid, behind an interface: MPI on host buffers (MpiCollectives), and NCCL on
// device buffers for GPU ranks. The interface never touches the buffers itself, so an
// implementation may take device pointers; an asynchronous one (NCCL on a stream) orders each
// call before the next work on that stream and says so in its own header.
#pragma once

#include <cstddef>
#include <span>
#include <type_traits>

#include "shiftop/core/precision.hpp"

namespace shiftop::distributed {

/// Row: the pc ranks of one grid row (same i), whose root is (i, 0). Column: the pr ranks of one
/// grid column (same j), whose root is (0, j). The roots are where vectors live (eqs. 13-14).
enum class Axis { Row, Column };

class Collectives {
 public:
  virtual ~Collectives() = default;

  /// Copies the root's buffer into the buffer of every other rank of `axis`. The root's buffer
  /// is only read (it may be the caller's const input).
  template <typename T>
  void broadcast(std::span<T> buffer, Axis axis) {
    broadcast_values(buffer.data(), buffer.size(), precision_of<T>(), axis);
  }
  /// Sums the buffers of all ranks of `axis` into the root's buffer; the other ranks' buffers
  /// are only read.
  template <typename T>
  void reduce_sum(std::span<T> buffer, Axis axis) {
    reduce_sum_values(buffer.data(), buffer.size(), precision_of<T>(), axis);
  }
  /// Sums the buffers of all ranks of `axis` into every one of them.
  template <typename T>
  void allreduce_sum(std::span<T> buffer, Axis axis) {
    allreduce_sum_values(buffer.data(), buffer.size(), precision_of<T>(), axis);
  }

 protected:
  // What an implementation provides: the operations above on `count` values of type `type` at
  // `buffer`, in place. Every rank of the axis calls with the same count and type; a count of 0
  // may skip the collective (then every rank of the axis skips it).
  virtual void broadcast_values(void* buffer, std::size_t count, Precision type, Axis axis) = 0;
  virtual void reduce_sum_values(void* buffer, std::size_t count, Precision type, Axis axis) = 0;
  virtual void allreduce_sum_values(void* buffer, std::size_t count, Precision type, Axis axis) = 0;

 private:
  template <typename T>
  static constexpr Precision precision_of() {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "collectives move FP32 or FP64 values");
    return std::is_same_v<T, float> ? Precision::Single : Precision::Double;
  }
};

}  // namespace shiftop::distributed
