// Host memory as the data-space Hessian's dense space (dense_space.hpp): LAPACK's Cholesky
// (dpotrf, dtrtrs) and BLAS's DSYRK (multithreaded by the LAPACK/BLAS the build links) and
// OpenMP loops for the rest.
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/aligned_buffer.hpp"
#include "inverse/dense_space.hpp"
#include "shiftop/core/available_memory.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::inverse {
namespace {

// Loops shorter than this run on the calling thread: a parallel region costs more than they do.
constexpr std::ptrdiff_t kParallelFrom = std::ptrdiff_t{1} << 15;

class HostDenseSpace final : public DenseSpace {
 public:
  bool on_device() const override { return false; }

  double available_bytes() const override {
    const auto available = available_memory_bytes();
    return available ? static_cast<double>(*available) : std::numeric_limits<double>::max();
  }

  double cholesky_workspace_bytes(index_t) override { return 0; }

  SpaceVector allocate(std::size_t count, std::string_view what) override {
    require_available_memory(8.0 * static_cast<double>(count), what);
    auto buffer = std::make_shared<AlignedBuffer<double>>(count);
    return SpaceVector(std::shared_ptr<void>(buffer, buffer->data()), count);
  }

  void upload(std::span<const double> host, double* to) override {
    std::copy(host.begin(), host.end(), to);
  }
  void download(const double* from, std::span<double> host) override {
    std::copy(from, from + host.size(), host.begin());
  }
  void copy(const double* from, double* to, std::size_t count) override {
    std::copy(from, from + count, to);
  }
  void fill_zero(double* values, std::size_t count) override {
    const auto n = static_cast<std::ptrdiff_t>(count);
#pragma omp parallel for schedule(static) if (n >= kParallelFrom)
    for (std::ptrdiff_t k = 0; k < n; ++k)
      values[k] = 0;
  }
  void fill_unit_vectors(double* vectors, index_t length,
                         std::span<const index_t> positions) override {
    fill_zero(vectors, positions.size() * static_cast<std::size_t>(length));
    for (std::size_t r = 0; r < positions.size(); ++r)
      vectors[static_cast<index_t>(r) * length + positions[r]] = 1;
  }
  void gather(const double* vectors, index_t length, std::span<const index_t> positions,
              std::span<double> out) override {
    for (std::size_t r = 0; r < positions.size(); ++r)
      out[r] = vectors[static_cast<index_t>(r) * length + positions[r]];
  }
  void add_to_diagonal(double* a, index_t lda, index_t first, index_t count,
                       const double* values) override {
    for (index_t c = 0; c < count; ++c)
      a[c * lda + first + c] += values[first + c];
  }
  void axpy(double alpha, const double* x, double* y, std::size_t count) override {
    const auto n = static_cast<std::ptrdiff_t>(count);
#pragma omp parallel for schedule(static) if (n >= kParallelFrom)
    for (std::ptrdiff_t k = 0; k < n; ++k)
      y[k] += alpha * x[k];
  }

  void apply(btt::Plan& plan, btt::Op op, const double* x, double* y, index_t nrhs) override {
    const Shape& s = plan.shape();
    plan.apply(op, {x, static_cast<std::size_t>(nrhs * btt::input_blocks(op, s) * s.nt)},
               {y, static_cast<std::size_t>(nrhs * btt::output_blocks(op, s) * s.nt)}, nrhs);
  }
  void apply_prior(const Prior& prior, const double* x, double* y, index_t nrhs) override {
    const auto count = static_cast<std::size_t>(nrhs * prior.blocks() * prior.nt());
    prior.apply_covariance({x, count}, {y, count}, nrhs);
  }

  void scatter_reversed(const double* series, index_t count, index_t nm, index_t nt,
                        const double* scale, double* phi, index_t ld) override {
#pragma omp parallel for collapse(2) schedule(static) if (count * nm * nt >= kParallelFrom)
    for (index_t j = 0; j < nm; ++j)
      for (index_t r = 0; r < count; ++r) {
        const double* from = series + (r * nm + j) * nt + nt - 1;
        double* to = phi + j * ld + r * nt;
        for (index_t a = 0; a < nt; ++a)
          to[a] = scale[j] * from[-a];
      }
  }
  void syrk_lower(const double* a, index_t n, index_t k, double* c) override {
    cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, static_cast<int>(n), static_cast<int>(k),
                1.0, a, static_cast<int>(n), 0.0, c, static_cast<int>(n));
  }
  // Column t' of a block column needs column t'-1 done: the sweep runs over t' in order, each
  // column a contiguous run of rows, block columns in parallel.
  void diagonal_prefix_sum(double* a, index_t blocks, index_t nt) override {
    const index_t n = blocks * nt;
#pragma omp parallel for schedule(dynamic) if (n * n >= kParallelFrom)
    for (index_t bc = 0; bc < blocks; ++bc)
      for (index_t tc = 1; tc < nt; ++tc) {
        double* column = a + (bc * nt + tc) * n;
        const double* previous = column - n;
        for (index_t br = bc; br < blocks; ++br)
          for (index_t t = br == bc ? tc : 1; t < nt; ++t)
            column[br * nt + t] += previous[br * nt + t - 1];
      }
  }
  void copy_lower_to_upper(double* a, index_t n) override {
    constexpr index_t kTile = 64;  // tiles keep both the reads and the strided writes in cache
#pragma omp parallel for schedule(dynamic) if (n * n >= kParallelFrom)
    for (index_t c0 = 0; c0 < n; c0 += kTile)
      for (index_t r0 = c0; r0 < n; r0 += kTile)
        for (index_t c = c0; c < std::min(c0 + kTile, n); ++c)
          for (index_t r = std::max(r0, c + 1); r < std::min(r0 + kTile, n); ++r)
            a[r * n + c] = a[c * n + r];
  }

  void cholesky(double* a, index_t n) override {
    const lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', static_cast<lapack_int>(n), a,
                                           static_cast<lapack_int>(n));
    require(info >= 0, "LAPACKE_dpotrf rejected argument {} (n = {})", -info, n);
    if (info > 0) refuse_indefinite(info, n);
  }
  void triangular_solve(const double* factor, index_t n, double* b, index_t nrhs,
                        bool transpose) override {
    const lapack_int info =
        LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'L', transpose ? 'T' : 'N', 'N',
                       static_cast<lapack_int>(n), static_cast<lapack_int>(nrhs), factor,
                       static_cast<lapack_int>(n), b, static_cast<lapack_int>(n));
    require(info == 0, "LAPACKE_dtrtrs failed with info {} (n = {}, nrhs = {})", info, n, nrhs);
  }
  void gemm_transposed(const double* a, index_t rows, index_t cols, const double* x, double* y,
                       index_t nrhs) override {
#pragma omp parallel for schedule(static) if (rows * cols * nrhs >= kParallelFrom)
    for (index_t j = 0; j < cols; ++j) {
      const double* column = a + j * rows;
      for (index_t r = 0; r < nrhs; ++r) {
        const double* v = x + r * rows;
        double sum = 0;
        for (index_t i = 0; i < rows; ++i)
          sum += column[i] * v[i];
        y[r * cols + j] = sum;
      }
    }
  }
  void column_dots(const double* a, const double* b, index_t rows, index_t cols,
                   std::span<double> out) override {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelFrom)
    for (index_t j = 0; j < cols; ++j) {
      double sum = 0;
      for (index_t i = 0; i < rows; ++i)
        sum += a[j * rows + i] * b[j * rows + i];
      out[static_cast<std::size_t>(j)] = sum;
    }
  }
  void synchronize() override {}
};

}  // namespace

void refuse_indefinite(index_t minor, index_t n) {
  fail(
      "the data-space Hessian K = Gamma_noise + F Gamma_prior F* ({} x {}) is not positive "
      "definite: its leading minor of order {} is not (Cholesky failed); check that the noise "
      "variances are positive and the prior covariance is positive semi-definite",
      n, n, minor);
}

std::unique_ptr<DenseSpace> make_host_dense_space() {
  return std::make_unique<HostDenseSpace>();
}

}  // namespace shiftop::inverse
