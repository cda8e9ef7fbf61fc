// shiftop._core's CT half: the 2D fan-beam scanner (models/ct2d.hpp: Ct2dGeometry, its system
// matrix, the Shepp-Logan phantom, Poisson noise) and the MLEM, SIRT and CGLS reconstructions
// (circ/reconstruct.hpp) over a block-circulant operator of circ_bindings.cpp, with the GIL
// released. python/shiftop/ct.py wraps them.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "circ_arrays.hpp"
#include "result_arrays.hpp"
#include "shiftop/circ/operator.hpp"
#include "shiftop/circ/reconstruct.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/models/ct2d.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using History = std::vector<std::tuple<int, double, double, double>>;

/// Runs one reconstruction; `progress`, when not None, is called with each iteration's
/// (iteration, relative_residual, neg_log_likelihood, seconds), the GIL taken for it.
template <class T, class Method>
std::pair<nb::ndarray<nb::numpy, T, nb::ndim<1>>, History> reconstruct(
    Method method, circ::Operator<T>& c, Values<T> sinogram, int iterations, nb::object progress) {
  require(iterations >= 0, "iterations {}: expected a non-negative count", iterations);
  circ::ReconOptions o{.iterations = iterations, .progress = {}};
  if (!progress.is_none())
    // A handle, not an object: copies of the callback made with the GIL released must not
    // touch the reference count; `progress` outlives the call.
    o.progress = [callback = nb::handle(progress)](const circ::ReconProgress& p) {
      nb::gil_scoped_acquire locked;
      callback(p.iteration, p.relative_residual, p.neg_log_likelihood, p.seconds);
    };
  circ::ReconResult<T> result;
  {
    nb::gil_scoped_release unlocked;
    result = method(c, std::span<const T>(sinogram.data(), sinogram.size()), o);
  }
  History history;
  for (const circ::ReconProgress& p : result.history)
    history.emplace_back(p.iteration, p.relative_residual, p.neg_log_likelihood, p.seconds);
  return {owned_vector(std::move(result.image)), std::move(history)};
}

template <class T>
void bind_ct_type(nb::module_& m, const char* suffix) {
  const std::string suffix_text(suffix);
  m.def(("ct2d_system_matrix_" + suffix_text).c_str(),
        [](const models::ct2d::Geometry& g) {
          circ::FirstBlockRow<T> a;
          {
            nb::gil_scoped_release unlocked;
            a = models::ct2d::system_matrix<T>(g);
          }
          return csr_arrays(std::move(a));
        },
        "geometry"_a, "(indptr, indices, data) of the scanner's first block row A.");
  m.def(("mlem_" + suffix_text).c_str(),
        [](circ::Operator<T>& c, Values<T> b, int iterations, nb::object p) {
          return reconstruct<T>(&circ::mlem<T>, c, b, iterations, std::move(p));
        },
        "c"_a, "sinogram"_a.noconvert(), "iterations"_a, "progress"_a.none());
  m.def(("sirt_" + suffix_text).c_str(),
        [](circ::Operator<T>& c, Values<T> b, int iterations, nb::object p) {
          return reconstruct<T>(&circ::sirt<T>, c, b, iterations, std::move(p));
        },
        "c"_a, "sinogram"_a.noconvert(), "iterations"_a, "progress"_a.none());
  m.def(("cgls_" + suffix_text).c_str(),
        [](circ::Operator<T>& c, Values<T> b, int iterations, nb::object p) {
          return reconstruct<T>(&circ::cgls<T>, c, b, iterations, std::move(p));
        },
        "c"_a, "sinogram"_a.noconvert(), "iterations"_a, "progress"_a.none());
}

void bind_ct2d_scanner(nb::module_& m) {
  using models::ct2d::Geometry;
  nb::class_<Geometry>(m, "Ct2dGeometry",
                       "The 2D fan-beam scanner on a polar grid (models/ct2d.hpp).")
      .def(
          "__init__",
          [](Geometry* self, index_t positions, index_t rings, index_t sectors, index_t detectors,
             double radius, double source_distance) {
            new (self) Geometry{positions, rings, sectors, detectors, radius, source_distance};
            self->validate();
          },
          nb::kw_only(), "positions"_a, "rings"_a, "sectors"_a, "detectors"_a, "radius"_a,
          "source_distance"_a)
      .def_ro("positions", &Geometry::positions)
      .def_ro("rings", &Geometry::rings)
      .def_ro("sectors", &Geometry::sectors)
      .def_ro("detectors", &Geometry::detectors)
      .def_ro("radius", &Geometry::radius)
      .def_ro("source_distance", &Geometry::source_distance)
      .def_prop_ro(
          "block_shape",
          [](const Geometry& g) {
            const circ::Shape s = g.shape();
            return std::make_tuple(s.k, s.mb, s.nb);
          },
          "(k, mb, nb) of the system matrix.")
      .def("__str__", &Geometry::str);
  m.def(
      "ct2d_shepp_logan",
      [](const Geometry& g, int samples) {
        require(samples > 0, "samples {}: expected a positive count per direction", samples);
        return owned_vector(models::ct2d::shepp_logan(g, samples));
      },
      "geometry"_a, "samples"_a);
  m.def(
      "ct2d_to_cartesian",
      [](const Geometry& g, Values<double> image, index_t pixels) {
        require(pixels > 0, "pixels {}: expected a positive image size", pixels);
        return owned_vector(models::ct2d::to_cartesian(
            g, std::span<const double>(image.data(), image.size()), pixels));
      },
      "geometry"_a, "image"_a.noconvert(), "pixels"_a);
  m.def(
      "ct2d_poisson_noise",
      [](Values<double> mean, double counts, std::uint64_t seed) {
        return owned_vector(models::ct2d::poisson_noise(
            std::span<const double>(mean.data(), mean.size()), counts, seed));
      },
      "mean"_a.noconvert(), "counts"_a, "seed"_a);
}

}  // namespace

void bind_ct(nb::module_& m) {
  bind_ct2d_scanner(m);
  bind_ct_type<float>(m, "f32");
  bind_ct_type<double>(m, "f64");
}

}  // namespace shiftop::python
