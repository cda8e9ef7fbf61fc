// shiftop._core.tune_precision: btt::tune_precision (shiftop/btt/tune.hpp) on a plan, its points as
// plain Python values; shiftop.tune (python/shiftop/tune.py) makes NumPy arrays of them.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/btt/tune.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using KernelArray = nb::ndarray<const double, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

std::span<const double> values(const std::optional<KernelArray>& a) {
  return a ? std::span<const double>(a->data(), a->size()) : std::span<const double>();
}

nb::dict tune(btt::Plan& plan, std::optional<KernelArray> first_column,
              std::optional<KernelArray> first_row, const std::vector<std::string>& ops,
              int repetitions, double kappa, int threads, int device) {
  btt::TuneOptions options;
  options.ops.clear();
  for (const std::string& op : ops)
    options.ops.push_back(parse_name<btt::Op>(op, "ops"));
  options.repetitions = repetitions;
  options.kappa = kappa;
  options.threads = threads;
  options.device = device;
  btt::TuneResult result;
  {
    nb::gil_scoped_release unlocked;
    result = btt::tune_precision(plan, values(first_column), values(first_row), options);
  }
  nb::dict out, by_op;
  out["kappa"] = result.kappa;
  for (const btt::OpTuning& tuning : result.ops) {
    nb::list precision, gemv_kernel, median_ms, relative_error, error_bound, pareto;
    for (const btt::TunePoint& p : tuning.points) {
      precision.append(p.precision);
      gemv_kernel.append(p.gemv_kernel);
      median_ms.append(p.milliseconds);
      relative_error.append(p.relative_error);
      error_bound.append(p.error_bound);
      pareto.append(p.pareto);
    }
    nb::dict entry;
    entry["precision"] = precision;
    entry["gemv_kernel"] = gemv_kernel;
    entry["median_ms"] = median_ms;
    entry["relative_error"] = relative_error;
    entry["error_bound"] = error_bound;
    entry["pareto"] = pareto;
    // The input as raw float64 bytes (NumPy: frombuffer), with no array type of its own here.
    entry["input"] = nb::bytes(reinterpret_cast<const char*>(tuning.input.data()),
                               tuning.input.size() * sizeof(double));
    const std::string_view name = name_of(tuning.op);
    by_op[nb::str(name.data(), name.size())] = entry;
  }
  out["ops"] = by_op;
  return out;
}

}  // namespace

void bind_tune(nb::module_& m) {
  m.def("tune_precision", &tune, "plan"_a, "first_column"_a.none(), "first_row"_a.none(), "ops"_a,
        "repetitions"_a, "kappa"_a, "threads"_a, "device"_a,
        "btt::tune_precision on `plan`: {'kappa': float, 'ops': {op: {'precision', "
        "'gemv_kernel', 'median_ms', 'relative_error', 'error_bound', 'pareto': lists, 'input': "
        "float64 bytes}}}. "
        "Use shiftop.tune.");
}

}  // namespace shiftop::python
