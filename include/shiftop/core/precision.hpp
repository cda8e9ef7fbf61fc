// The five-phase precision configuration of the mixed-precision paper (section 2.4, 3.2):
// 1 broadcast+pad, 2 FFT, 3 batched GEMV, 4 IFFT, 5 unpad+reduce, each FP32 ('S') or FP64 ('D').
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace shiftop {

enum class Precision { Single, Double };

enum class Phase { Pad = 0, Fft = 1, Gemv = 2, Ifft = 3, Unpad = 4 };

class PrecisionConfig {
 public:
  /// All phases in FP64 ("DDDDD").
  PrecisionConfig() { phases_.fill(Precision::Double); }
  /// Parses a five-letter string of 'S'/'D' (case-insensitive) in phase order, as FFTMatvec's
  /// -prec; throws shiftop::Error on anything else.
  static PrecisionConfig parse(std::string_view text);
  /// The 32 configurations, "DDDDD" first, in the binary order of FFTMatvec's tuner.
  static std::vector<PrecisionConfig> all();

  Precision operator[](Phase phase) const { return phases_[static_cast<int>(phase)]; }
  bool all_double() const;
  std::string str() const;
  bool operator==(const PrecisionConfig&) const = default;

 private:
  std::array<Precision, 5> phases_;
};

/// Calls f(float{}) or f(double{}): turns a run-time precision into a type for templates.
template <typename F>
void with_type(Precision precision, F&& f) {
  if (precision == Precision::Single)
    f(float{});
  else
    f(double{});
}

/// Unit roundoff of a precision: 2^-24 for FP32, 2^-53 for FP64.
double unit_roundoff(Precision precision);

}  // namespace shiftop
