// The ct2d scanner's geometry, its column order and rays, and the first block row A of its
// block-circulant system matrix (include/shiftop/models/ct2d.hpp).
#include "shiftop/models/ct2d.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>

#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::models::ct2d {
namespace {

// Each count is checked against this before any product of counts is formed, so that the
// products below cannot overflow; circ::Shape::validate then applies the operator's own limits.
constexpr index_t kMaxCount = index_t{1} << 31;

void require_count(index_t value, const char* name) {
  require(value > 0 && value < kMaxCount, "ct2d: {} = {}: expected a positive integer below 2^31",
          name, value);
}

// Rays traced between two progress reports.
constexpr index_t kRaysPerReport = 512;

}  // namespace

void Geometry::validate() const {
  require_count(positions, "positions");
  require_count(rings, "rings");
  require_count(sectors, "sectors");
  require_count(detectors, "detectors");
  require(sectors % positions == 0,
          "ct2d: sectors = {} is not a multiple of positions = {}: expected sectors = q * "
          "positions, so that one rotation step is a shift by q sectors",
          sectors, positions);
  require(std::isfinite(radius) && radius > 0,
          "ct2d: radius = {}: expected a positive, finite field-of-view radius", radius);
  require(std::isfinite(source_distance) && source_distance > radius,
          "ct2d: source_distance = {}: expected a finite distance greater than the radius {} (the "
          "source outside the field of view)",
          source_distance, radius);
  shape().validate();
}

circ::Shape Geometry::shape() const {
  return {.k = positions, .mb = detectors, .nb = rings * (sectors / positions)};
}

std::string Geometry::str() const {
  return fmt::format("positions={} rings={} sectors={} detectors={} radius={} source_distance={}",
                     positions, rings, sectors, detectors, radius, source_distance);
}

index_t voxel_column(const Geometry& g, index_t ring, index_t sector) {
  require(0 <= ring && ring < g.rings && 0 <= sector && sector < g.sectors,
          "ct2d: voxel (ring {}, sector {}) is outside the grid of {} rings x {} sectors", ring,
          sector, g.rings, g.sectors);
  const index_t q = g.sectors / g.positions;
  return (sector / q) * (g.rings * q) + ring * q + sector % q;
}

Voxel column_voxel(const Geometry& g, index_t column) {
  const index_t q = g.sectors / g.positions;
  const index_t nb = g.rings * q;
  require(0 <= column && column < g.positions * nb,
          "ct2d: column {} is outside the image's {} columns", column, g.positions * nb);
  const index_t in_block = column % nb;
  return {.ring = in_block / q, .sector = (column / nb) * q + in_block % q};
}

Ray ray(const Geometry& g, index_t position, index_t bin) {
  require(0 <= position && position < g.positions && 0 <= bin && bin < g.detectors,
          "ct2d: ray (position {}, bin {}) is outside the scanner's {} positions x {} bins",
          position, bin, g.positions, g.detectors);
  const double phi =
      2 * std::numbers::pi * static_cast<double>(position) / static_cast<double>(g.positions);
  const double fan = 2 * std::asin(g.radius / g.source_distance);
  const double gamma = (static_cast<double>(bin) + 0.5 - static_cast<double>(g.detectors) / 2) *
                       fan / static_cast<double>(g.detectors);
  // Towards the origin, (-cos phi, -sin phi), turned by the fan angle gamma.
  return {.x0 = g.source_distance * std::cos(phi),
          .y0 = g.source_distance * std::sin(phi),
          .dx = -std::cos(phi + gamma),
          .dy = -std::sin(phi + gamma)};
}

// Two passes over position 0's rays: the first counts each row's voxels (so that A is allocated
// once, at its exact size, after the memory check), the second traces again and fills the rows.
template <class T>
circ::FirstBlockRow<T> system_matrix(const Geometry& g,
                                     const std::function<void(double)>& progress) {
  g.validate();
  circ::FirstBlockRow<T> a;
  a.shape = g.shape();
  const index_t rows = g.detectors;
  a.indptr.assign(static_cast<std::size_t>(rows + 1), 0);
  const auto report = [&](index_t pass, index_t done) {
    if (progress)
      progress((static_cast<double>(pass * rows + done)) / static_cast<double>(2 * rows));
  };
  for (index_t pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      std::partial_sum(a.indptr.begin(), a.indptr.end(), a.indptr.begin());
      const double nnz = static_cast<double>(a.indptr.back());
      require_available_memory(
          nnz * static_cast<double>(sizeof(std::int64_t) + sizeof(T)),
          fmt::format("ct2d: the system matrix of {} ({} nonzeros)", g.str(), a.indptr.back()));
      a.indices.resize(static_cast<std::size_t>(a.indptr.back()));
      a.data.resize(static_cast<std::size_t>(a.indptr.back()));
    }
    for (index_t first = 0; first < rows; first += kRaysPerReport) {
      report(pass, first);
      const index_t last = std::min(rows, first + kRaysPerReport);
#pragma omp parallel for schedule(dynamic, 4)
      for (index_t row = first; row < last; ++row) {
        const std::vector<Intersection> hits = trace(g, ray(g, 0, row));
        const auto r = static_cast<std::size_t>(row);
        if (pass == 0) {
          a.indptr[r + 1] = static_cast<std::int64_t>(hits.size());
          continue;
        }
        auto at = static_cast<std::size_t>(a.indptr[r]);
        for (const Intersection& hit : hits) {
          a.indices[at] = hit.column;
          a.data[at] = static_cast<T>(hit.length);
          ++at;
        }
      }
    }
  }
  report(1, rows);
  return a;
}

template circ::FirstBlockRow<float> system_matrix<float>(const Geometry&,
                                                         const std::function<void(double)>&);
template circ::FirstBlockRow<double> system_matrix<double>(const Geometry&,
                                                           const std::function<void(double)>&);

}  // namespace shiftop::models::ct2d
