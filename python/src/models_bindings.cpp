// shiftop._core.Heat2d, Wave2d, smooth_source and add_relative_noise: the PDE models whose p2o
// maps are block Toeplitz (include/shiftop/models/), and the inputs of an inversion demo
// (models/inversion_inputs.hpp). python/shiftop/models.py wraps them as shiftop.models.heat2d()
// and wave2d(), which give the kernels of F, the geometry, a true source and noisy data.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/models/heat2d.hpp"
#include "shiftop/models/inversion_inputs.hpp"
#include "shiftop/models/wave2d.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using Vector = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using MutableVector = nb::ndarray<double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

/// A new NumPy array of `shape` that owns `values` (moved, not copied).
template <std::size_t N>
nb::ndarray<nb::numpy, double> owned_array(std::vector<double>&& values,
                                           const std::array<std::size_t, N>& shape) {
  auto* owner = new std::vector<double>(std::move(values));
  nb::capsule free(owner, [](void* p) noexcept { delete static_cast<std::vector<double>*>(p); });
  return nb::ndarray<nb::numpy, double>(owner->data(), N, shape.data(), free);
}

nb::ndarray<nb::numpy, double> vector_array(std::vector<double>&& values, index_t blocks,
                                            index_t nt) {
  return owned_array<2>(std::move(values),
                        {static_cast<std::size_t>(blocks), static_cast<std::size_t>(nt)});
}

/// The members Heat2d and Wave2d share through Grid2dModel: geometry, kernels, F and F^T by time
/// stepping (the reference that does not go through the FFT).
template <typename Model, typename Class>
void bind_grid_model(Class& cls) {
  cls.def_prop_ro("n", [](const Model& m) { return m.config().n; })
      .def_prop_ro("nt", [](const Model& m) { return m.config().nt; })
      .def_prop_ro(
          "dt", [](const Model& m) { return m.config().dt; }, "the PDE time step")
      .def_prop_ro("substeps", [](const Model& m) { return m.config().substeps; })
      .def_prop_ro("observation_interval", &Model::observation_interval,
                   "time between observations, substeps * dt")
      .def_prop_ro(
          "sources", [](const Model& m) { return m.config().sources; },
          "grid point of each parameter (row-major, p = row * n + col)")
      .def_prop_ro(
          "sensors", [](const Model& m) { return m.config().sensors; },
          "grid point of each observation (row-major)")
      .def_prop_ro("shape",
                   [](const Model& m) {
                     const Shape s = m.shape();
                     return std::make_tuple(s.nd, s.nm, s.nt);
                   })
      .def(
          "kernels",
          [](const Model& m) {
            const Shape s = m.shape();
            std::vector<double> k;
            {
              nb::gil_scoped_release unlocked;
              k = m.kernels();
            }
            return owned_array<3>(std::move(k),
                                  {static_cast<std::size_t>(s.nd), static_cast<std::size_t>(s.nm),
                                   static_cast<std::size_t>(s.nt)});
          },
          "The first block column, float64 (Nd, Nm, Nt), by Nd adjoint solves.")
      .def(
          "apply_forward",
          [](const Model& model, Vector m) {
            const Shape s = model.shape();
            std::vector<double> d(static_cast<std::size_t>(s.nd * s.nt));
            {
              nb::gil_scoped_release unlocked;
              model.apply_forward(std::span<const double>(m.data(), m.size()), d);
            }
            return vector_array(std::move(d), s.nd, s.nt);
          },
          "m"_a, "d = F m by forward time stepping; m (Nm, Nt) -> d (Nd, Nt).")
      .def(
          "apply_adjoint",
          [](const Model& model, Vector d) {
            const Shape s = model.shape();
            std::vector<double> m(static_cast<std::size_t>(s.nm * s.nt));
            {
              nb::gil_scoped_release unlocked;
              model.apply_adjoint(std::span<const double>(d.data(), d.size()), m);
            }
            return vector_array(std::move(m), s.nm, s.nt);
          },
          "d"_a, "m = F^T d by backward (adjoint) time stepping; d (Nd, Nt) -> m (Nm, Nt).");
}

}  // namespace

void bind_models(nb::module_& m) {
  nb::class_<models::Heat2d> heat(m, "Heat2d", "2D heat equation p2o map (models/heat2d.hpp).");
  heat.def(
          "__init__",
          [](models::Heat2d* self, index_t n, double kappa, double dt, index_t nt,
             std::vector<index_t> sources, std::vector<index_t> sensors, index_t substeps) {
            new (self) models::Heat2d({.n = n,
                                       .kappa = kappa,
                                       .dt = dt,
                                       .nt = nt,
                                       .sources = std::move(sources),
                                       .sensors = std::move(sensors),
                                       .substeps = substeps});
          },
          "n"_a, "kappa"_a, "dt"_a, "nt"_a, "sources"_a, "sensors"_a, "substeps"_a)
      .def_static("default_layout", &models::Heat2d::with_default_layout, "n"_a, "nsources"_a,
                  "nsensors"_a, "nt"_a, "substeps"_a)
      .def_prop_ro("kappa", [](const models::Heat2d& h) { return h.config().kappa; });
  bind_grid_model<models::Heat2d>(heat);

  nb::class_<models::Wave2d> wave(m, "Wave2d",
                                  "2D acoustic wave p2o map with a sponge (models/wave2d.hpp).");
  wave.def(
          "__init__",
          [](models::Wave2d* self, index_t n, double speed,
             const std::vector<std::pair<index_t, double>>& layers, double dt, index_t nt,
             std::vector<index_t> sources, std::vector<index_t> sensors, index_t substeps,
             index_t sponge_width, double sponge_damping) {
            std::vector<models::SpeedLayer> speed_layers;
            for (const auto& [first_row, layer_speed] : layers)
              speed_layers.push_back({.first_row = first_row, .speed = layer_speed});
            new (self) models::Wave2d({.n = n,
                                       .speed = speed,
                                       .layers = std::move(speed_layers),
                                       .dt = dt,
                                       .nt = nt,
                                       .sources = std::move(sources),
                                       .sensors = std::move(sensors),
                                       .substeps = substeps,
                                       .sponge_width = sponge_width,
                                       .sponge_damping = sponge_damping});
          },
          "n"_a, "speed"_a, "layers"_a, "dt"_a, "nt"_a, "sources"_a, "sensors"_a, "substeps"_a,
          "sponge_width"_a, "sponge_damping"_a)
      .def_static("default_layout", &models::Wave2d::with_default_layout, "n"_a, "nsources"_a,
                  "nsensors"_a, "nt"_a, "substeps"_a)
      .def_prop_ro("speed", [](const models::Wave2d& w) { return w.config().speed; })
      .def_prop_ro("layers",
                   [](const models::Wave2d& w) {
                     std::vector<std::pair<index_t, double>> layers;
                     for (const models::SpeedLayer& l : w.config().layers)
                       layers.emplace_back(l.first_row, l.speed);
                     return layers;
                   })
      .def_prop_ro("sponge_width", [](const models::Wave2d& w) { return w.config().sponge_width; })
      .def_prop_ro("sponge_damping",
                   [](const models::Wave2d& w) { return w.config().sponge_damping; })
      .def_prop_ro("max_speed", &models::Wave2d::max_speed);
  bind_grid_model<models::Wave2d>(wave);

  m.def(
      "smooth_source",
      [](const std::vector<index_t>& sources, index_t n, index_t nt) {
        return vector_array(models::smooth_source(sources, n, nt),
                            static_cast<index_t>(sources.size()), nt);
      },
      "sources"_a, "n"_a, "nt"_a,
      "The smooth true source (Nm, Nt) of `shiftop model --truth` (models/inversion_inputs.hpp).");
  m.def(
      "add_relative_noise",
      [](MutableVector data, double relative, std::uint64_t seed) {
        return models::add_relative_noise(std::span<double>(data.data(), data.size()), relative,
                                          seed);
      },
      "data"_a, "relative"_a, "seed"_a,
      "Adds Gaussian noise of `relative` times the RMS of `data` in place, as `shiftop model "
      "--data` does; returns its standard deviation.");
}

}  // namespace shiftop::python
