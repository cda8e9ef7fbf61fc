// shiftop._core's block-circulant half (issue 17): circ::Operator<float> and <double> as
// CircOperatorF32/F64, created from the CSR of the first block row A (int32 or int64 indices),
// applied to C-contiguous NumPy arrays with the GIL released; circ::assemble; the ct2d scanner;
// MLEM, SIRT and CGLS. python/shiftop/circ.py and ct.py wrap them (shapes, casts, locks).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "shiftop/circ/operator.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/circulant_file.hpp"
#include "shiftop/models/ct2d.hpp"
#include "shiftop/circ/reconstruct.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

template <class T>
using Values = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <class T>
using Mutable = nb::ndarray<T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

/// A new 1-D NumPy array that owns `values` (moved, not copied).
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> owned(std::vector<T>&& values) {
  auto* owner = new std::vector<T>(std::move(values));
  nb::capsule free(owner, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t size = owner->size();
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owner->data(), {size}, free);
}

circ::Options options(const std::string& backend, int device, const std::string& planning,
                      index_t max_rhs, int threads, const std::string& kernel, int maxpy_width,
                      const std::string& transpose) {
  circ::Options o;
  o.backend = parse_backend(backend, device, "backend", "device");
  o.planning = parse_name<Planning>(planning, "planning");
  require(max_rhs > 0, "max_rhs {}: expected a positive number of right-hand sides", max_rhs);
  o.max_rhs = max_rhs;
  o.cpu = {.threads = threads,
           .kernel = parse_name<circ::CpuKernel>(kernel, "kernel"),
           .maxpy_width = maxpy_width};
  o.gpu.device = device;
  o.gpu_engine.transpose = parse_name<circ::TransposeMethod>(transpose, "transpose");
  return o;
}

nb::dict choices_dict(const circ::Choices& c) {
  nb::dict out;
  out["backend"] = std::string(name_of(c.backend));
  out["cpu_kernel"] = std::string(name_of(c.cpu_kernel));
  out["maxpy_width"] = c.maxpy_width;
  out["transpose"] = std::string(name_of(c.transpose));
  out["probe"] = c.probe;
  out["summary"] = c.str();
  return out;
}

template <class T>
using Csr = std::tuple<nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>,
                       nb::ndarray<nb::numpy, std::int64_t, nb::ndim<1>>,
                       nb::ndarray<nb::numpy, T, nb::ndim<1>>>;

/// (indptr, indices, data) as NumPy arrays owning the row's vectors.
template <class T>
Csr<T> csr_arrays(circ::FirstBlockRow<T>&& a) {
  return {owned(std::move(a.indptr)), owned(std::move(a.indices)), owned(std::move(a.data))};
}

template <class T, class I>
circ::Operator<T> create(Values<I> indptr, Values<I> indices, Values<T> data, index_t k, index_t mb,
                         index_t nb, const circ::Options& o) {
  const circ::CsrView<T, I> view{std::span<const I>(indptr.data(), indptr.size()),
                                 std::span<const I>(indices.data(), indices.size()),
                                 std::span<const T>(data.data(), data.size())};
  return circ::Operator<T>::create({.k = k, .mb = mb, .nb = nb}, view, o);
}

/// An owned first block row from NumPy arrays (any index width), validated.
template <class T, class I>
circ::FirstBlockRow<T> first_block_row(Values<I> indptr, Values<I> indices, Values<T> data,
                                       index_t k, index_t mb, index_t nb) {
  circ::FirstBlockRow<T> a{.shape = {.k = k, .mb = mb, .nb = nb},
                           .indptr = {indptr.data(), indptr.data() + indptr.size()},
                           .indices = {indices.data(), indices.data() + indices.size()},
                           .data = {data.data(), data.data() + data.size()}};
  a.shape.validate();
  circ::validate(a.shape, a.view());
  return a;
}

/// The CSR of C from that of A (any index width), through the library's assemble.
template <class T, class I>
Csr<T> assemble(Values<I> indptr, Values<I> indices, Values<T> data, index_t k, index_t mb,
                index_t nb, std::int64_t max_entries) {
  const circ::FirstBlockRow<T> a = first_block_row(indptr, indices, data, k, mb, nb);
  circ::FirstBlockRow<T> c;
  {
    nb::gil_scoped_release unlocked;
    c = circ::assemble(a, max_entries);
  }
  return csr_arrays(std::move(c));
}

template <class T, class I>
void write(const std::string& path, Values<I> indptr, Values<I> indices, Values<T> data, index_t k,
           index_t mb, index_t nb, bool overwrite) {
  const circ::FirstBlockRow<T> a = first_block_row(indptr, indices, data, k, mb, nb);
  nb::gil_scoped_release unlocked;
  io::write_circulant(path, a, {.overwrite = overwrite, .overwrite_name = "overwrite=True"});
}

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
  return {owned(std::move(result.image)), std::move(history)};
}

template <class T>
void bind_operator_type(nb::module_& m, const char* name, const char* suffix) {
  using Op = circ::Operator<T>;
  nb::class_<Op>(m, name,
                 "A sparse block-circulant matrix C (circ::Operator), made from the CSR of its "
                 "first block row A (mb x k*nb). Low-level: shiftop.CirculantOperator wraps it.")
      .def_static(
          "create",
          [](Values<std::int32_t> indptr, Values<std::int32_t> indices, Values<T> data, index_t k,
             index_t mb, index_t nb, const std::string& backend, int device,
             const std::string& planning, index_t max_rhs, int threads, const std::string& kernel,
             int maxpy_width, const std::string& transpose) {
            const circ::Options o = options(backend, device, planning, max_rhs, threads, kernel,
                                            maxpy_width, transpose);
            nb::gil_scoped_release unlocked;
            return create<T>(indptr, indices, data, k, mb, nb, o);
          },
          "indptr"_a.noconvert(), "indices"_a.noconvert(), "data"_a.noconvert(), "k"_a, "mb"_a,
          "nb"_a, nb::kw_only(), "backend"_a = "cpu", "device"_a = 0, "planning"_a = "measure",
          "max_rhs"_a = circ::Options{}.max_rhs, "threads"_a = 0, "kernel"_a = "auto",
          "maxpy_width"_a = 0, "transpose"_a = "auto")
      .def_static(
          "create",
          [](Values<std::int64_t> indptr, Values<std::int64_t> indices, Values<T> data, index_t k,
             index_t mb, index_t nb, const std::string& backend, int device,
             const std::string& planning, index_t max_rhs, int threads, const std::string& kernel,
             int maxpy_width, const std::string& transpose) {
            const circ::Options o = options(backend, device, planning, max_rhs, threads, kernel,
                                            maxpy_width, transpose);
            nb::gil_scoped_release unlocked;
            return create<T>(indptr, indices, data, k, mb, nb, o);
          },
          "indptr"_a.noconvert(), "indices"_a.noconvert(), "data"_a.noconvert(), "k"_a, "mb"_a,
          "nb"_a, nb::kw_only(), "backend"_a = "cpu", "device"_a = 0, "planning"_a = "measure",
          "max_rhs"_a = circ::Options{}.max_rhs, "threads"_a = 0, "kernel"_a = "auto",
          "maxpy_width"_a = 0, "transpose"_a = "auto",
          "Validates the CSR of A (indptr mb+1, indices in [0, k*nb), finite data; int32 or "
          "int64 indices, C-contiguous) and prepares the products. backend 'cpu' or 'cuda'; "
          "planning 'measure' or 'estimate'; kernel 'auto', 'block-spmv', 'mm', 'mm2' or "
          "'mm2s' (CPU); transpose 'auto', 'index' or 'atomic' (GPU).")
      .def(
          "apply",
          [](Op& op, const std::string& which, Values<T> x, Mutable<T> y, index_t nrhs) {
            const circ::Op o = parse_name<circ::Op>(which, "op");
            nb::gil_scoped_release unlocked;
            op.apply(o, std::span<const T>(x.data(), x.size()), std::span<T>(y.data(), y.size()),
                     nrhs);
          },
          "op"_a, "x"_a.noconvert(), "y"_a.noconvert(), "nrhs"_a = 1,
          "y = op(C) x, op 'C' or 'Ct', for nrhs block-major vectors stored one after another in "
          "the flat C-contiguous arrays x and y (which must not overlap).")
      .def_prop_ro(
          "shape",
          [](const Op& op) { return std::make_tuple(op.shape().k, op.shape().mb, op.shape().nb); },
          "(k, mb, nb): k x k blocks of mb x nb.")
      .def_prop_ro("nnz", &Op::nnz, "Nonzeros of A.")
      .def_prop_ro("memory_bytes", &Op::memory_bytes,
                   "Bytes the operator holds: A's layout, the transposed index, workspaces.")
      .def_prop_ro(
          "choices", [](const Op& op) { return choices_dict(op.choices()); },
          "What creation chose: backend, cpu_kernel, maxpy_width, transpose, probe (name, "
          "median seconds) and a one-line summary.");

  const std::string suffix_text(suffix);
  m.def(("circ_assemble_" + suffix_text).c_str(), &assemble<T, std::int32_t>,
        "indptr"_a.noconvert(), "indices"_a.noconvert(), "data"_a.noconvert(), "k"_a, "mb"_a,
        "nb"_a, "max_entries"_a);
  m.def(("circ_assemble_" + suffix_text).c_str(), &assemble<T, std::int64_t>,
        "indptr"_a.noconvert(), "indices"_a.noconvert(), "data"_a.noconvert(), "k"_a, "mb"_a,
        "nb"_a, "max_entries"_a,
        "(indptr, indices, data) of C itself, (k*mb) x (k*nb), int64 indices, columns ascending "
        "(circ::assemble); refused above max_entries entries.");
  m.def(("circ_read_" + suffix_text).c_str(),
        [](const std::string& path) {
          circ::FirstBlockRow<T> a;
          {
            nb::gil_scoped_release unlocked;
            a = io::read_circulant<T>(path);
          }
          const circ::Shape shape = a.shape;
          return std::tuple_cat(csr_arrays(std::move(a)),
                                std::make_tuple(shape.k, shape.mb, shape.nb));
        },
        "path"_a, "(indptr, indices, data, k, mb, nb) of the circulant file at path.");
  m.def(("circ_write_" + suffix_text).c_str(), &write<T, std::int32_t>, "path"_a,
        "indptr"_a.noconvert(), "indices"_a.noconvert(), "data"_a.noconvert(), "k"_a, "mb"_a,
        "nb"_a, "overwrite"_a);
  m.def(("circ_write_" + suffix_text).c_str(), &write<T, std::int64_t>, "path"_a,
        "indptr"_a.noconvert(), "indices"_a.noconvert(), "data"_a.noconvert(), "k"_a, "mb"_a,
        "nb"_a, "overwrite"_a, "Validates A and writes it as a circulant HDF5 file, atomically.");
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
        [](Op& c, Values<T> b, int iterations, nb::object p) {
          return reconstruct<T>(&circ::mlem<T>, c, b, iterations, std::move(p));
        },
        "c"_a, "sinogram"_a.noconvert(), "iterations"_a, "progress"_a.none());
  m.def(("sirt_" + suffix_text).c_str(),
        [](Op& c, Values<T> b, int iterations, nb::object p) {
          return reconstruct<T>(&circ::sirt<T>, c, b, iterations, std::move(p));
        },
        "c"_a, "sinogram"_a.noconvert(), "iterations"_a, "progress"_a.none());
  m.def(("cgls_" + suffix_text).c_str(),
        [](Op& c, Values<T> b, int iterations, nb::object p) {
          return reconstruct<T>(&circ::cgls<T>, c, b, iterations, std::move(p));
        },
        "c"_a, "sinogram"_a.noconvert(), "iterations"_a, "progress"_a.none());
}

void bind_ct2d(nb::module_& m) {
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
        return owned(models::ct2d::shepp_logan(g, samples));
      },
      "geometry"_a, "samples"_a);
  m.def(
      "ct2d_to_cartesian",
      [](const Geometry& g, Values<double> image, index_t pixels) {
        require(pixels > 0, "pixels {}: expected a positive image size", pixels);
        return owned(models::ct2d::to_cartesian(
            g, std::span<const double>(image.data(), image.size()), pixels));
      },
      "geometry"_a, "image"_a.noconvert(), "pixels"_a);
  m.def(
      "ct2d_poisson_noise",
      [](Values<double> mean, double counts, std::uint64_t seed) {
        return owned(models::ct2d::poisson_noise(std::span<const double>(mean.data(), mean.size()),
                                                 counts, seed));
      },
      "mean"_a.noconvert(), "counts"_a, "seed"_a);
}

}  // namespace

void bind_circ(nb::module_& m) {
  m.def(
      "circ_inspect",
      [](const std::string& path) {
        const io::CirculantInfo info = io::inspect_circulant(path);
        nb::dict out;
        out["k"] = info.shape.k;
        out["mb"] = info.shape.mb;
        out["nb"] = info.shape.nb;
        out["nnz"] = info.nnz;
        out["value_type"] = info.value_type;
        out["index_bits"] = info.index_bits;
        out["stored_bytes"] = info.stored_bytes;
        return out;
      },
      "path"_a, "What a circulant file holds, from its attributes and dataset headers.");
  bind_operator_type<float>(m, "CircOperatorF32", "f32");
  bind_operator_type<double>(m, "CircOperatorF64", "f64");
  bind_ct2d(m);
}

}  // namespace shiftop::python
