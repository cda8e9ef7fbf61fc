// shiftop._core.RegularizationPath: the Tikhonov regularisation path of a block Toeplitz problem
// (inverse/regpath.hpp) for all weights at once, one GSVD per frequency on the CPU or a GPU, with
// the GIL released. python/shiftop/regpath.py wraps it as shiftop.regpath().
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "current_device.hpp"
#include "gsvd_options.hpp"
#include "result_arrays.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/inverse/regpath.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

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
      const std::optional<std::size_t> corner = inverse::lcurve_corner(points);
      out["lcurve_corner"] = corner ? nb::object(nb::int_(*corner)) : nb::none();
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

void bind_regpath(nb::module_& m) {
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
