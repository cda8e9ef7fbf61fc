// shiftop._core: the compiled half of the Python package; python/shiftop/ wraps it in the
// NumPy-facing API (shiftop.Operator, ...).
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "shiftop/core/error_type.hpp"
#include "shiftop/core/threads.hpp"

namespace nb = nanobind;

NB_MODULE(_core, m) {
  m.doc() = "Compiled core of shiftop; use the wrappers in the shiftop package.";
  // Every shiftop::Error is a bad input or option (docs/architecture.md, "Errors and
  // conventions"): a ValueError subclass, so that callers can catch either.
  nb::exception<shiftop::Error>(m, "Error", PyExc_ValueError);
  m.def("hardware_threads", &shiftop::hardware_threads,
        "The hardware threads this process may run on (its CPU affinity mask): the most `threads` "
        "any shiftop function accepts.");
  shiftop::python::bind_operator(m);
  shiftop::python::bind_device(m);
  shiftop::python::bind_timing(m);
  shiftop::python::bind_models(m);
  shiftop::python::bind_pair(m);
  shiftop::python::bind_solve(m);
  shiftop::python::bind_data_space(m);
  shiftop::python::bind_svd(m);
  shiftop::python::bind_circ(m);
  shiftop::python::bind_gsvd(m);
  shiftop::python::bind_tune(m);
}
