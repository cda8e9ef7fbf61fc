// shiftop._core.GaussianNoise, Prior (DiagonalPrior, TimeSmoothingPrior, KernelPrior), Hessian and
// map_cg: the inverse-problem layer of include/shiftop/inverse/ (mixed-precision-block-toeplitz-
// matvec, section 2.2, eq. 4). Priors and plans are held by std::shared_ptr (the layout of issue
// 14). Arrays are C-contiguous float64 NumPy arrays in SOTI order; python/shiftop/inverse.py does
// the NumPy-side casts and shapes. Work runs with the GIL released; map_cg's progress callback
// takes it back.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/inverse/hessian.hpp"
#include "shiftop/inverse/map_cg.hpp"
#include "shiftop/inverse/noise.hpp"
#include "shiftop/inverse/prior.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using inverse::GaussianNoise;
using inverse::Prior;
using Input = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using Output = nb::ndarray<double, nb::c_contig, nb::device::cpu>;
using Kernels = nb::ndarray<const double, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

std::span<const double> in(const Input& x) {
  return {x.data(), x.size()};
}
std::span<double> out(Output& y) {
  return {y.data(), y.size()};
}

btt::PlanOptions prior_plan_options(const std::string& backend, int device, int threads) {
  btt::PlanOptions options;
  options.backend = parse_backend(backend, device, "backend", "device");
  options.planning = btt::Planning::Estimate;  // a prior's plan is small: (1,1,Nt) or (Nm,Nm,Nt)
  options.gpu.device = device;
  options.cpu.threads = threads;
  return options;
}

// The prior's x -> y method with the GIL released.
template <void (Prior::*Method)(std::span<const double>, std::span<double>, index_t) const>
void prior_method(const Prior& prior, const Input& x, Output& y, index_t nrhs) {
  nb::gil_scoped_release unlocked;
  (prior.*Method)(in(x), out(y), nrhs);
}

template <void (GaussianNoise::*Method)(std::span<const double>, std::span<double>, index_t) const>
void noise_method(const GaussianNoise& noise, const Input& x, Output& y, index_t nrhs) {
  nb::gil_scoped_release unlocked;
  (noise.*Method)(in(x), out(y), nrhs);
}

/// A new one-dimensional NumPy array that owns `values` (moved, not copied).
nb::ndarray<nb::numpy, double> owned_array(std::vector<double>&& values) {
  auto* owner = new std::vector<double>(std::move(values));
  nb::capsule free(owner, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  const std::size_t size = owner->size();
  return nb::ndarray<nb::numpy, double>(owner->data(), 1, &size, free);
}

nb::dict map_cg(inverse::Hessian& hessian, const Input& data, const Input& prior_mean,
                double tolerance, index_t max_iterations, const std::string& preconditioner,
                std::function<void(index_t, double)> callback, int threads) {
  inverse::MapCgOptions options;
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  options.preconditioner = parse_name<inverse::Preconditioner>(preconditioner, "preconditioner");
  options.threads = threads;
  if (callback) {
    options.progress = [&callback](index_t iteration, double residual) {
      nb::gil_scoped_acquire locked;
      callback(iteration, residual);
    };
  }
  inverse::MapCgResult result;
  {
    nb::gil_scoped_release unlocked;
    result = inverse::map_cg(hessian, in(data), in(prior_mean), options);
  }
  nb::dict d;
  d["m"] = owned_array(std::move(result.m));
  d["iterations"] = result.iterations;
  d["residual_history"] = owned_array(std::move(result.residual_history));
  d["converged"] = result.converged;
  d["setup_seconds"] = result.setup_seconds;
  d["iteration_seconds"] = result.iteration_seconds;
  return d;
}

}  // namespace

void bind_inverse(nb::module_& m) {
  nb::class_<GaussianNoise>(m, "GaussianNoise",
                            "Gamma_noise = diag(variances) (one per sensor) kron I_Nt.")
      .def(nb::init<std::vector<double>, index_t>(), "variances"_a, "nt"_a)
      .def_prop_ro("blocks", &GaussianNoise::blocks)
      .def_prop_ro("nt", &GaussianNoise::nt)
      .def_prop_ro("variances", &GaussianNoise::variances)
      .def("apply", &noise_method<&GaussianNoise::apply>, "x"_a, "y"_a, "nrhs"_a)
      .def("apply_inverse", &noise_method<&GaussianNoise::apply_inverse>, "x"_a, "y"_a, "nrhs"_a)
      .def("apply_sqrt", &noise_method<&GaussianNoise::apply_sqrt>, "x"_a, "y"_a, "nrhs"_a);

  nb::class_<Prior>(m, "Prior", "A Gaussian prior covariance, shift-invariant in time.")
      .def_prop_ro("blocks", &Prior::blocks)
      .def_prop_ro("nt", &Prior::nt)
      .def_prop_ro("name", &Prior::name)
      .def_prop_ro("has_precision", &Prior::has_precision)
      .def_prop_ro("has_sqrt", &Prior::has_sqrt)
      .def_prop_ro("has_circulant_spectrum", &Prior::has_circulant_spectrum)
      .def("apply_covariance", &prior_method<&Prior::apply_covariance>, "x"_a, "y"_a, "nrhs"_a)
      .def("apply_precision", &prior_method<&Prior::apply_precision>, "x"_a, "y"_a, "nrhs"_a)
      .def("apply_sqrt", &prior_method<&Prior::apply_sqrt>, "x"_a, "y"_a, "nrhs"_a)
      .def("circulant_spectrum", &Prior::circulant_spectrum, "length"_a);

  nb::class_<inverse::DiagonalPrior, Prior>(m, "DiagonalPrior")
      .def(nb::init<std::vector<double>, index_t>(), "variances"_a, "nt"_a);
  nb::class_<inverse::TimeSmoothingPrior, Prior>(m, "TimeSmoothingPrior")
      .def(
          "__init__",
          [](inverse::TimeSmoothingPrior* self, std::vector<double> variances, double steps,
             index_t nt, const std::string& backend, int device, int threads) {
            new (self) inverse::TimeSmoothingPrior(std::move(variances), steps, nt,
                                                   prior_plan_options(backend, device, threads));
          },
          "variances"_a, "correlation_steps"_a, "nt"_a, nb::kw_only(), "backend"_a = "cpu",
          "device"_a = 0, "threads"_a = 0)
      .def_prop_ro("rho", &inverse::TimeSmoothingPrior::rho)
      .def_prop_ro("correlation_steps", &inverse::TimeSmoothingPrior::correlation_steps);
  nb::class_<inverse::KernelPrior, Prior>(m, "KernelPrior")
      .def(
          "__init__",
          [](inverse::KernelPrior* self, Kernels kernels, const std::string& backend, int device,
             int threads) {
            const Shape shape{static_cast<index_t>(kernels.shape(0)),
                              static_cast<index_t>(kernels.shape(1)),
                              static_cast<index_t>(kernels.shape(2))};
            new (self) inverse::KernelPrior({kernels.data(), kernels.size()}, shape,
                                            prior_plan_options(backend, device, threads));
          },
          "kernels"_a.noconvert(), nb::kw_only(), "backend"_a = "cpu", "device"_a = 0,
          "threads"_a = 0);

  nb::class_<inverse::Hessian>(
      m, "Hessian", "H = F* Gamma_noise^-1 F + Gamma_prior^-1 (the posterior precision).")
      .def(
          "__init__",
          [](inverse::Hessian* self, std::shared_ptr<btt::Plan> plan, const GaussianNoise& noise,
             std::shared_ptr<Prior> prior) {
            new (self) inverse::Hessian(std::move(plan), noise, std::move(prior));
          },
          "plan"_a, "noise"_a, "prior"_a)
      .def_prop_ro("size", &inverse::Hessian::size)
      .def(
          "apply",
          [](inverse::Hessian& h, const Input& x, Output& y, index_t nrhs) {
            nb::gil_scoped_release unlocked;
            h.apply(in(x), out(y), nrhs);
          },
          "x"_a, "y"_a, "nrhs"_a)
      .def(
          "apply_misfit",
          [](inverse::Hessian& h, const Input& x, Output& y, index_t nrhs) {
            nb::gil_scoped_release unlocked;
            h.apply_misfit(in(x), out(y), nrhs);
          },
          "x"_a, "y"_a, "nrhs"_a);

  m.def("map_cg", &map_cg, "hessian"_a, "data"_a, "prior_mean"_a, "tolerance"_a, "max_iterations"_a,
        "preconditioner"_a, "callback"_a.none(), "threads"_a = 0,
        "The MAP point by PCG (include/shiftop/inverse/map_cg.hpp); returns a dict with m, "
        "iterations, residual_history, converged, setup_seconds, iteration_seconds.");
}

}  // namespace shiftop::python
