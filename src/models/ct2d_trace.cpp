// Exact ray tracing through the ct2d polar grid (include/shiftop/models/ct2d.hpp): a Siddon-type
// method in polar coordinates. The ray P(t) = S + t d (|d| = 1) is cut at every crossing with a
// ring circle (a quadratic in t) and with a sector boundary (a half-line from the origin); the
// crossings are sorted and each piece between two consecutive ones lies in one voxel, the voxel of
// its midpoint.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "models/ct2d_polar.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/models/ct2d.hpp"

namespace shiftop::models::ct2d {
namespace {

// Pieces shorter than this fraction of the radius are where two crossings coincide up to
// rounding (a ray through a voxel corner, or through the origin where every sector boundary
// meets): dropped, so that rounding does not add entries of length ~1e-16.
constexpr double kNegligible = 1e-12;

struct Line {
  double b = 0;  // S . d: the ray's closest approach to the origin is at t = -b
  double p = 0;  // S x d: its signed distance from the origin
};

// Crossings of the sector boundaries s (a half-line at angle 2 pi s / sectors) inside (lo, hi).
// Along the line, the polar angle turns monotonically (d theta / dt = p / r^2) through less than
// pi, so only the boundaries between the angles of the two ends are tried, one more on each side
// against rounding; a crossing must lie on the boundary's own half (lambda >= 0). A line through
// the origin (p = 0) crosses them all there.
void sector_crossings(const Geometry& g, const Ray& ray, const Line& line, double lo, double hi,
                      std::vector<double>& out) {
  if (line.p == 0) {
    if (lo < -line.b && -line.b < hi) out.push_back(-line.b);
    return;
  }
  const double step = 2 * std::numbers::pi / static_cast<double>(g.sectors);
  const auto angle_at = [&](double t) {
    const double angle = std::atan2(ray.y0 + t * ray.dy, ray.x0 + t * ray.dx);
    return angle < 0 ? angle + 2 * std::numbers::pi : angle;
  };
  // From the smaller angle counter-clockwise to the larger: the direction of travel when p > 0.
  double from = line.p > 0 ? angle_at(lo) : angle_at(hi);
  double to = line.p > 0 ? angle_at(hi) : angle_at(lo);
  if (to < from) to += 2 * std::numbers::pi;
  index_t first = static_cast<index_t>(std::floor(from / step)) - 1;
  index_t last = static_cast<index_t>(std::ceil(to / step)) + 1;
  if (last - first + 1 > g.sectors) {
    first = 0;
    last = g.sectors - 1;
  }
  for (index_t s = first; s <= last; ++s) {
    const index_t sector = ((s % g.sectors) + g.sectors) % g.sectors;
    const double theta = step * static_cast<double>(sector);
    const double ux = std::cos(theta), uy = std::sin(theta);
    const double den = ray.dx * uy - ray.dy * ux;  // d x u: zero when parallel
    if (den == 0) continue;
    const double t = -(ray.x0 * uy - ray.y0 * ux) / den;  // (S + t d) x u = 0
    if (!(lo < t && t < hi)) continue;
    const double lambda = (ray.x0 + t * ray.dx) * ux + (ray.y0 + t * ray.dy) * uy;
    if (lambda >= 0) out.push_back(t);
  }
}

}  // namespace

std::vector<Intersection> trace(const Geometry& g, const Ray& ray) {
  require(std::isfinite(ray.x0) && std::isfinite(ray.y0) && std::isfinite(ray.dx) &&
              std::isfinite(ray.dy) && std::abs(std::hypot(ray.dx, ray.dy) - 1) < 1e-9,
          "ct2d: ray from ({}, {}) along ({}, {}): expected a finite point and a unit direction",
          ray.x0, ray.y0, ray.dx, ray.dy);
  const Line line{.b = ray.x0 * ray.dx + ray.y0 * ray.dy, .p = ray.x0 * ray.dy - ray.y0 * ray.dx};
  const double distance = std::abs(line.p);
  // The chord of a circle of radius rho: t = -b -+ sqrt(rho^2 - p^2), the root in factored form.
  const auto half_chord = [&](double rho) {
    return std::sqrt((rho - distance) * (rho + distance));
  };
  if (distance >= g.radius) return {};
  // The field of view, from the source on (a ray is a half-line).
  const double lo = std::max(-line.b - half_chord(g.radius), 0.0);
  const double hi = -line.b + half_chord(g.radius);
  if (!(lo < hi)) return {};

  std::vector<double> cuts = {lo, hi};
  const double width = g.radius / static_cast<double>(g.rings);
  for (index_t j = 1; j < g.rings; ++j) {
    const double rho = static_cast<double>(j) * width;
    if (rho <= distance) continue;  // missed, or touched at one point (tangent): no length
    const double h = half_chord(rho);
    for (const double t : {-line.b - h, -line.b + h})
      if (lo < t && t < hi) cuts.push_back(t);
  }
  sector_crossings(g, ray, line, lo, hi, cuts);
  std::ranges::sort(cuts);

  std::vector<Intersection> hits;
  for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
    const double length = cuts[c + 1] - cuts[c];
    if (length <= kNegligible * g.radius) continue;
    const double mid = 0.5 * (cuts[c] + cuts[c + 1]);
    // The midpoint's distance from the origin through its offset along the line from the
    // closest point: accurate where the ray grazes a circle.
    const double along = mid + line.b;
    const index_t ring = detail::ring_at(g, std::sqrt(line.p * line.p + along * along));
    const index_t sector = detail::sector_at(g, ray.x0 + mid * ray.dx, ray.y0 + mid * ray.dy);
    hits.push_back({voxel_column(g, ring, sector), length});
  }
  // Columns ascending, each once: a line can leave an annular sector and enter it again.
  std::ranges::sort(hits, {}, &Intersection::column);
  std::vector<Intersection> merged;
  for (const Intersection& hit : hits) {
    if (!merged.empty() && merged.back().column == hit.column)
      merged.back().length += hit.length;
    else
      merged.push_back(hit);
  }
  return merged;
}

}  // namespace shiftop::models::ct2d
