// The inputs of a source-inversion demo on a grid model (Heat2d, Wave2d): a true source that is
// smooth in space and time, and data with Gaussian noise of a given size relative to the signal.
// `shiftop model --truth/--data` and the Python shiftop.models both use these, so that they give
// the same numbers for the same model and seed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "shiftop/core/shape.hpp"

namespace shiftop::models {

/// The true source m_true, double[nm][nt] (SOTI), for sources at the grid points `sources`
/// (row-major on the n x n interior grid of the unit square, spacing 1/(n+1)): source j at (x, y)
/// is a Gaussian pulse in time, m_j(t) = a(x) exp(-(tau - c(y))^2 / (2 * 0.1^2)) with
/// tau = (t + 1/2)/nt, arrival c(y) = 0.3 + 0.4 y and amplitude a(x) = 1 + 0.5 sin(2 pi x).
/// Throws shiftop::Error on n < 1, nt < 1 or a grid point outside 0..n*n-1.
std::vector<double> smooth_source(std::span<const index_t> sources, index_t n, index_t nt);

/// Adds to `data` independent Gaussian noise of standard deviation sigma = `relative` times the
/// RMS of `data` (std::mt19937_64 seeded with `seed`, std::normal_distribution) and returns
/// sigma; relative = 0 leaves `data` unchanged. Throws shiftop::Error unless `relative` is finite
/// and non-negative.
double add_relative_noise(std::span<double> data, double relative, std::uint64_t seed);

}  // namespace shiftop::models
