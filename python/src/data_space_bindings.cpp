// shiftop._core.DataSpaceHessian: the dense data-space Hessian K = Gamma_noise + F Gamma_prior F*
// with its Cholesky factor (include/shiftop/inverse/data_space_hessian.hpp), the offline/online
// split of the linear Gaussian inverse problem. Arrays are C-contiguous float64 NumPy arrays in
// SOTI order; python/shiftop/data_space.py does the NumPy-side casts and shapes. Work runs with
// the GIL released; the progress callback takes it back.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/inverse/data_space_hessian.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using inverse::DataSpaceHessian;
using Input = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using Output = nb::ndarray<double, nb::c_contig, nb::device::cpu>;
using Progress = std::function<void(const std::string&, index_t, index_t)>;

std::span<const double> in(const Input& x) {
  return {x.data(), x.size()};
}
std::span<double> out(Output& y) {
  return {y.data(), y.size()};
}

/// A new NumPy array of shape `shape` that owns `values` (moved, not copied).
nb::ndarray<nb::numpy, double> owned_array(std::vector<double>&& values,
                                           std::vector<std::size_t> shape) {
  auto* owner = new std::vector<double>(std::move(values));
  nb::capsule free(owner, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return nb::ndarray<nb::numpy, double>(owner->data(), shape.size(), shape.data(), free);
}

void construct(DataSpaceHessian* self, std::shared_ptr<btt::Plan> plan,
               const inverse::GaussianNoise& noise, std::shared_ptr<inverse::Prior> prior,
               std::shared_ptr<btt::Plan> qoi, const Input& prior_mean, index_t rhs_per_apply,
               int device, Progress progress) {
  inverse::DataSpaceHessianOptions options;
  options.rhs_per_apply = rhs_per_apply;
  options.prior_mean.assign(prior_mean.data(), prior_mean.data() + prior_mean.size());
  options.qoi = std::move(qoi);
  options.device = device;
  if (progress) {
    options.progress = [progress](const inverse::DataSpaceProgress& p) {
      nb::gil_scoped_acquire locked;
      progress(std::string(p.stage), p.done, p.total);
    };
  }
  nb::gil_scoped_release unlocked;
  new (self) DataSpaceHessian(std::move(plan), noise, std::move(prior), std::move(options));
}

std::vector<inverse::ParameterIndex> parameter_indices(const std::vector<index_t>& blocks,
                                                       const std::vector<index_t>& steps) {
  require(blocks.size() == steps.size(),
          "posterior_variance: {} blocks but {} time steps; expected one of each per entry",
          blocks.size(), steps.size());
  std::vector<inverse::ParameterIndex> indices(blocks.size());
  for (std::size_t k = 0; k < blocks.size(); ++k)
    indices[k] = {blocks[k], steps[k]};
  return indices;
}

}  // namespace

void bind_data_space(nb::module_& m) {
  nb::class_<DataSpaceHessian>(
      m, "DataSpaceHessian",
      "K = Gamma_noise + F Gamma_prior F* assembled and Cholesky-factored (offline); MAP points, "
      "QoI MAP points, posterior variances and samples from the factor (online).")
      .def("__init__", &construct, "plan"_a, "noise"_a, "prior"_a, "qoi"_a.none(), "prior_mean"_a,
           "rhs_per_apply"_a, "device"_a, "progress"_a.none())
      .def_prop_ro("size", &DataSpaceHessian::size)
      .def_prop_ro("qoi_blocks", &DataSpaceHessian::qoi_blocks)
      .def_prop_ro("on_device", &DataSpaceHessian::on_device)
      .def_prop_ro("memory_bytes", &DataSpaceHessian::memory_bytes)
      .def_prop_ro("times",
                   [](const DataSpaceHessian& h) {
                     nb::dict d;
                     d["assembly"] = h.times().assembly;
                     d["factor"] = h.times().factor;
                     d["qoi"] = h.times().qoi;
                     return d;
                   })
      .def("matrix",
           [](const DataSpaceHessian& h) {
             std::vector<double> k;
             {
               nb::gil_scoped_release unlocked;
               k = h.matrix();
             }
             const auto n = static_cast<std::size_t>(h.size());
             return owned_array(std::move(k), {n, n});
           })
      .def(
          "map_point",
          [](const DataSpaceHessian& h, const Input& d, Output& map, index_t nrhs) {
            nb::gil_scoped_release unlocked;
            h.map_point(in(d), out(map), nrhs);
          },
          "d"_a, "m"_a, "nrhs"_a)
      .def(
          "qoi_map",
          [](const DataSpaceHessian& h, const Input& d, Output& q, index_t nrhs) {
            nb::gil_scoped_release unlocked;
            h.qoi_map(in(d), out(q), nrhs);
          },
          "d"_a, "q"_a, "nrhs"_a)
      .def("qoi_variance",
           [](const DataSpaceHessian& h) {
             const auto v = h.qoi_variance();
             return owned_array(std::vector<double>(v.begin(), v.end()), {v.size()});
           })
      .def(
          "posterior_variance",
          [](const DataSpaceHessian& h, const std::vector<index_t>& blocks,
             const std::vector<index_t>& steps) {
            const auto indices = parameter_indices(blocks, steps);
            std::vector<double> v;
            {
              nb::gil_scoped_release unlocked;
              v = h.posterior_variance(indices);
            }
            const std::size_t size = v.size();
            return owned_array(std::move(v), {size});
          },
          "blocks"_a, "steps"_a)
      .def(
          "sample",
          [](const DataSpaceHessian& h, const Input& d, index_t count, std::uint64_t seed,
             Output& samples) {
            nb::gil_scoped_release unlocked;
            h.sample(in(d), count, seed, out(samples));
          },
          "d"_a, "count"_a, "seed"_a, "samples"_a)
      .def(
          "sample_from",
          [](const DataSpaceHessian& h, const Input& d, const Input& xi_parameter,
             const Input& xi_data, Output& samples, index_t count) {
            nb::gil_scoped_release unlocked;
            h.sample_from(in(d), in(xi_parameter), in(xi_data), out(samples), count);
          },
          "d"_a, "xi_parameter"_a, "xi_data"_a, "samples"_a, "count"_a)
      .def_static(
          "time_assembly",
          [](const std::shared_ptr<btt::Plan>& plan, const inverse::Prior& prior, index_t columns,
             index_t rhs_per_apply, int device) {
            nb::gil_scoped_release unlocked;
            return DataSpaceHessian::time_assembly(plan, prior, columns, rhs_per_apply, {}, device);
          },
          "plan"_a, "prior"_a, "columns"_a, "rhs_per_apply"_a, "device"_a = 0,
          "Seconds to push the first `columns` identity columns through F*, Gamma_prior and F "
          "in groups of rhs_per_apply, as the assembly does (bench/data_space_hessian.py).");
}

}  // namespace shiftop::python
