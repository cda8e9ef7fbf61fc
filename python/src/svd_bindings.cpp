// shiftop._core.jacobi_batched, jacobi_batched_device and spectrum: the one-sided Jacobi (H)SVD of
// a batch of matrices (svd/jacobi.hpp; on a GPU svd/jacobi_gpu.hpp) and the spectrum of a block
// Toeplitz operator (svd/spectrum.hpp), with the GIL released. python/shiftop/svd.py wraps them as
// shiftop.svd() and shiftop.spectrum(). The GPU runs share one context per device
// (gpu::shared_context: the library's own for host arrays, held here for device arrays), and the
// caller's current CUDA device, which the context switches to, is restored afterwards.
//
// Layout: a NumPy batch (batch, r, c) is read in place. When each matrix is row-major (C order,
// stride 1 along c) it is the column-major c x r matrix A^T, which is what the library is given
// (no copy; svd.py swaps U and V back); when it is column-major (stride 1 along r) it is A itself.
// The returned U and V are the library's column-major buffers seen as C-order (batch, k, rows)
// arrays, i.e. U^T and V^T: svd.py turns them into u and vh without copying. Device arrays
// (jacobi_batched_device) come by address, contiguous, in the layout svd.py chose for them, and
// run on a plan kept per shape (gpu_plan_cache.hpp).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <array>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "current_device.hpp"
#include "gpu_plan_cache.hpp"
#include "result_arrays.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/gpu/context.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/jacobi_gpu.hpp"
#include "shiftop/svd/spectrum.hpp"
#include "shiftop/svd/strategy.hpp"
#include "sweep_callback.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

/// Where the library finds matrix b of a NumPy batch (batch, r, c): the column-major
/// rows x cols matrix at data + b * stride with leading dimension lda. transposed: the NumPy
/// matrices are row-major, so the library sees A^T (rows = c, cols = r).
struct BatchLayout {
  index_t rows = 0, cols = 0, lda = 0, stride = 0;
  bool transposed = false;
};

BatchLayout batch_layout(const std::array<index_t, 3>& shape,
                         const std::array<std::int64_t, 3>& strides, bool allow_transposed) {
  const auto [batch, r, c] = shape;
  const auto [sb, sr, sc] = strides;
  BatchLayout layout;
  if (sr == 1 && (c == 1 || sc >= r)) {  // column-major: A itself, r x c
    layout = {.rows = r, .cols = c, .lda = c == 1 ? r : sc, .stride = 0, .transposed = false};
  } else if (allow_transposed && sc == 1 && (r == 1 || sr >= c)) {  // row-major: A^T, c x r
    layout = {.rows = c, .cols = r, .lda = r == 1 ? c : sr, .stride = 0, .transposed = true};
  } else {
    fail(
        "a: each matrix must have unit stride along {} (got element strides ({}, {}, {}) for "
        "shape ({}, {}, {})): copy it with numpy.ascontiguousarray",
        allow_transposed ? "its rows or its columns" : "its columns (Fortran order)", sb, sr, sc,
        batch, r, c);
  }
  layout.stride = layout.lda * layout.cols;
  if (batch > 1) {
    require(sb >= layout.stride,
            "a: the batch stride {} (elements) is smaller than one matrix ({} elements): the "
            "matrices overlap; copy it with numpy.ascontiguousarray",
            sb, layout.stride);
    layout.stride = sb;
  }
  return layout;
}

template <class T>
using BatchArray = nb::ndarray<const T, nb::ndim<3>, nb::device::cpu>;

/// sweeps, rotations, proper_rotations, converged, rank: one entry per matrix.
nb::dict stats_arrays(const std::vector<svd::JacobiStats>& stats) {
  const std::size_t batch = stats.size();
  std::vector<std::int64_t> sweeps(batch), rotations(batch), proper(batch), rank(batch);
  std::vector<std::uint8_t> converged(batch);
  for (std::size_t b = 0; b < batch; ++b) {
    sweeps[b] = stats[b].sweeps;
    rotations[b] = stats[b].rotations;
    proper[b] = stats[b].proper_rotations;
    converged[b] = stats[b].converged ? 1 : 0;
    rank[b] = stats[b].rank;
  }
  nb::dict out;
  out["sweeps"] = owned_array<std::int64_t, 1>(std::move(sweeps), {batch});
  out["rotations"] = owned_array<std::int64_t, 1>(std::move(rotations), {batch});
  out["proper_rotations"] = owned_array<std::int64_t, 1>(std::move(proper), {batch});
  out["converged"] = owned_array<std::uint8_t, 1>(std::move(converged), {batch});
  out["rank"] = owned_array<std::int64_t, 1>(std::move(rank), {batch});
  return out;
}

svd::JacobiOptions jacobi_options(bool compute_uv, std::int64_t n_plus, const std::string& variant,
                                  const std::string& strategy, double rank_tolerance) {
  svd::JacobiOptions options;
  options.compute_u = compute_uv;
  options.compute_v = compute_uv;
  options.n_plus = n_plus >= 0 ? static_cast<index_t>(n_plus) : -1;
  options.variant = parse_name<svd::Variant>(variant, "variant");
  options.strategy = parse_name<svd::StrategyKind>(strategy, "strategy");
  options.rank_tolerance = rank_tolerance;
  return options;
}

template <class T>
nb::dict jacobi_batched(const BatchArray<T>& a, bool compute_uv, std::int64_t n_plus,
                        const std::string& variant, const std::string& strategy,
                        double rank_tolerance, int threads, std::optional<int> device,
                        const nb::object& progress) {
  const std::array<index_t, 3> shape{static_cast<index_t>(a.shape(0)),
                                     static_cast<index_t>(a.shape(1)),
                                     static_cast<index_t>(a.shape(2))};
  const std::array<std::int64_t, 3> strides{a.stride(0), a.stride(1), a.stride(2)};
  require(shape[0] > 0 && shape[1] > 0 && shape[2] > 0,
          "a: expected non-empty matrices, got shape ({}, {}, {})", shape[0], shape[1], shape[2]);
  // The hyperbolic SVD of A^T is not that of A (J acts on A's columns): no transposed view.
  const bool hyperbolic = n_plus >= 0;
  const BatchLayout layout = batch_layout(shape, strides, !hyperbolic);
  svd::JacobiOptions options =
      jacobi_options(compute_uv, n_plus, variant, strategy, rank_tolerance);
  require(threads >= 0, "threads: expected 0 (OpenMP's default) or a positive count, got {}",
          threads);
  options.threads = threads;
  options.progress = sweep_callback(progress);

  svd::BatchedJacobiResult<T> result;
  {
    nb::gil_scoped_release unlocked;
    std::optional<CurrentDevice> restore;
    if (device) {
      restore.emplace();
      options.backend = Backend::Cuda;
      options.gpu.device = *device;
    }
    result = svd::jacobi_batched(a.data(), shape[0], layout.rows, layout.cols, layout.lda,
                                 layout.stride, options);
  }
  const auto batch = static_cast<std::size_t>(shape[0]);
  const std::size_t k = result.sigma.size() / batch;
  nb::dict out;
  out["transposed"] = layout.transposed;
  out["sigma"] = owned_array<svd::Real<T>, 2>(std::move(result.sigma), {batch, k});
  if (compute_uv) {
    // Column-major rows x k (U) and cols x kv (V) are C-order (k, rows) and (kv, cols).
    const std::size_t rows = static_cast<std::size_t>(layout.rows);
    const std::size_t cols = static_cast<std::size_t>(layout.cols);
    const std::size_t kv = result.v.size() / (batch * cols);
    out["u"] = owned_array<T, 3>(std::move(result.u), {batch, k, rows});
    out["v"] = owned_array<T, 3>(std::move(result.v), {batch, kv, cols});
  }
  out["stats"] = stats_arrays(result.stats);
  return out;
}

// The batch of `batch` column-major rows x cols matrices at device address `a` (contiguous:
// lda = rows), the outputs at `sigma`, `u`, `v` (batch x rows x k and batch x cols x k, as the
// library writes them), all on GPU `device`, queued after the work on `stream` (a cudaStream_t)
// and that stream after the SVD's (Context::wait_for, signal).
template <class T>
nb::dict solve_device_batch(std::uintptr_t a, index_t batch, index_t rows, index_t cols,
                            std::uintptr_t sigma, std::uintptr_t u, std::uintptr_t v,
                            const svd::JacobiOptions& options, std::uintptr_t stream, int device) {
  const svd::DeviceJacobiOutput<T> out{.sigma = reinterpret_cast<svd::Real<T>*>(sigma),
                                       .u = reinterpret_cast<T*>(u),
                                       .v = reinterpret_cast<T*>(v)};
  std::vector<svd::JacobiStats> stats;
  {
    nb::gil_scoped_release unlocked;
    const CurrentDevice restore;
    const gpu::SharedContext held = gpu::shared_context(device);
    const gpu::Context& context = *held.context;
    // never destroyed, as the shared contexts (gpu/context.hpp): its plans' device memory must
    // not be freed by a static destructor after the CUDA runtime has shut down
    static auto* const plans = new GpuPlanCache<T>();
    const std::shared_ptr<svd::GpuPlan<T>> plan =
        plans->get(held.context, device, batch, rows, cols, options);
    auto* const user = reinterpret_cast<void*>(stream);
    context.wait_for(user);
    stats = plan->execute(reinterpret_cast<const T*>(a), rows, rows * cols, out);
    context.signal(user);
  }
  return stats_arrays(stats);
}

nb::dict jacobi_batched_device(const std::string& dtype, std::uintptr_t a, index_t batch,
                               index_t rows, index_t cols, std::uintptr_t sigma, std::uintptr_t u,
                               std::uintptr_t v, bool compute_uv, std::int64_t n_plus,
                               const std::string& variant, const std::string& strategy,
                               double rank_tolerance, std::uintptr_t stream, int device) {
  const svd::JacobiOptions options =
      jacobi_options(compute_uv, n_plus, variant, strategy, rank_tolerance);
  if (dtype == "float64")
    return solve_device_batch<double>(a, batch, rows, cols, sigma, u, v, options, stream, device);
  if (dtype == "float32")
    return solve_device_batch<float>(a, batch, rows, cols, sigma, u, v, options, stream, device);
  if (dtype == "complex128")
    return solve_device_batch<std::complex<double>>(a, batch, rows, cols, sigma, u, v, options,
                                                    stream, device);
  if (dtype == "complex64")
    return solve_device_batch<std::complex<float>>(a, batch, rows, cols, sigma, u, v, options,
                                                   stream, device);
  fail("dtype '{}': expected float32, float64, complex64 or complex128", dtype);
}

using KernelArray = nb::ndarray<const double, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

nb::dict spectrum(const KernelArray& first_column, const std::optional<KernelArray>& first_row,
                  double rank_tolerance, int threads, std::optional<int> device) {
  const Shape shape{static_cast<index_t>(first_column.shape(0)),
                    static_cast<index_t>(first_column.shape(1)),
                    static_cast<index_t>(first_column.shape(2))};
  std::span<const double> row;
  if (first_row) {
    require(first_row->shape(0) == first_column.shape(0) &&
                first_row->shape(1) == first_column.shape(1) &&
                first_row->shape(2) == first_column.shape(2),
            "first_row must have the kernels' shape (Nd, Nm, Nt) = {}, got ({}, {}, {})",
            shape.str(), first_row->shape(0), first_row->shape(1), first_row->shape(2));
    row = {first_row->data(), first_row->size()};
  }
  require(rank_tolerance >= 0.0,
          "rank_tolerance: expected 0 (the default max(Nd, Nm) * eps) or a positive relative "
          "tolerance, got {}",
          rank_tolerance);
  require(threads >= 0, "threads: expected 0 (OpenMP's default) or a positive count, got {}",
          threads);
  svd::SpectrumOptions options;
  options.rank_tolerance = rank_tolerance;
  options.threads = threads;
  if (device) {
    options.backend = Backend::Cuda;
    options.gpu.device = *device;
  }
  svd::Spectrum s;
  {
    nb::gil_scoped_release unlocked;
    std::optional<CurrentDevice> restore;
    if (device) restore.emplace();
    s = svd::spectrum({first_column.data(), first_column.size()}, row, shape, options);
  }
  nb::dict out;
  out["sigma"] = owned_array<double, 2>(
      std::move(s.sigma),
      {static_cast<std::size_t>(s.frequencies), static_cast<std::size_t>(s.per_frequency)});
  out["sigma_max"] = s.sigma_max;
  out["sigma_min"] = s.sigma_min;
  out["kappa"] = s.kappa;
  out["rank_tolerance"] = s.rank_tolerance;
  out["rank"] = s.rank;
  out["max_sweeps"] = s.max_sweeps;
  out["converged"] = s.converged;
  return out;
}

template <class T>
void def_jacobi_batched(nb::module_& m) {
  m.def("jacobi_batched", &jacobi_batched<T>, "a"_a.noconvert(), nb::kw_only(),
        "compute_uv"_a = true, "n_plus"_a = -1, "variant"_a = "auto",
        "strategy"_a = "rc-closest-rev", "rank_tolerance"_a = 0.0, "threads"_a = 0,
        "device"_a = nb::none(), "progress"_a = nb::none(),
        "The one-sided Jacobi SVD (n_plus >= 0: the hyperbolic SVD) of each matrix of a 3-D array "
        "(batch, r, c), read in place when each matrix has unit stride along its rows or columns "
        "(column-major only for the hyperbolic SVD), on the CPU or, with device, on that CUDA "
        "device (copied there and back). Returns a dict: 'transposed' (True when the "
        "library was given the c x r matrices A^T), 'sigma' (batch, k), and with compute_uv "
        "'u' (batch, k, rows) and 'v' (batch, kv, cols), the library's column-major U and V of "
        "what it was given, and 'stats' (sweeps, rotations, proper_rotations, converged, rank "
        "per matrix); progress (CPU) is called with (matrix, sweep, max_sweeps, rotations) after "
        "every sweep. Use shiftop.svd().");
}

}  // namespace

void bind_svd(nb::module_& m) {
  def_jacobi_batched<double>(m);
  def_jacobi_batched<float>(m);
  def_jacobi_batched<std::complex<double>>(m);
  def_jacobi_batched<std::complex<float>>(m);
  m.def("jacobi_batched_device", &jacobi_batched_device, "dtype"_a, "a"_a, "batch"_a, "rows"_a,
        "cols"_a, "sigma"_a, "u"_a, "v"_a, nb::kw_only(), "compute_uv"_a, "n_plus"_a, "variant"_a,
        "strategy"_a, "rank_tolerance"_a, "stream"_a, "device"_a,
        "The Jacobi SVD on GPU `device` of `batch` contiguous column-major rows x cols matrices "
        "of `dtype` at device address a; sigma (batch, k), u (batch, k, rows) and v "
        "(batch, k, cols) are the device addresses of C-order outputs (the library's "
        "column-major U and V; 0 without compute_uv), k = min(rows, cols). Ordered after the work "
        "on `stream` (a cudaStream_t as an integer) and that stream after it. Returns the "
        "statistics as jacobi_batched does. Low-level: use shiftop.svd().");
  m.def("spectrum", &spectrum, "first_column"_a.noconvert(), "first_row"_a.noconvert() = nb::none(),
        nb::kw_only(), "rank_tolerance"_a = 0.0, "threads"_a = 0, "device"_a = nb::none(),
        "The singular values of every F^[w] (w = 0..Nt) of the block Toeplitz operator with "
        "kernels first_column (Nd, Nm, Nt), float64, C order (and first_row for a general one); "
        "with device, the SVDs run on that CUDA device (F^ is formed on the CPU). "
        "Returns a dict: sigma (Nt+1, min(Nd, Nm)), sigma_max, sigma_min, kappa, rank_tolerance, "
        "rank, max_sweeps, converged. Use shiftop.spectrum() or Operator.spectrum().");
}

}  // namespace shiftop::python
