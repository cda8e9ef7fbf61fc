// shiftop._core.gsvd_batched and RegularizationPath: the implicit Hari-Zimmermann GSVD of a batch
// of pairs (svd/gsvd.hpp, on the CPU or a GPU) and the Tikhonov regularisation path of a
// block Toeplitz problem (inverse/regpath.hpp), with the GIL released. python/shiftop/gsvd.py and
// python/shiftop/regpath.py wrap them as shiftop.gsvd() and shiftop.regpath().
//
// Layout: the NumPy batches F (batch, m, n) and G (batch, p, n) are read in place when each matrix
// is column-major (unit stride along its rows, a leading dimension >= its rows) and the matrices do
// not overlap; gsvd.py makes such a copy otherwise (the GSVD of the transposes is not the GSVD of
// the pair, so a C-order matrix cannot be read as it is). The returned U, V and X are the
// library's column-major buffers seen as C-order (batch, n, rows) arrays, i.e. their transposes:
// gsvd.py swaps the last two axes back without copying.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "result_arrays.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/inverse/regpath.hpp"
#include "shiftop/svd/strategy.hpp"
#include "sweep_callback.hpp"

#ifdef SHIFTOP_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

svd::GsvdOptions gsvd_options(bool compute_vectors, const std::string& variant,
                              const std::string& strategy, std::int64_t block_width, int threads,
                              int max_sweeps) {
  require(block_width >= 0, "block_width: expected 0 (chosen from n) or a positive width, got {}",
          block_width);
  require(max_sweeps >= 0, "max_sweeps: expected 0 (the thesis' 50) or a positive count, got {}",
          max_sweeps);
  svd::GsvdOptions options;
  options.compute_vectors = compute_vectors;
  options.variant = parse_name<svd::Variant>(variant, "variant");
  options.strategy = parse_name<svd::StrategyKind>(strategy, "strategy");
  options.block_width = static_cast<index_t>(block_width);
  options.threads = threads;
  options.max_sweeps = max_sweeps;
  return options;
}

/// Where the library finds matrix b of a NumPy batch (batch, r, n): column-major r x n at
/// data + b * stride, leading dimension ld.
struct PairLayout {
  index_t ld = 0, stride = 0;
};

PairLayout column_major_layout(const char* name, index_t batch, index_t rows, index_t cols,
                               std::int64_t sb, std::int64_t sr, std::int64_t sc) {
  const bool column_major = (sr == 1 || rows == 1) && (cols == 1 || sc >= rows);
  require(column_major,
          "{}: each matrix must be column-major (Fortran order; got element strides ({}, {}, {}) "
          "for shape ({}, {}, {})): copy it with numpy.asfortranarray per matrix",
          name, sb, sr, sc, batch, rows, cols);
  PairLayout layout;
  layout.ld = cols == 1 ? rows : static_cast<index_t>(sc);
  layout.stride = layout.ld * cols;
  if (batch > 1) {
    require(sb >= layout.stride,
            "{}: the batch stride {} (elements) is smaller than one matrix ({} elements): the "
            "matrices overlap",
            name, sb, layout.stride);
    layout.stride = static_cast<index_t>(sb);
  }
  return layout;
}

template <class T>
using PairArray = nb::ndarray<const T, nb::ndim<3>, nb::device::cpu>;

nb::dict stats_arrays(const std::vector<svd::GsvdStats>& stats) {
  const std::size_t batch = stats.size();
  std::vector<std::int64_t> sweeps(batch), transformations(batch), proper(batch);
  std::vector<std::uint8_t> converged(batch);
  for (std::size_t b = 0; b < batch; ++b) {
    sweeps[b] = stats[b].sweeps;
    transformations[b] = stats[b].transformations;
    proper[b] = stats[b].proper_transformations;
    converged[b] = stats[b].converged ? 1 : 0;
  }
  nb::dict out;
  out["sweeps"] = owned_array<std::int64_t, 1>(std::move(sweeps), {batch});
  out["transformations"] = owned_array<std::int64_t, 1>(std::move(transformations), {batch});
  out["proper_transformations"] = owned_array<std::int64_t, 1>(std::move(proper), {batch});
  out["converged"] = owned_array<std::uint8_t, 1>(std::move(converged), {batch});
  return out;
}

template <class T>
nb::dict gsvd_batched(const PairArray<T>& f, const PairArray<T>& g, bool compute_vectors,
                      const std::string& variant, const std::string& strategy,
                      std::int64_t block_width, int threads, int max_sweeps,
                      std::optional<int> device, const nb::object& progress) {
  const auto batch = static_cast<index_t>(f.shape(0));
  const auto m = static_cast<index_t>(f.shape(1));
  const auto n = static_cast<index_t>(f.shape(2));
  const auto p = static_cast<index_t>(g.shape(1));
  require(static_cast<index_t>(g.shape(0)) == batch && static_cast<index_t>(g.shape(2)) == n,
          "g: expected shape ({}, p, {}) to match f ({}, {}, {}), got ({}, {}, {})", batch, n,
          batch, m, n, g.shape(0), g.shape(1), g.shape(2));
  require(batch > 0 && m > 0 && n > 0 && p > 0,
          "f, g: expected non-empty matrices, got shapes ({}, {}, {}) and ({}, {}, {})", batch, m,
          n, batch, p, n);
  const PairLayout lf =
      column_major_layout("f", batch, m, n, f.stride(0), f.stride(1), f.stride(2));
  const PairLayout lg =
      column_major_layout("g", batch, p, n, g.stride(0), g.stride(1), g.stride(2));
  svd::GsvdOptions options =
      gsvd_options(compute_vectors, variant, strategy, block_width, threads, max_sweeps);
  options.progress = sweep_callback(progress);

  svd::BatchedGsvdResult<T> result;
  {
    nb::gil_scoped_release unlocked;
    if (device) {
      const CurrentDevice restore;
      options.backend = Backend::Cuda;
      options.gpu.device = *device;
      result = svd::gsvd_hz_batched(f.data(), lf.ld, lf.stride, g.data(), lg.ld, lg.stride, batch,
                                    m, p, n, options);
    } else if (batch == 1) {
      // One pair: gsvd_hz's OpenMP level over the disjoint pairs of a step (section 3.3.1).
      svd::GsvdResult<T> one = svd::gsvd_hz(f.data(), m, lf.ld, g.data(), p, lg.ld, n, options);
      result.batch = 1;
      result.m = m;
      result.p = p;
      result.n = n;
      result.sigma_f = std::move(one.sigma_f);
      result.sigma_g = std::move(one.sigma_g);
      result.u = std::move(one.u);
      result.v = std::move(one.v);
      result.x = std::move(one.x);
      result.stats = {one.stats};
    } else {
      result = svd::gsvd_hz_batched(f.data(), lf.ld, lf.stride, g.data(), lg.ld, lg.stride, batch,
                                    m, p, n, options);
    }
  }
  const auto b = static_cast<std::size_t>(batch);
  const auto nn = static_cast<std::size_t>(n);
  nb::dict out;
  out["sigma_f"] = owned_array<svd::Real<T>, 2>(std::move(result.sigma_f), {b, nn});
  out["sigma_g"] = owned_array<svd::Real<T>, 2>(std::move(result.sigma_g), {b, nn});
  if (compute_vectors) {
    // Column-major rows x n is C-order (n, rows).
    out["u"] = owned_array<T, 3>(std::move(result.u), {b, nn, static_cast<std::size_t>(m)});
    out["v"] = owned_array<T, 3>(std::move(result.v), {b, nn, static_cast<std::size_t>(p)});
    out["x"] = owned_array<T, 3>(std::move(result.x), {b, nn, nn});
  }
  out["stats"] = stats_arrays(result.stats);
  return out;
}

template <class T>
void def_gsvd_batched(nb::module_& m) {
  m.def("gsvd_batched", &gsvd_batched<T>, "f"_a.noconvert(), "g"_a.noconvert(), nb::kw_only(),
        "compute_vectors"_a = false, "variant"_a = "auto", "strategy"_a = "modmod",
        "block_width"_a = 0, "threads"_a = 0, "max_sweeps"_a = 0, "device"_a = nb::none(),
        "progress"_a = nb::none(),
        "The GSVD of each pair (f[b], g[b]) of the 3-D arrays f (batch, m, n) and g (batch, p, n) "
        "by the implicit Hari-Zimmermann method, each matrix column-major (read in place), on the "
        "CPU or, with device, on that CUDA device. Returns a dict: 'sigma_f', 'sigma_g' (batch, "
        "n), with compute_vectors 'u' (batch, n, m), 'v' (batch, n, p), 'x' (batch, n, n) (the "
        "library's column-major U, V, X), and 'stats' (sweeps, transformations, "
        "proper_transformations, converged per pair); progress (CPU) is called with (matrix, "
        "sweep, max_sweeps, transformations) after every sweep. Use shiftop.gsvd().");
}

// ---- the regularisation path ----------------------------------------------------------------

using KernelArray = nb::ndarray<const double, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
using MatrixArray = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using VectorArray = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// A RegularizationPath with the shape Python needs to check its arguments.
class PyRegPath {
 public:
  PyRegPath(const KernelArray& first_column, const std::optional<KernelArray>& first_row,
            const MatrixArray& data, double mass, int time_derivative, double time_weight,
            const std::optional<MatrixArray>& laplacian, double space_weight, int threads,
            std::optional<int> device, const std::string& variant, const std::string& strategy) {
    const Shape shape{static_cast<index_t>(first_column.shape(0)),
                      static_cast<index_t>(first_column.shape(1)),
                      static_cast<index_t>(first_column.shape(2))};
    std::span<const double> row;
    if (first_row) {
      require(first_row->shape(0) == first_column.shape(0) &&
                  first_row->shape(1) == first_column.shape(1) &&
                  first_row->shape(2) == first_column.shape(2),
              "first_row must have the kernels' shape (Nd, Nm, Nt) = {}, got ({}, {}, {})",
              shape.str(), first_row->shape(0), first_row->shape(1), first_row->shape(2));
      row = {first_row->data(), first_row->size()};
    }
    inverse::Regulariser reg;
    reg.mass = mass;
    reg.time_derivative = time_derivative;
    reg.time_weight = time_weight;
    reg.space_weight = space_weight;
    if (laplacian) {
      reg.laplacian.assign(laplacian->data(), laplacian->data() + laplacian->size());
      inverse::require_laplacian(reg.laplacian, shape.nm, "laplacian");  // named as Python names it
    }
    inverse::RegPathOptions options;
    options.threads = threads;
    options.gsvd = gsvd_options(true, variant, strategy, 0, threads, 0);
    if (device) {
      options.backend = Backend::Cuda;
      options.gpu.device = *device;
    }
    nb::gil_scoped_release unlocked;
    const CurrentDevice restore;
    path_ = std::make_unique<inverse::RegularizationPath>(
        std::span<const double>(first_column.data(), first_column.size()), row, shape, reg,
        std::span<const double>(data.data(), data.size()), options);
  }

  nb::dict evaluate(const VectorArray& alphas) const {
    std::vector<inverse::PathPoint> points;
    {
      nb::gil_scoped_release unlocked;
      points = path_->evaluate({alphas.data(), alphas.size()});
    }
    const std::size_t k = points.size();
    std::vector<double> a(k), residual(k), seminorm(k), gcv(k);
    for (std::size_t i = 0; i < k; ++i) {
      a[i] = points[i].alpha;
      residual[i] = points[i].residual_norm;
      seminorm[i] = points[i].seminorm;
      gcv[i] = points[i].gcv;
    }
    nb::dict out;
    out["alphas"] = owned_array<double, 1>(std::move(a), {k});
    out["residual_norms"] = owned_array<double, 1>(std::move(residual), {k});
    out["seminorms"] = owned_array<double, 1>(std::move(seminorm), {k});
    out["gcv"] = owned_array<double, 1>(std::move(gcv), {k});
    if (k > 0) {
      out["gcv_choice"] = inverse::gcv_choice(points);
      out["lcurve_corner"] = inverse::lcurve_corner(points);
    }
    return out;
  }

  nb::ndarray<nb::numpy, double> solve(double alpha) const {
    std::vector<double> m;
    {
      nb::gil_scoped_release unlocked;
      m = path_->solve(alpha);
    }
    const Shape& s = path_->shape();
    return owned_array<double, 2>(std::move(m),
                                  {static_cast<std::size_t>(s.nm), static_cast<std::size_t>(s.nt)});
  }

  nb::ndarray<nb::numpy, double> generalized_values(std::int64_t w) const {
    const Shape& s = path_->shape();
    require(w >= 0 && w <= s.nt, "w: expected a frequency index 0..{} (Nt), got {}", s.nt, w);
    std::vector<double> values = path_->generalized_values(static_cast<index_t>(w));
    const std::size_t k = values.size();
    return owned_array<double, 1>(std::move(values), {k});
  }

  std::array<index_t, 3> shape() const {
    const Shape& s = path_->shape();
    return {s.nd, s.nm, s.nt};
  }

  nb::ndarray<nb::numpy, double> default_alphas() const {
    std::vector<double> alphas = path_->default_alphas();
    const std::size_t k = alphas.size();
    return owned_array<double, 1>(std::move(alphas), {k});
  }

 private:
  std::unique_ptr<inverse::RegularizationPath> path_;
};

}  // namespace

void bind_gsvd(nb::module_& m) {
  def_gsvd_batched<double>(m);
  def_gsvd_batched<std::complex<double>>(m);
  nb::class_<PyRegPath>(m, "RegularizationPath",
                        "The circulant-embedded Tikhonov path (inverse/regpath.hpp). Use "
                        "shiftop.regpath().")
      .def(nb::init<const KernelArray&, const std::optional<KernelArray>&, const MatrixArray&,
                    double, int, double, const std::optional<MatrixArray>&, double, int,
                    std::optional<int>, const std::string&, const std::string&>(),
           "first_column"_a.noconvert(), "first_row"_a.noconvert().none(), "data"_a.noconvert(),
           nb::kw_only(), "mass"_a, "time_derivative"_a, "time_weight"_a,
           "laplacian"_a.noconvert().none(), "space_weight"_a, "threads"_a = 0,
           "device"_a = nb::none(), "variant"_a = "auto", "strategy"_a = "modmod")
      .def("evaluate", &PyRegPath::evaluate, "alphas"_a.noconvert(),
           "dict: alphas, residual_norms, seminorms, gcv (arrays), gcv_choice, lcurve_corner "
           "(indices)")
      .def("solve", &PyRegPath::solve, "alpha"_a, "The embedded Tikhonov solution (Nm, Nt).")
      .def("generalized_values", &PyRegPath::generalized_values, "w"_a,
           "sigma_f / sigma_g of frequency w (0..Nt), nonincreasing.")
      .def("default_alphas", &PyRegPath::default_alphas,
           "The weights of a path given none: 40 log-spaced over the generalized singular values "
           "(RegularizationPath::default_alphas, shared with the tool).")
      .def_prop_ro("shape", &PyRegPath::shape, "(Nd, Nm, Nt)");
}

}  // namespace shiftop::python
