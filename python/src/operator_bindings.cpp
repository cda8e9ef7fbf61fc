// shiftop._core.Plan: btt::Plan held by std::shared_ptr (the layout of issue 14), created from
// kernels or read from any operator file the CLI reads (io/operator_file.hpp), applied to
// C-contiguous float64 NumPy arrays with the GIL released. shiftop.Operator
// (python/shiftop/operator.py) does the NumPy-side checks, casts and shapes.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "result_arrays.hpp"
#include "shiftop/btt/op.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/btt/recover_kernels.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/operator_file.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using btt::Plan;
using KernelArray = nb::ndarray<const double, nb::ndim<3>, nb::c_contig, nb::device::cpu>;
using InputArray = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using OutputArray = nb::ndarray<double, nb::c_contig, nb::device::cpu>;

btt::PlanOptions plan_options(const std::string& precision, const std::string& backend, int device,
                              index_t max_rhs, int threads, const std::string& planning) {
  btt::PlanOptions options;
  options.backend = shiftop::parse_backend(backend, device, "backend", "device");
  options.precision = precision;
  options.max_rhs = max_rhs;
  options.planning = parse_name<Planning>(planning, "planning");
  options.cpu.threads = threads;
  options.gpu.device = device;
  return options;
}

Shape kernel_shape(const KernelArray& kernels) {
  return {static_cast<index_t>(kernels.shape(0)), static_cast<index_t>(kernels.shape(1)),
          static_cast<index_t>(kernels.shape(2))};
}

std::shared_ptr<Plan> create(KernelArray kernels, std::optional<KernelArray> first_row,
                             const btt::PlanOptions& options) {
  const Shape shape = kernel_shape(kernels);
  const std::span<const double> column(kernels.data(), kernels.size());
  if (!first_row) return std::make_shared<Plan>(Plan::create(column, shape, options));
  require(kernel_shape(*first_row) == shape,
          "first_row must have the kernels' shape (Nd, Nm, Nt) = {}, got ({}, {}, {})", shape.str(),
          first_row->shape(0), first_row->shape(1), first_row->shape(2));
  const std::span<const double> row(first_row->data(), first_row->size());
  return std::make_shared<Plan>(Plan::create_general(column, row, shape, options));
}

std::shared_ptr<Plan> read(const std::string& path, bool allow_nonfinite,
                           const btt::PlanOptions& options) {
  const io::OperatorData a =
      io::read_operator(path, {.slice = {},
                               .allow_nonfinite = allow_nonfinite,
                               .allow_nonfinite_name = "allow_nonfinite=True"});
  if (a.triangular) return std::make_shared<Plan>(Plan::create(a.first_column, a.shape, options));
  return std::make_shared<Plan>(
      Plan::create_general(a.first_column, a.first_row, a.shape, options));
}

// The backend a plan runs on, from what it chose: only the CPU engine runs FFTW.
std::string backend_of(const Plan& plan) {
  return plan.choices().passes[0].transforms == btt::Transforms::Fftw ? "cpu" : "cuda";
}

nb::dict phase_times(const Plan& plan) {
  const btt::PhaseTimes times = plan.last_phase_times();
  nb::dict out;
  for (const auto& [phase, name] : EnumNames<btt::ApplyPhase>::table)
    out[nb::str(name.data(), name.size())] = times[phase];
  return out;
}

void apply(Plan& plan, const std::string& op_name, const InputArray& x, OutputArray& y,
           index_t nrhs) {
  const btt::Op op = parse_name<btt::Op>(op_name, "op");
  plan.apply(op, std::span<const double>(x.data(), x.size()), std::span<double>(y.data(), y.size()),
             nrhs);
}

// (K, first_row or None) as NumPy arrays (Nd, Nm, Nt) owning the recovered kernels.
nb::tuple recover_kernels(Plan& plan) {
  btt::Kernels k;
  {
    nb::gil_scoped_release unlocked;
    k = btt::recover_kernels(plan);
  }
  const std::array<std::size_t, 3> shape{static_cast<std::size_t>(k.shape.nd),
                                         static_cast<std::size_t>(k.shape.nm),
                                         static_cast<std::size_t>(k.shape.nt)};
  nb::object row = nb::none();
  if (!k.first_row.empty()) row = nb::cast(owned_array(std::move(k.first_row), shape));
  return nb::make_tuple(owned_array(std::move(k.first_column), shape), row);
}

constexpr const char* kPlanDoc =
    "A block Toeplitz operator F of (Nd*Nt) x (Nm*Nt), planned once and applied many times.\n\n"
    "Low-level: shiftop.Operator wraps it for NumPy users. Vectors are C-contiguous float64\n"
    "arrays in SOTI order [rhs][block][t].";

constexpr const char* kOptionsDoc =
    "precision: five letters S/D for pad, FFT, GEMV, IFFT, unpad; backend: 'cpu' or 'cuda';\n"
    "device: CUDA device index; max_rhs: right-hand sides per pass; threads: CPU threads\n"
    "(0: OpenMP's default); planning: 'measure' or 'estimate'.";

}  // namespace

void bind_operator(nb::module_& m) {
  nb::class_<Plan>(m, "Plan", kPlanDoc)
      .def_static(
          "create",
          [](KernelArray kernels, std::optional<KernelArray> first_row,
             const std::string& precision, const std::string& backend, int device, index_t max_rhs,
             int threads, const std::string& planning) {
            const auto options =
                plan_options(precision, backend, device, max_rhs, threads, planning);
            nb::gil_scoped_release unlocked;
            return create(std::move(kernels), std::move(first_row), options);
          },
          "kernels"_a.noconvert(), "first_row"_a.noconvert() = nb::none(), nb::kw_only(),
          "precision"_a = "DDDDD", "backend"_a = "cpu", "device"_a = 0, "max_rhs"_a = 16,
          "threads"_a = 0, "planning"_a = "measure",
          (std::string("Plans F from its first block column kernels[Nd, Nm, Nt] (float64, C "
                       "order) and, for a general block Toeplitz operator, its first block row "
                       "of the same shape.\n\n") +
           kOptionsDoc)
              .c_str())
      .def_static(
          "read",
          [](const std::string& path, bool allow_nonfinite, const std::string& precision,
             const std::string& backend, int device, index_t max_rhs, int threads,
             const std::string& planning) {
            const auto options =
                plan_options(precision, backend, device, max_rhs, threads, planning);
            nb::gil_scoped_release unlocked;
            return read(path, allow_nonfinite, options);
          },
          "path"_a, nb::kw_only(), "allow_nonfinite"_a = false, "precision"_a = "DDDDD",
          "backend"_a = "cpu", "device"_a = 0, "max_rhs"_a = 16, "threads"_a = 0,
          "planning"_a = "measure",
          (std::string("Reads an operator file the shiftop tool reads (shiftop .h5, an "
                       "FFTMatvec matrix directory, .npy kernels) and plans it.\n\n") +
           kOptionsDoc)
              .c_str())
      .def("apply", &apply, "op"_a, "x"_a.noconvert(), "y"_a.noconvert(), "nrhs"_a = 1,
           nb::call_guard<nb::gil_scoped_release>(),
           "y = op(F) x for nrhs vectors, op one of 'F', 'Fadj', 'FadjF', 'FFadj'; x and y are "
           "C-contiguous float64 arrays of nrhs*blocks*Nt values that do not overlap.")
      .def_prop_ro(
          "shape",
          [](const Plan& p) { return std::make_tuple(p.shape().nd, p.shape().nm, p.shape().nt); },
          "(Nd, Nm, Nt): observation blocks, parameter blocks, time steps.")
      .def_prop_rw(
          "precision", [](const Plan& p) { return p.precision().str(); },
          [](Plan& p, const std::string& text) { p.set_precision(text); },
          "The five-phase precision string, e.g. 'DDDDD' or 'DSSDD'.")
      .def_prop_ro("triangular", &Plan::triangular,
                   "True for a block lower-triangular operator (no first block row).")
      .def_prop_ro("backend", &backend_of, "'cpu' or 'cuda'.")
      .def_prop_ro("memory_bytes", &Plan::memory_bytes,
                   "Bytes held by the plan: F^ (and its FP32 copy), workspaces.")
      .def_prop_ro(
          "fft_length", [](const Plan& p) { return p.choices().fft_length; },
          "The length of the circulant embedding's FFTs.")
      .def_prop_ro("phase_times", &phase_times,
                   "Seconds per phase of the last apply: pad, fft, layout, gemv, ifft, unpad.")
      .def("recover_kernels", &recover_kernels,
           "(K, first_row or None), float64 arrays (Nd, Nm, Nt): the kernels the plan was made "
           "from, recovered from FP64 impulse responses (btt::recover_kernels), exact up to the "
           "FFT round trip's rounding. Uses the plan's workspaces, as apply does.");
}

}  // namespace shiftop::python
