#include "shiftop/models/inversion_inputs.hpp"

#include <cmath>
#include <numbers>
#include <random>

#include "shiftop/core/error.hpp"

namespace shiftop::models {

std::vector<double> smooth_source(std::span<const index_t> sources, index_t n, index_t nt) {
  require(n >= 1 && nt >= 1,
          "smooth source: expected a grid side and a step count >= 1, got {} "
          "and {}",
          n, nt);
  std::vector<double> m(sources.size() * static_cast<std::size_t>(nt));
  const double h = 1.0 / static_cast<double>(n + 1);
  for (std::size_t j = 0; j < sources.size(); ++j) {
    require(sources[j] >= 0 && sources[j] < n * n,
            "smooth source: grid point {} of source {} is outside 0..{}", sources[j], j, n * n - 1);
    const double x = static_cast<double>(sources[j] % n + 1) * h;
    const double y = static_cast<double>(sources[j] / n + 1) * h;
    const double centre = 0.3 + 0.4 * y;
    const double amplitude = 1.0 + 0.5 * std::sin(2 * std::numbers::pi * x);
    for (index_t t = 0; t < nt; ++t) {
      const double tau = (static_cast<double>(t) + 0.5) / static_cast<double>(nt) - centre;
      m[j * static_cast<std::size_t>(nt) + static_cast<std::size_t>(t)] =
          amplitude * std::exp(-tau * tau / (2 * 0.1 * 0.1));
    }
  }
  return m;
}

double add_relative_noise(std::span<double> data, double relative, std::uint64_t seed) {
  require(relative >= 0 && std::isfinite(relative),
          "relative noise: expected a non-negative number, got {}", relative);
  double sum = 0;
  for (const double v : data)
    sum += v * v;
  const double sigma =
      data.empty() ? 0.0 : relative * std::sqrt(sum / static_cast<double>(data.size()));
  if (sigma == 0) return sigma;  // normal_distribution needs a positive deviation
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal(0.0, sigma);
  for (double& v : data)
    v += normal(engine);
  return sigma;
}

}  // namespace shiftop::models
