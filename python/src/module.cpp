// shiftop._core: the compiled half of the Python package; python/shiftop/ wraps it in the
// NumPy-facing API (shiftop.Operator, ...).
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "shiftop/btt/op.hpp"
#include "shiftop/btt/pair.hpp"
#include "shiftop/circ/operator.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/enum_names.hpp"
#include "shiftop/core/error_type.hpp"
#include "shiftop/core/threads.hpp"
#include "shiftop/inverse/map_cg.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/strategy.hpp"

namespace nb = nanobind;

namespace {

template <class E>
nb::tuple names() {
  nb::list out;
  for (const std::string_view name : shiftop::names_of<E>())
    out.append(nb::str(name.data(), name.size()));
  return nb::tuple(out);
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "Compiled core of shiftop; use the wrappers in the shiftop package.";
  // Every shiftop::Error is a bad input or option (docs/architecture.md, "Errors and
  // conventions"): a ValueError subclass, so that callers can catch either.
  nb::exception<shiftop::Error>(m, "Error", PyExc_ValueError);
  m.def("hardware_threads", &shiftop::hardware_threads,
        "The hardware threads this process may run on (its CPU affinity mask): the most `threads` "
        "any shiftop function accepts.");
  // The names the bindings accept for each keyword argument that names a library enum (the
  // library's tables), for the Python layer's own checks and docstrings to be tested against.
  nb::dict enum_names;
  enum_names["op"] = names<shiftop::btt::Op>();
  enum_names["pair_op"] = names<shiftop::btt::PairOp>();
  enum_names["circ_op"] = names<shiftop::circ::Op>();
  enum_names["backend"] = names<shiftop::Backend>();
  enum_names["planning"] = names<shiftop::Planning>();
  enum_names["kernel"] = names<shiftop::circ::CpuKernel>();
  enum_names["transpose"] = names<shiftop::circ::TransposeMethod>();
  enum_names["variant"] = names<shiftop::svd::Variant>();
  enum_names["strategy"] = names<shiftop::svd::StrategyKind>();
  enum_names["preconditioner"] = names<shiftop::inverse::Preconditioner>();
  m.attr("enum_names") = enum_names;
  shiftop::python::bind_operator(m);
  shiftop::python::bind_device(m);
  shiftop::python::bind_timing(m);
  shiftop::python::bind_models(m);
  shiftop::python::bind_pair(m);
  shiftop::python::bind_inverse(m);
  shiftop::python::bind_data_space(m);
  shiftop::python::bind_svd(m);
  shiftop::python::bind_circ(m);
  shiftop::python::bind_ct(m);
  shiftop::python::bind_gsvd(m);
  shiftop::python::bind_regpath(m);
  shiftop::python::bind_tune(m);
}
