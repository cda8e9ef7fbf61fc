// shiftop::models::ct2d — a 2D fan-beam CT scanner on a polar-voxel image grid whose system matrix
// is block-circulant (sparse-block-circulant-spmv, section 1; Soriano et al. 2013 for polar
// voxels), written directly as its first block row A (include/shiftop/circ/operator.hpp).
//
// Geometry. The field of view is the disc of radius `radius` around the origin. The image is
// `rings` annuli of equal width times `sectors` equal angular sectors; sector s spans the angles
// [2 pi s / sectors, 2 pi (s+1) / sectors). The source sits at distance `source_distance` from
// the origin at angle phi_i = 2 pi i / k for position i = 0..k-1 (k = `positions`, over 360
// degrees) and fires `detectors` rays, one per bin of an equiangular detector arc: bin b's ray
// leaves the source towards the origin turned by the fan angle
//   gamma_b = (b + 1/2 - detectors/2) * fan / detectors,  fan = 2 asin(radius / source_distance),
// so the fan covers the field of view exactly. An entry of the system matrix is the exact length
// of the ray inside the voxel (ray-driven, Siddon-type: every crossing of a ring circle or a
// sector line is found in closed form and the lengths between consecutive crossings are summed).
//
// Why it is block-circulant. `sectors` is a multiple q*k of k, so turning the scanner by one
// position (2 pi / k) moves sector s to s + q. Voxel (ring, sector) is column
//   (sector / q) * nb + ring * q + sector mod q,   nb = rings * q,
// of C: block j = sector / q, and block j + 1 is block j turned by one position. Ray (i, b) is
// row i * detectors + b. Then block (i, j) of C equals block (0, j - i mod k): C is block-circulant
// with k x k blocks of mb x nb = detectors x (rings*q), and only position 0's rays are traced.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "shiftop/circ/operator.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::models::ct2d {

struct Geometry {
  index_t positions = 60;  // k
  index_t rings = 32;
  index_t sectors = 240;    // a multiple of positions
  index_t detectors = 128;  // mb
  double radius = 1.0;
  double source_distance = 2.0;  // > radius

  /// Throws shiftop::Error naming the first bad field (sizes positive, sectors a multiple of
  /// positions, source outside the field of view, operator sizes within circ::Shape's limits).
  void validate() const;
  /// k = positions, mb = detectors, nb = rings * sectors / positions.
  circ::Shape shape() const;
  std::string str() const;
};

/// Column of C for voxel (ring, sector), and back.
index_t voxel_column(const Geometry& g, index_t ring, index_t sector);
struct Voxel {
  index_t ring = 0;
  index_t sector = 0;
};
Voxel column_voxel(const Geometry& g, index_t column);

/// A ray as a point and a unit direction, in the image's coordinates.
struct Ray {
  double x0 = 0, y0 = 0;  // the source
  double dx = 0, dy = 0;  // unit direction
};
/// Ray of bin `bin` at position `position`.
Ray ray(const Geometry& g, index_t position, index_t bin);

/// The voxels a ray crosses and its length in each (columns ascending), for any ray, exact up to
/// rounding; rays that miss the field of view give nothing.
struct Intersection {
  index_t column = 0;
  double length = 0;
};
std::vector<Intersection> trace(const Geometry& g, const Ray& ray);

/// The first block row A of the system matrix (position 0's rays), entries in FP64 then rounded
/// to T. `progress`, when set, is called with the fraction of rays traced.
template <class T>
circ::FirstBlockRow<T> system_matrix(const Geometry& g,
                                     const std::function<void(double)>& progress = {});

/// Shepp-Logan phantom (the modified, "Toft" contrast version, ellipses scaled to the field of
/// view) averaged over each voxel with `samples` x `samples` points in (r, theta); returned as an
/// image vector in column order (length k*nb).
std::vector<double> shepp_logan(const Geometry& g, int samples = 4);

/// A polar image (column order) resampled to a pixels x pixels Cartesian image of the square
/// [-radius, radius]^2, row-major with row 0 at the top (y = +radius); pixels whose centre is
/// outside the field of view are 0. Each pixel takes the value of the voxel holding its centre.
std::vector<double> to_cartesian(const Geometry& g, std::span<const double> image, index_t pixels);

/// The most counts one entry of poisson_noise may have (mean * counts).
inline constexpr double kMaxPoissonCounts = 1e15;

/// Poisson noise: each entry of `mean` (>= 0) times `counts` is replaced by a Poisson sample
/// divided by `counts` (so larger counts mean less noise); deterministic for a seed. Throws
/// shiftop::Error naming `counts` where an entry would exceed kMaxPoissonCounts.
std::vector<double> poisson_noise(std::span<const double> mean, double counts, std::uint64_t seed);

}  // namespace shiftop::models::ct2d
