// shiftop._core.Plan.time_apply: the seconds of repeated btt::Plan::apply calls on NumPy arrays,
// timed in C++ so that they exclude Python: what bench/python_overhead.py holds `op @ x` against
// (issue 14's target, Python overhead per apply at most 5% over the C++ call).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "shiftop/btt/op.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/core/error.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using InputArray = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using OutputArray = nb::ndarray<double, nb::c_contig, nb::device::cpu>;

std::vector<double> time_apply(btt::Plan& plan, const std::string& op_name, const InputArray& x,
                               OutputArray& y, index_t nrhs, int repetitions) {
  require(repetitions >= 1, "repetitions {}: expected at least 1", repetitions);
  const btt::Op op = parse_name<btt::Op>(op_name, "op");
  const std::span<const double> in(x.data(), x.size());
  const std::span<double> out(y.data(), y.size());
  std::vector<double> seconds;
  for (int k = 0; k < repetitions; ++k) {
    const auto start = std::chrono::steady_clock::now();
    plan.apply(op, in, out, nrhs);
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return seconds;
}

}  // namespace

void bind_timing(nb::module_& m) {
  nb::object plan = m.attr("Plan");
  plan.attr("time_apply") = nb::cpp_function(
      &time_apply, nb::is_method(), nb::scope(plan), nb::name("time_apply"), "op"_a,
      "x"_a.noconvert(), "y"_a.noconvert(), "nrhs"_a, "repetitions"_a,
      nb::call_guard<nb::gil_scoped_release>(),
      "Seconds of each of `repetitions` calls of apply(op, x, y, nrhs) on C-contiguous float64 "
      "NumPy arrays, timed in C++ (no Python between the clock readings).");
}

}  // namespace shiftop::python
