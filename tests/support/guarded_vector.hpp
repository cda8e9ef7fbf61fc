// A caller's vector with guard regions on both sides, for tests of code that is handed a span and
// must stay inside it. An overrun of a plain std::vector lands in the heap's own bookkeeping and
// is caught, if at all, by glibc aborting the whole test program later ("malloc(): corrupted top
// size"); here it lands in the guards, which hold a pattern no computation produces, and
// damage() names it: which side, how many values, the first offset.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace shiftop::testing {

class GuardedVector {
 public:
  /// `size` values equal to `fill`, with `guard` guard values before and after them. `guard`
  /// should cover the largest overrun the test can provoke, so that it never reaches the heap.
  GuardedVector(std::size_t size, double fill, std::size_t guard)
      : size_(size),
        guard_(guard),
        bits_(next_guard_bits()),
        storage_(size + 2 * guard, std::bit_cast<double>(bits_)) {
    for (double& v : span())
      v = fill;
  }
  GuardedVector(std::span<const double> values, std::size_t guard)
      : GuardedVector(values.size(), 0.0, guard) {
    std::copy(values.begin(), values.end(), span().begin());
  }

  std::span<double> span() { return {storage_.data() + guard_, size_}; }
  std::span<const double> span() const { return {storage_.data() + guard_, size_}; }

  /// "" when both guards are intact; else which guard was written, how many of its values, and
  /// the offset of the one nearest the vector.
  std::string damage() const {
    std::string report;
    std::size_t count = 0, nearest = 0;
    for (std::size_t i = 0; i < guard_; ++i) {  // before: offset 1 is the value just before
      if (intact(guard_ - 1 - i)) continue;
      if (count++ == 0) nearest = i + 1;
    }
    if (count > 0)
      report += std::to_string(count) + " of the " + std::to_string(guard_) +
                " values before the vector written, the nearest " + std::to_string(nearest) +
                " before its start";
    count = 0;
    for (std::size_t i = 0; i < guard_; ++i) {  // after: offset 0 is the value just past the end
      if (intact(guard_ + size_ + i)) continue;
      if (count++ == 0) nearest = i;
    }
    if (count > 0)
      report += std::string(report.empty() ? "" : "; ") + std::to_string(count) + " of the " +
                std::to_string(guard_) + " values after the vector written, the first " +
                std::to_string(nearest) + " past its end";
    return report;
  }

 private:
  bool intact(std::size_t i) const { return std::bit_cast<std::uint64_t>(storage_[i]) == bits_; }

  // A quiet NaN with a payload no computation produces (arithmetic gives the default NaN, payload
  // 0, or passes an operand's on), different for every vector: an overrun that reads one vector's
  // guard and writes what it read into another's still changes the bits there.
  static std::uint64_t next_guard_bits() {
    static std::atomic<std::uint64_t> serial{0};
    return 0x7ffd'dead'beef'0000ULL | (serial++ & 0xffffULL);
  }

  std::size_t size_, guard_;
  std::uint64_t bits_;
  std::vector<double> storage_;
};

}  // namespace shiftop::testing
