// Images for the ct2d scanner (include/shiftop/models/ct2d.hpp): the modified Shepp-Logan
// phantom on the polar grid, resampling to a Cartesian picture, and Poisson noise.
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "models/ct2d_polar.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/models/ct2d.hpp"

namespace shiftop::models::ct2d {
namespace {

// The modified Shepp-Logan phantom (Toft, "The Radon transform", 1996, table 3.1): intensity,
// semi-axes a (along x before rotation) and b, centre, rotation in degrees; on [-1, 1]^2.
struct Ellipse {
  double value, a, b, x0, y0, degrees;
};
constexpr std::array<Ellipse, 10> kSheppLogan = {{
    {1.0, 0.69, 0.92, 0.0, 0.0, 0.0},
    {-0.8, 0.6624, 0.874, 0.0, -0.0184, 0.0},
    {-0.2, 0.11, 0.31, 0.22, 0.0, -18.0},
    {-0.2, 0.16, 0.41, -0.22, 0.0, 18.0},
    {0.1, 0.21, 0.25, 0.0, 0.35, 0.0},
    {0.1, 0.046, 0.046, 0.0, 0.1, 0.0},
    {0.1, 0.046, 0.046, 0.0, -0.1, 0.0},
    {0.1, 0.046, 0.023, -0.08, -0.605, 0.0},
    {0.1, 0.023, 0.023, 0.0, -0.606, 0.0},
    {0.1, 0.023, 0.046, 0.06, -0.605, 0.0},
}};

// The phantom at (x, y) in units of the radius.
double shepp_logan_at(double x, double y) {
  double value = 0;
  for (const Ellipse& e : kSheppLogan) {
    const double angle = e.degrees * std::numbers::pi / 180;
    const double u = (x - e.x0) * std::cos(angle) + (y - e.y0) * std::sin(angle);
    const double v = -(x - e.x0) * std::sin(angle) + (y - e.y0) * std::cos(angle);
    if ((u * u) / (e.a * e.a) + (v * v) / (e.b * e.b) <= 1) value += e.value;
  }
  return value;
}

// SplitMix64 (Steele, Lea and Flood 2014): a counter-based generator, so that entry i's sample
// depends on (seed, i) only and not on the thread that draws it.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1): 53 random bits, offset by half a step so that log() never sees 0.
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }
};

// A Poisson sample of mean lambda: by multiplying uniforms below 10 (Knuth), else by Hormann's
// transformed rejection PTRS ("The transformed rejection method for generating Poisson random
// variables", 1993), as NumPy does.
double poisson(double lambda, SplitMix64& rng) {
  if (lambda == 0) return 0;
  if (lambda < 10) {
    const double limit = std::exp(-lambda);
    double product = rng.uniform();
    double count = 0;
    while (product > limit) {
      product *= rng.uniform();
      ++count;
    }
    return count;
  }
  const double slam = std::sqrt(lambda), loglam = std::log(lambda);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
  const double vr = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = rng.uniform() - 0.5;
    const double v = rng.uniform();
    const double us = 0.5 - std::abs(u);
    const double k = std::floor((2 * a / us + b) * u + lambda + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
        -lambda + k * loglam - std::lgamma(k + 1))
      return k;
  }
}

}  // namespace

std::vector<double> shepp_logan(const Geometry& g, int samples) {
  g.validate();
  require(samples >= 1 && samples <= 64, "ct2d: shepp_logan samples = {}: expected 1..64", samples);
  const double width = g.radius / static_cast<double>(g.rings);
  const double step = 2 * std::numbers::pi / static_cast<double>(g.sectors);
  std::vector<double> image(static_cast<std::size_t>(g.shape().cols()));
#pragma omp parallel for collapse(2) schedule(static)
  for (index_t ring = 0; ring < g.rings; ++ring) {
    for (index_t sector = 0; sector < g.sectors; ++sector) {
      // The voxel's mean: samples x samples midpoints in (r, theta), weighted by r (the area
      // element r dr dtheta).
      double sum = 0, weights = 0;
      for (int i = 0; i < samples; ++i) {
        const double r = (static_cast<double>(ring) + (i + 0.5) / samples) * width;
        for (int j = 0; j < samples; ++j) {
          const double theta = (static_cast<double>(sector) + (j + 0.5) / samples) * step;
          sum += r * shepp_logan_at(r * std::cos(theta) / g.radius, r * std::sin(theta) / g.radius);
          weights += r;
        }
      }
      image[static_cast<std::size_t>(voxel_column(g, ring, sector))] = sum / weights;
    }
  }
  return image;
}

std::vector<double> to_cartesian(const Geometry& g, std::span<const double> image, index_t pixels) {
  g.validate();
  require(static_cast<index_t>(image.size()) == g.shape().cols(),
          "ct2d: to_cartesian: the image has {} values: expected {} (rings x sectors)",
          image.size(), g.shape().cols());
  require(pixels > 0 && pixels <= 65536, "ct2d: to_cartesian: pixels = {}: expected 1..65536",
          pixels);
  std::vector<double> out(static_cast<std::size_t>(pixels * pixels), 0.0);
  const double pitch = 2 * g.radius / static_cast<double>(pixels);
#pragma omp parallel for schedule(static)
  for (index_t row = 0; row < pixels; ++row) {
    const double y = g.radius - (static_cast<double>(row) + 0.5) * pitch;
    for (index_t col = 0; col < pixels; ++col) {
      const double x = -g.radius + (static_cast<double>(col) + 0.5) * pitch;
      const double r = std::hypot(x, y);
      if (r > g.radius) continue;
      const index_t column = voxel_column(g, detail::ring_at(g, r), detail::sector_at(g, x, y));
      out[static_cast<std::size_t>(row * pixels + col)] = image[static_cast<std::size_t>(column)];
    }
  }
  return out;
}

std::vector<double> poisson_noise(std::span<const double> mean, double counts, std::uint64_t seed) {
  require(std::isfinite(counts) && counts > 0,
          "ct2d: poisson_noise: counts = {}: expected a positive, finite number", counts);
  std::vector<double> out(mean.size());
  std::size_t largest = 0;
  for (std::size_t i = 0; i < mean.size(); ++i) {
    require(std::isfinite(mean[i]) && mean[i] >= 0,
            "ct2d: poisson_noise: mean[{}] = {}: expected a finite value >= 0", i, mean[i]);
    if (mean[i] > mean[largest]) largest = i;
  }
  // The sampler's limit is on the product: a valid mean is never to blame for too many counts.
  require(mean.empty() || mean[largest] * counts < kMaxPoissonCounts,
          "ct2d: poisson_noise: counts = {}: the largest mean, mean[{}] = {}, would be {:.3g} "
          "counts: expected counts below {:.3g}, which keeps every entry below {:g} counts",
          counts, largest, mean[largest], mean[largest] * counts, kMaxPoissonCounts / mean[largest],
          kMaxPoissonCounts);
  // Entry i's own stream: the seed mixed twice, the index once (so seed and index never swap).
  const std::uint64_t key = SplitMix64{SplitMix64{seed}.next()}.next();
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < mean.size(); ++i) {
    SplitMix64 rng{key ^ SplitMix64{static_cast<std::uint64_t>(i)}.next()};
    out[i] = poisson(mean[i] * counts, rng) / counts;
  }
  return out;
}

}  // namespace shiftop::models::ct2d
