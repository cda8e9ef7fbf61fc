// The Python module shiftop._core is bound one area per file: each python/src/<area>_bindings.cpp
// defines one bind_<area>() that module.cpp calls (the layout of issue 14's Python package).
#pragma once

#include <nanobind/nanobind.h>

namespace shiftop::python {

/// shiftop._core.Plan: the block Toeplitz operator (btt::Plan), held by std::shared_ptr.
void bind_operator(nanobind::module_& m);

}  // namespace shiftop::python
