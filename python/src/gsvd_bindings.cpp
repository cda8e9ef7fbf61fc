// shiftop._core.gsvd_batched: the implicit Hari-Zimmermann GSVD of a batch of pairs
// (gsvd/gsvd.hpp, on the CPU or a GPU), with the GIL released. python/shiftop/gsvd.py wraps it as
// shiftop.gsvd().
//
// Layout: the NumPy batches F (batch, m, n) and G (batch, p, n) are read in place when each matrix
// is column-major (unit stride along its rows, a leading dimension >= its rows) and the matrices do
// not overlap; gsvd.py makes such a copy otherwise (the GSVD of the transposes is not the GSVD of
// the pair, so a C-order matrix cannot be read as it is). The returned U, V and X are the
// library's column-major buffers seen as C-order (batch, n, rows) arrays, i.e. their transposes:
// gsvd.py swaps the last two axes back without copying.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
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
#include "gsvd_options.hpp"
#include "result_arrays.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "sweep_callback.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

/// Where the library finds matrix b of a NumPy batch (batch, r, n): column-major r x n at
/// data + b * stride, leading dimension ld.
struct PairLayout {
  index_t ld = 0, stride = 0;
};

PairLayout column_major_layout(const char* name, index_t batch, index_t rows, index_t cols,
                               std::int64_t sb, std::int64_t sr, std::int64_t sc) {
  const bool column_major = (sr == 1 || rows == 1) && (cols == 1 || sc >= rows);
  require(column_major,
          "{}: each matrix must be column-major (Fortran order; got element strides ({}, {}, {}) "
          "for shape ({}, {}, {})): copy it with numpy.asfortranarray per matrix",
          name, sb, sr, sc, batch, rows, cols);
  PairLayout layout;
  layout.ld = cols == 1 ? rows : static_cast<index_t>(sc);
  layout.stride = layout.ld * cols;
  if (batch > 1) {
    require(sb >= layout.stride,
            "{}: the batch stride {} (elements) is smaller than one matrix ({} elements): the "
            "matrices overlap",
            name, sb, layout.stride);
    layout.stride = static_cast<index_t>(sb);
  }
  return layout;
}

template <class T>
using PairArray = nb::ndarray<const T, nb::ndim<3>, nb::device::cpu>;

nb::dict stats_arrays(const std::vector<svd::GsvdStats>& stats) {
  const std::size_t batch = stats.size();
  std::vector<std::int64_t> sweeps(batch), transformations(batch), proper(batch);
  std::vector<std::uint8_t> converged(batch);
  for (std::size_t b = 0; b < batch; ++b) {
    sweeps[b] = stats[b].sweeps;
    transformations[b] = stats[b].transformations;
    proper[b] = stats[b].proper_transformations;
    converged[b] = stats[b].converged ? 1 : 0;
  }
  nb::dict out;
  out["sweeps"] = owned_array<std::int64_t, 1>(std::move(sweeps), {batch});
  out["transformations"] = owned_array<std::int64_t, 1>(std::move(transformations), {batch});
  out["proper_transformations"] = owned_array<std::int64_t, 1>(std::move(proper), {batch});
  out["converged"] = owned_array<std::uint8_t, 1>(std::move(converged), {batch});
  return out;
}

template <class T>
nb::dict gsvd_batched(const PairArray<T>& f, const PairArray<T>& g, bool compute_vectors,
                      const std::string& variant, const std::string& strategy,
                      std::int64_t block_width, int threads, int max_sweeps,
                      std::optional<int> device, const nb::object& progress) {
  const auto batch = static_cast<index_t>(f.shape(0));
  const auto m = static_cast<index_t>(f.shape(1));
  const auto n = static_cast<index_t>(f.shape(2));
  const auto p = static_cast<index_t>(g.shape(1));
  require(static_cast<index_t>(g.shape(0)) == batch && static_cast<index_t>(g.shape(2)) == n,
          "g: expected shape ({}, p, {}) to match f ({}, {}, {}), got ({}, {}, {})", batch, n,
          batch, m, n, g.shape(0), g.shape(1), g.shape(2));
  require(batch > 0 && m > 0 && n > 0 && p > 0,
          "f, g: expected non-empty matrices, got shapes ({}, {}, {}) and ({}, {}, {})", batch, m,
          n, batch, p, n);
  const PairLayout lf =
      column_major_layout("f", batch, m, n, f.stride(0), f.stride(1), f.stride(2));
  const PairLayout lg =
      column_major_layout("g", batch, p, n, g.stride(0), g.stride(1), g.stride(2));
  svd::GsvdOptions options =
      gsvd_options(compute_vectors, variant, strategy, block_width, threads, max_sweeps);
  options.progress = sweep_callback(progress);

  svd::BatchedGsvdResult<T> result;
  {
    nb::gil_scoped_release unlocked;
    if (device) {
      const CurrentDevice restore;
      options.backend = Backend::Cuda;
      options.gpu.device = *device;
      result = svd::gsvd_hz_batched(f.data(), lf.ld, lf.stride, g.data(), lg.ld, lg.stride, batch,
                                    m, p, n, options);
    } else if (batch == 1) {
      // One pair: gsvd_hz's OpenMP level over the disjoint pairs of a step (section 3.3.1).
      svd::GsvdResult<T> one = svd::gsvd_hz(f.data(), m, lf.ld, g.data(), p, lg.ld, n, options);
      result.batch = 1;
      result.m = m;
      result.p = p;
      result.n = n;
      result.sigma_f = std::move(one.sigma_f);
      result.sigma_g = std::move(one.sigma_g);
      result.u = std::move(one.u);
      result.v = std::move(one.v);
      result.x = std::move(one.x);
      result.stats = {one.stats};
    } else {
      result = svd::gsvd_hz_batched(f.data(), lf.ld, lf.stride, g.data(), lg.ld, lg.stride, batch,
                                    m, p, n, options);
    }
  }
  const auto b = static_cast<std::size_t>(batch);
  const auto nn = static_cast<std::size_t>(n);
  nb::dict out;
  out["sigma_f"] = owned_array<svd::Real<T>, 2>(std::move(result.sigma_f), {b, nn});
  out["sigma_g"] = owned_array<svd::Real<T>, 2>(std::move(result.sigma_g), {b, nn});
  if (compute_vectors) {
    // Column-major rows x n is C-order (n, rows).
    out["u"] = owned_array<T, 3>(std::move(result.u), {b, nn, static_cast<std::size_t>(m)});
    out["v"] = owned_array<T, 3>(std::move(result.v), {b, nn, static_cast<std::size_t>(p)});
    out["x"] = owned_array<T, 3>(std::move(result.x), {b, nn, nn});
  }
  out["stats"] = stats_arrays(result.stats);
  return out;
}

template <class T>
void def_gsvd_batched(nb::module_& m) {
  m.def("gsvd_batched", &gsvd_batched<T>, "f"_a.noconvert(), "g"_a.noconvert(), nb::kw_only(),
        "compute_vectors"_a = false, "variant"_a = "auto", "strategy"_a = "modmod",
        "block_width"_a = 0, "threads"_a = 0, "max_sweeps"_a = 0, "device"_a = nb::none(),
        "progress"_a = nb::none(),
        "The GSVD of each pair (f[b], g[b]) of the 3-D arrays f (batch, m, n) and g (batch, p, n) "
        "by the implicit Hari-Zimmermann method, each matrix column-major (read in place), on the "
        "CPU or, with device, on that CUDA device. Returns a dict: 'sigma_f', 'sigma_g' (batch, "
        "n), with compute_vectors 'u' (batch, n, m), 'v' (batch, n, p), 'x' (batch, n, n) (the "
        "library's column-major U, V, X), and 'stats' (sweeps, transformations, "
        "proper_transformations, converged per pair); progress (CPU) is called with (matrix, "
        "sweep, max_sweeps, transformations) after every sweep. Use shiftop.gsvd().");
}

}  // namespace

void bind_gsvd(nb::module_& m) {
  def_gsvd_batched<double>(m);
  def_gsvd_batched<std::complex<double>>(m);
}

}  // namespace shiftop::python
