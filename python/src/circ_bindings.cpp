// shiftop._core's block-circulant operator: circ::Operator<float> and <double> as
// CircOperatorF32/F64, created from the CSR of the first block row A (int32 or int64 indices),
// applied to C-contiguous NumPy arrays with the GIL released; circ::assemble; circulant files.
// python/shiftop/circ.py wraps them (shapes, casts, locks); ct_bindings.cpp binds the CT scanner
// and the reconstructions over them.
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
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "circ_arrays.hpp"
#include "result_arrays.hpp"
#include "shiftop/circ/operator.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/circulant_file.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

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
}

}  // namespace shiftop::python
