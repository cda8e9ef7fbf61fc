// The ct2d scanner against closed forms and an independent reference: line lengths of known rays
// (through the centre, tangent to a ring, along a sector edge, through a voxel corner, chords at a
// distance p), lengths of random rays against dense sampling of the ray, the traced matrix of
// every position against the block-circulant matrix of position 0's first block row (and
// against circ::Operator's products on that row), the phantom's known values and integral, the
// Cartesian resampling, and Poisson noise statistics.
#include "shiftop/models/ct2d.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <random>
#include <vector>

#include "support/expect_error.hpp"

namespace shiftop::models::ct2d {
namespace {

using shiftop::testing::expect_error;
constexpr double kPi = std::numbers::pi;

Geometry small_geometry() {
  return {.positions = 4,
          .rings = 5,
          .sectors = 12,
          .detectors = 9,
          .radius = 1.0,
          .source_distance = 2.5};
}

// A ray through the point (px, py) at angle `angle`, starting 3 radii before it.
Ray ray_through(double px, double py, double angle) {
  const double dx = std::cos(angle), dy = std::sin(angle);
  return {.x0 = px - 3 * dx, .y0 = py - 3 * dy, .dx = dx, .dy = dy};
}

// Total length per ring.
std::vector<double> per_ring(const Geometry& g, const std::vector<Intersection>& hits) {
  std::vector<double> rings(static_cast<std::size_t>(g.rings), 0.0);
  for (const Intersection& hit : hits)
    rings[static_cast<std::size_t>(column_voxel(g, hit.column).ring)] += hit.length;
  return rings;
}

// Length of the line at distance p from the origin inside ring j (the annulus [j w, (j+1) w]).
double ring_chord(double p, double inner, double outer) {
  const auto half = [&](double rho) { return rho > p ? std::sqrt(rho * rho - p * p) : 0.0; };
  return 2 * (half(outer) - half(inner));
}

void expect_well_formed(const Geometry& g, const std::vector<Intersection>& hits) {
  for (std::size_t e = 0; e < hits.size(); ++e) {
    EXPECT_GT(hits[e].length, 0) << "entry " << e;
    EXPECT_GE(hits[e].column, 0);
    EXPECT_LT(hits[e].column, g.shape().cols());
    if (e > 0) {
      EXPECT_LT(hits[e - 1].column, hits[e].column) << "columns not ascending at " << e;
    }
  }
}

// Independent reference: the ray sampled at `samples` midpoints over [0, 6 radii], each sample's
// voxel found from its polar coordinates by plain floor division.
std::map<index_t, double> sampled_lengths(const Geometry& g, const Ray& r, int samples) {
  std::map<index_t, double> out;
  const double span = 6 * g.radius, h = span / samples;
  for (int s = 0; s < samples; ++s) {
    const double t = (s + 0.5) * h;
    const double x = r.x0 + t * r.dx, y = r.y0 + t * r.dy;
    const double rad = std::hypot(x, y);
    if (rad >= g.radius) continue;
    double angle = std::atan2(y, x);
    if (angle < 0) angle += 2 * kPi;
    const auto ring = static_cast<index_t>(rad / (g.radius / static_cast<double>(g.rings)));
    const auto sector = static_cast<index_t>(angle / (2 * kPi / static_cast<double>(g.sectors)));
    out[voxel_column(g, ring, std::min(sector, g.sectors - 1))] += h;
  }
  return out;
}

TEST(Ct2dGeometry, ShapeAndColumnOrderIsABijection) {
  const Geometry g{.positions = 3, .rings = 4, .sectors = 6, .detectors = 5};
  EXPECT_EQ(g.shape(), (circ::Shape{.k = 3, .mb = 5, .nb = 8}));
  std::vector<int> seen(static_cast<std::size_t>(g.shape().cols()), 0);
  for (index_t ring = 0; ring < g.rings; ++ring)
    for (index_t sector = 0; sector < g.sectors; ++sector) {
      const index_t column = voxel_column(g, ring, sector);
      ++seen[static_cast<std::size_t>(column)];
      const Voxel back = column_voxel(g, column);
      EXPECT_EQ(back.ring, ring);
      EXPECT_EQ(back.sector, sector);
      // Block j holds the sectors of rotation step j: sector / q with q = 2.
      EXPECT_EQ(column / g.shape().nb, sector / 2);
    }
  EXPECT_TRUE(std::ranges::all_of(seen, [](int n) { return n == 1; }));
}

TEST(Ct2dGeometry, RefusesBadGeometry) {
  Geometry g = small_geometry();
  g.sectors = 10;
  expect_error([&] { g.validate(); }, "not a multiple of positions");
  g = small_geometry();
  g.source_distance = 0.5;
  expect_error([&] { g.validate(); }, "source_distance");
  g = small_geometry();
  g.rings = 0;
  expect_error([&] { g.validate(); }, "rings = 0");
  g = small_geometry();
  g.radius = std::nan("");
  expect_error([&] { g.validate(); }, "radius");
  g = small_geometry();
  g.rings = index_t{1} << 40;
  expect_error([&] { g.validate(); }, "below 2^31");
  expect_error([&] { (void)voxel_column(small_geometry(), 5, 0); }, "outside the grid");
  expect_error([&] { (void)ray(small_geometry(), 4, 0); }, "outside the scanner");
  expect_error([&] { (void)trace(small_geometry(), Ray{.x0 = -2, .dx = 2}); }, "unit direction");
}

TEST(Ct2dTrace, ThroughTheCentreEachRingTwiceForTwiceItsWidth) {
  const Geometry g = small_geometry();
  const double w = g.radius / static_cast<double>(g.rings);
  const double angle = 7 * kPi / 180;  // inside sector 0; leaves through sector 0, enters in 6
  const std::vector<Intersection> hits = trace(g, ray_through(0, 0, angle));
  expect_well_formed(g, hits);
  ASSERT_EQ(hits.size(), static_cast<std::size_t>(2 * g.rings));
  for (const Intersection& hit : hits) {
    const Voxel v = column_voxel(g, hit.column);
    EXPECT_TRUE(v.sector == 0 || v.sector == 6) << "sector " << v.sector;
    EXPECT_NEAR(hit.length, w, 1e-14);
  }
}

TEST(Ct2dTrace, TangentToARingTouchesNothingInside) {
  const Geometry g = small_geometry();
  const double w = g.radius / static_cast<double>(g.rings);
  for (index_t j = 1; j < g.rings; ++j) {
    const double p = static_cast<double>(j) * w;
    const std::vector<Intersection> hits = trace(g, ray_through(-0.1, p, 0));  // y = p
    expect_well_formed(g, hits);
    const std::vector<double> rings = per_ring(g, hits);
    for (index_t i = 0; i < g.rings; ++i) {
      const double expected =
          ring_chord(p, static_cast<double>(i) * w, static_cast<double>(i + 1) * w);
      EXPECT_NEAR(rings[static_cast<std::size_t>(i)], expected, 1e-14) << "ring " << i;
      if (i < j) {
        EXPECT_EQ(rings[static_cast<std::size_t>(i)], 0.0) << "ring " << i;
      }
    }
  }
}

TEST(Ct2dTrace, AlongASectorEdge) {
  const Geometry g = small_geometry();
  const double w = g.radius / static_cast<double>(g.rings);
  for (index_t s = 0; s < g.sectors; ++s) {
    const double angle = 2 * kPi * static_cast<double>(s) / static_cast<double>(g.sectors);
    const std::vector<Intersection> hits = trace(g, ray_through(0, 0, angle));
    expect_well_formed(g, hits);
    double total = 0;
    const index_t opposite = (s + g.sectors / 2) % g.sectors;
    for (const Intersection& hit : hits) {
      const index_t sector = column_voxel(g, hit.column).sector;
      const auto next_to = [&](index_t edge) {
        return sector == edge || sector == (edge + g.sectors - 1) % g.sectors;
      };
      EXPECT_TRUE(next_to(s) || next_to(opposite)) << "edge " << s << ", sector " << sector;
      total += hit.length;
    }
    for (const double ring : per_ring(g, hits))
      EXPECT_NEAR(ring, 2 * w, 1e-14) << "edge " << s;
    EXPECT_NEAR(total, 2 * g.radius, 1e-14);
  }
}

TEST(Ct2dTrace, ThroughAVoxelCornerNoSpuriousEntries) {
  const Geometry g = small_geometry();
  const double w = g.radius / static_cast<double>(g.rings);
  // Not direction 0: that line (y = w) is also tangent to circle 1, where a rounding of p by
  // 1e-17 moves a sqrt(2 w 1e-17) ~ 2e-9 piece between rings.
  for (const double direction : {0.3, 1.1, 2.0, 2.9}) {
    // The corner of ring 2's inner circle and sector boundary 1 (30 degrees).
    const double cx = 2 * w * std::cos(kPi / 6), cy = 2 * w * std::sin(kPi / 6);
    const Ray r = ray_through(cx, cy, direction);
    const std::vector<Intersection> hits = trace(g, r);
    expect_well_formed(g, hits);
    const double p = std::abs(r.x0 * r.dy - r.y0 * r.dx);
    const std::vector<double> rings = per_ring(g, hits);
    for (index_t i = 0; i < g.rings; ++i)
      // 2e-14: at least 4x the worst measured over the native and portable builds (4.4e-15).
      EXPECT_NEAR(rings[static_cast<std::size_t>(i)],
                  ring_chord(p, static_cast<double>(i) * w, static_cast<double>(i + 1) * w), 2e-14);
    // The same voxels as the sampled reference, none of rounding size.
    const std::map<index_t, double> reference = sampled_lengths(g, r, 600000);
    EXPECT_EQ(hits.size(), reference.size()) << "direction " << direction;
    for (const Intersection& hit : hits)
      EXPECT_GT(hit.length, 1e-3);
  }
}

TEST(Ct2dTrace, ChordsAndRandomRaysAgainstSampling) {
  const Geometry g{.positions = 5,
                   .rings = 7,
                   .sectors = 35,
                   .detectors = 3,
                   .radius = 1.7,
                   .source_distance = 4};
  const double w = g.radius / static_cast<double>(g.rings);
  std::mt19937_64 engine(17);
  std::uniform_real_distribution<double> uniform(0, 1);
  constexpr int kSamples = 1200000;
  const double h = 6 * g.radius / kSamples;
  double worst = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const double p = g.radius * (2 * uniform(engine) - 1) * 0.999;
    const double angle = 2 * kPi * uniform(engine);
    // The line at signed distance p from the origin, travelling along `angle`.
    const Ray r = ray_through(-p * std::sin(angle), p * std::cos(angle), angle);
    const std::vector<Intersection> hits = trace(g, r);
    expect_well_formed(g, hits);
    double total = 0;
    for (const Intersection& hit : hits)
      total += hit.length;
    EXPECT_NEAR(total, 2 * std::sqrt(g.radius * g.radius - p * p), 2e-14);  // measured 3.2e-15
    const std::vector<double> rings = per_ring(g, hits);
    for (index_t i = 0; i < g.rings; ++i)
      EXPECT_NEAR(
          rings[static_cast<std::size_t>(i)],
          ring_chord(std::abs(p), static_cast<double>(i) * w, static_cast<double>(i + 1) * w),
          1e-13);
    std::map<index_t, double> reference = sampled_lengths(g, r, kSamples);
    for (const Intersection& hit : hits) {
      worst = std::max(worst, std::abs(hit.length - reference[hit.column]));
      reference.erase(hit.column);
    }
    for (const auto& [column, length] : reference)
      worst = std::max(worst, length);
  }
  // Sampling misplaces at most one step at each end of a voxel's piece (measured 0.95 h).
  EXPECT_LE(worst, 2 * h);
}

TEST(Ct2dTrace, MissesAndGrazesGiveNothing) {
  const Geometry g = small_geometry();
  EXPECT_TRUE(trace(g, ray_through(0, 1.0, 0)).empty());    // tangent to the field of view
  EXPECT_TRUE(trace(g, ray_through(0, 1.5, 0.2)).empty());  // misses
  EXPECT_TRUE(trace(g, {.x0 = 2, .y0 = 0, .dx = 1, .dy = 0}).empty());  // points away
}

TEST(Ct2dSystemMatrix, RowsAreTheFanRaysChords) {
  const Geometry g = small_geometry();
  std::vector<double> reported;
  const circ::FirstBlockRow<double> a =
      system_matrix<double>(g, [&](double f) { reported.push_back(f); });
  circ::validate(a.shape, a.view());
  ASSERT_FALSE(reported.empty());
  EXPECT_TRUE(std::ranges::is_sorted(reported));
  EXPECT_EQ(reported.back(), 1.0);
  const double fan = 2 * std::asin(g.radius / g.source_distance);
  for (index_t b = 0; b < g.detectors; ++b) {
    const auto begin = a.indptr[static_cast<std::size_t>(b)];
    const auto end = a.indptr[static_cast<std::size_t>(b + 1)];
    ASSERT_LT(begin, end) << "row " << b << " is empty";
    double total = 0;
    for (auto e = begin; e < end; ++e) {
      EXPECT_GT(a.data[static_cast<std::size_t>(e)], 0);
      total += a.data[static_cast<std::size_t>(e)];
    }
    const double gamma = (static_cast<double>(b) + 0.5 - 4.5) * fan / 9;
    const double p = g.source_distance * std::sin(gamma);
    EXPECT_NEAR(total, 2 * std::sqrt(g.radius * g.radius - p * p), 1e-13) << "row " << b;
  }
  const circ::FirstBlockRow<float> single = system_matrix<float>(g);
  EXPECT_EQ(single.indices, a.indices);
  for (std::size_t e = 0; e < a.data.size(); ++e)
    EXPECT_EQ(single.data[e], static_cast<float>(a.data[e]));
}

// Every position's rays traced directly give the block-circulant matrix of position 0's first
// block row: block (i, j) = A_{(j - i) mod k}. Sizes: q = 3 sectors per step, odd detectors.
TEST(Ct2dSystemMatrix, TracedFullMatrixIsBlockCirculant) {
  const Geometry g{.positions = 7,
                   .rings = 6,
                   .sectors = 21,
                   .detectors = 11,
                   .radius = 1.3,
                   .source_distance = 2.1};
  const circ::Shape s = g.shape();
  const circ::FirstBlockRow<double> a = system_matrix<double>(g);
  const auto rows = static_cast<std::size_t>(s.rows()), cols = static_cast<std::size_t>(s.cols());
  std::vector<double> traced(rows * cols, 0.0), circulant(rows * cols, 0.0);
  for (index_t i = 0; i < s.k; ++i)
    for (index_t b = 0; b < s.mb; ++b) {
      const auto row = static_cast<std::size_t>(i * s.mb + b);
      for (const Intersection& hit : trace(g, ray(g, i, b)))
        traced[row * cols + static_cast<std::size_t>(hit.column)] = hit.length;
      for (auto e = a.indptr[static_cast<std::size_t>(b)];
           e < a.indptr[static_cast<std::size_t>(b + 1)]; ++e) {
        const index_t c = a.indices[static_cast<std::size_t>(e)];
        const index_t d = c / s.nb, l = c % s.nb;  // A_d, column l
        const index_t j = (d + i) % s.k;           // block (i, j) = A_{(j - i) mod k}
        circulant[row * cols + static_cast<std::size_t>(j * s.nb + l)] =
            a.data[static_cast<std::size_t>(e)];
      }
    }
  double worst = 0;
  for (std::size_t e = 0; e < traced.size(); ++e)
    worst = std::max(worst, std::abs(traced[e] - circulant[e]));
  // At least 4x the worst measured over the native and portable builds (2.7e-15 on both): the cos
  // and sin of each position's angle.
  EXPECT_LT(worst, 2e-14);
  EXPECT_GT(*std::ranges::max_element(traced), 0.1);

  // circ::Operator on A applies the traced matrix: a rotated image's projection is the
  // projection shifted, for every position at once. C x and C^T y against plain loops.
  circ::Operator<double> op = circ::Operator<double>::create(a, {.planning = Planning::Estimate});
  std::mt19937_64 engine(5);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::vector<double> x(cols), y(rows);
  for (double& v : x)
    v = uniform(engine);
  for (double& v : y)
    v = uniform(engine);
  std::vector<double> cx(rows, std::nan("")), cty(cols, std::nan(""));
  op.apply(circ::Op::C, x, cx);
  op.apply(circ::Op::Ct, y, cty);
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < cols; ++c)
      sum += traced[r * cols + c] * x[c];
    EXPECT_NEAR(cx[r], sum, 1e-13) << "row " << r;
  }
  for (std::size_t c = 0; c < cols; ++c) {
    double sum = 0;
    for (std::size_t r = 0; r < rows; ++r)
      sum += traced[r * cols + c] * y[r];
    EXPECT_NEAR(cty[c], sum, 1e-13) << "column " << c;
  }
}

TEST(Ct2dPhantom, KnownValuesAndIntegral) {
  const Geometry g{.positions = 4, .rings = 64, .sectors = 256, .detectors = 8};
  const std::vector<double> image = shepp_logan(g, 4);
  ASSERT_EQ(static_cast<index_t>(image.size()), g.shape().cols());
  // The centre: the skull (1) and the brain (-0.8).
  EXPECT_NEAR(image[static_cast<std::size_t>(voxel_column(g, 0, 10))], 0.2, 1e-15);
  // Inside ellipse 5 (centre (0, 0.35)): 1 - 0.8 + 0.1.
  EXPECT_NEAR(image[static_cast<std::size_t>(voxel_column(g, 22, 64))], 0.3, 1e-15);
  // The outer ring is outside the skull (semi-axes 0.69, 0.92).
  for (index_t sector = 0; sector < g.sectors; ++sector)
    EXPECT_EQ(image[static_cast<std::size_t>(voxel_column(g, 63, sector))], 0.0);
  // The integral: sum of value * pi a b over the ten ellipses.
  const double expected = kPi * (0.69 * 0.92 - 0.8 * 0.6624 * 0.874 - 0.2 * 0.11 * 0.31 -
                                 0.2 * 0.16 * 0.41 + 0.1 * 0.21 * 0.25 + 2 * 0.1 * 0.046 * 0.046 +
                                 0.1 * 0.046 * 0.023 + 0.1 * 0.023 * 0.023 + 0.1 * 0.023 * 0.046);
  const double w = 1.0 / 64, step = 2 * kPi / 256;
  double integral = 0;
  for (index_t ring = 0; ring < g.rings; ++ring)
    for (index_t sector = 0; sector < g.sectors; ++sector) {
      const auto inner = static_cast<double>(ring);
      const double area = 0.5 * step * w * w * ((inner + 1) * (inner + 1) - inner * inner);
      integral += area * image[static_cast<std::size_t>(voxel_column(g, ring, sector))];
    }
  // Measured 5.8e-4 relative on the native and portable builds alike: the voxel grid's error at
  // the ellipses' edges, not rounding, so the bound is not 4x a rounding measurement.
  EXPECT_NEAR(integral, expected, 1e-3 * expected);
  expect_error([&] { (void)shepp_logan(g, 0); }, "samples");
}

TEST(Ct2dPhantom, ToCartesianTakesTheVoxelOfEachPixelCentre) {
  const Geometry g{
      .positions = 3, .rings = 5, .sectors = 12, .detectors = 4, .radius = 2, .source_distance = 4};
  std::vector<double> image(static_cast<std::size_t>(g.shape().cols()));
  for (std::size_t c = 0; c < image.size(); ++c)
    image[c] = 1.0 + static_cast<double>(c);
  const index_t n = 9;
  const std::vector<double> picture = to_cartesian(g, image, n);
  ASSERT_EQ(picture.size(), 81u);
  const auto at = [&](index_t row, index_t col) {
    return picture[static_cast<std::size_t>(row * n + col)];
  };
  const auto value = [&](index_t ring, index_t sector) {
    return image[static_cast<std::size_t>(voxel_column(g, ring, sector))];
  };
  EXPECT_EQ(at(0, 0), 0.0);  // corners are outside the disc
  EXPECT_EQ(at(8, 8), 0.0);
  // The centre pixel holds the origin (its sector is a matter of rounding): ring 0.
  EXPECT_EQ(column_voxel(g, static_cast<index_t>(at(4, 4)) - 1).ring, 0);
  // Row 0, middle column: (0, 2 - 2/9), ring 4, 90 degrees = sector 3 (top at row 0).
  EXPECT_EQ(at(0, 4), value(4, 3));
  EXPECT_EQ(at(8, 4), value(4, 9));  // the bottom: 270 degrees
  EXPECT_EQ(at(4, 8), value(4, 0));  // the right: 0 degrees
  EXPECT_EQ(at(4, 0), value(4, 6));  // the left: 180 degrees
  // Pixel (2, 6): centre (8/9, 8/9), 45 degrees, ring 3.
  EXPECT_EQ(at(2, 6), value(static_cast<index_t>(std::hypot(8.0 / 9, 8.0 / 9) / 0.4), 1));
  expect_error([&] { (void)to_cartesian(g, std::vector<double>(3), n); }, "has 3 values");
}

TEST(Ct2dNoise, PoissonMeanVarianceAndDeterminism) {
  for (const double mean : {0.5, 0.03}) {  // lambda = 50 (rejection) and 3 (multiplication)
    const double counts = 100;
    const std::vector<double> clean(200000, mean);
    const std::vector<double> noisy = poisson_noise(clean, counts, 42);
    double sum = 0, squares = 0;
    for (const double v : noisy) {
      EXPECT_NEAR(v * counts, std::round(v * counts), 1e-9);  // counts, rescaled
      sum += v;
    }
    const double n = static_cast<double>(noisy.size());
    const double sample_mean = sum / n;
    for (const double v : noisy)
      squares += (v - sample_mean) * (v - sample_mean);
    const double variance = mean / counts;  // Var(Poisson(m c) / c) = m / c
    EXPECT_NEAR(sample_mean, mean, 5 * std::sqrt(variance / n)) << "mean " << mean;
    // The sample variance's relative spread is sqrt((2 + 1/lambda) / n) = 0.34%; measured 0.52%.
    EXPECT_NEAR(squares / (n - 1), variance, 0.015 * variance) << "mean " << mean;
    EXPECT_EQ(poisson_noise(clean, counts, 42), noisy);
    EXPECT_NE(poisson_noise(clean, counts, 43), noisy);
  }
  EXPECT_EQ(poisson_noise(std::vector<double>{0.0, 0.0}, 10, 1), (std::vector<double>{0, 0}));
  expect_error([] { (void)poisson_noise(std::vector<double>{1, -1}, 10, 1); }, "mean[1] = -1");
  expect_error([] { (void)poisson_noise(std::vector<double>{1}, 0, 1); }, "counts = 0");
}

}  // namespace
}  // namespace shiftop::models::ct2d
