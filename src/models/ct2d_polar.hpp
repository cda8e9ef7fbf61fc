// Which polar voxel of the ct2d image grid holds a point (include/shiftop/models/ct2d.hpp): shared
// by the tracer (the voxel of a segment's midpoint), the phantom and the Cartesian resampling.
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>

#include "shiftop/models/ct2d.hpp"

namespace shiftop::models::ct2d::detail {

/// Ring holding distance r from the origin (r >= 0; r beyond the field of view gives the outer
/// ring). Compared against the same products j * width as the tracer's circles, so a point just
/// inside circle j is in ring j - 1 even where r / width rounds up to j.
inline index_t ring_at(const Geometry& g, double r) {
  const double width = g.radius / static_cast<double>(g.rings);
  auto ring = std::clamp(static_cast<index_t>(r / width), index_t{0}, g.rings - 1);
  while (ring > 0 && static_cast<double>(ring) * width > r)
    --ring;
  while (ring + 1 < g.rings && static_cast<double>(ring + 1) * width <= r)
    ++ring;
  return ring;
}

/// Sector holding the direction (x, y) (not both zero): the angle in [0, 2 pi) over the sector
/// angle. A direction within rounding of boundary s (1e-9 of a sector) is on it, and so in sector
/// s: a ray along a sector edge then lands in the same sector at every rotation position, however
/// cos and sin of the position's angle round (the system matrix stays block-circulant).
inline index_t sector_at(const Geometry& g, double x, double y) {
  double angle = std::atan2(y, x);
  if (angle < 0) angle += 2 * std::numbers::pi;
  const double in_sectors = angle / (2 * std::numbers::pi) * static_cast<double>(g.sectors);
  const double nearest = std::round(in_sectors);
  const double snapped = std::abs(in_sectors - nearest) < 1e-9 ? nearest : std::floor(in_sectors);
  return static_cast<index_t>(snapped) % g.sectors;
}

}  // namespace shiftop::models::ct2d::detail
