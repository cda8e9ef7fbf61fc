#include "shiftop/core/precision.hpp"

#include <cctype>

#include "shiftop/core/error.hpp"

namespace shiftop {

PrecisionConfig PrecisionConfig::parse(std::string_view text) {
  require(text.size() == 5,
          "invalid precision string '{}': expected five letters S or D, one per phase "
          "(pad, FFT, GEMV, IFFT, unpad), e.g. DSSDD",
          text);
  PrecisionConfig config;
  for (std::size_t i = 0; i < 5; ++i) {
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
    require(c == 'S' || c == 'D',
            "invalid precision string '{}': letter {} is '{}', expected S (FP32) or D (FP64)", text,
            i + 1, text[i]);
    config.phases_[i] = c == 'S' ? Precision::Single : Precision::Double;
  }
  return config;
}

std::vector<PrecisionConfig> PrecisionConfig::all() {
  std::vector<PrecisionConfig> configs;
  for (int bits = 0; bits < 32; ++bits) {
    PrecisionConfig config;
    for (int i = 0; i < 5; ++i)
      if (bits & (1 << (4 - i))) config.phases_[i] = Precision::Single;
    configs.push_back(config);
  }
  return configs;
}

bool PrecisionConfig::all_double() const {
  for (Precision p : phases_)
    if (p != Precision::Double) return false;
  return true;
}

std::string PrecisionConfig::str() const {
  std::string s;
  for (Precision p : phases_)
    s += p == Precision::Single ? 'S' : 'D';
  return s;
}

double unit_roundoff(Precision precision) {
  return precision == Precision::Single ? 0x1p-24 : 0x1p-53;
}

}  // namespace shiftop
