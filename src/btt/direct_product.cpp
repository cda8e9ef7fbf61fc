#include "shiftop/btt/direct_product.hpp"

#include <omp.h>

#include <algorithm>

#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"

namespace shiftop::btt {
namespace {

void check_sizes(std::span<const double> kernels, const Shape& shape, std::size_t in,
                 index_t in_blocks, std::size_t out, index_t out_blocks) {
  shape.validate();
  require(static_cast<index_t>(kernels.size()) == shape.kernel_size(),
          "kernel array holds {} values, expected {}", kernels.size(), shape.kernel_size());
  require(static_cast<index_t>(in) == in_blocks * shape.nt,
          "input holds {} values, expected {} blocks of {}", in, in_blocks, shape.nt);
  require(static_cast<index_t>(out) == out_blocks * shape.nt,
          "output holds {} values, expected {} blocks of {}", out, out_blocks, shape.nt);
}

/// out block o = sum over the inner blocks b of accumulate(f_ob or f_bo, in block b), the output
/// blocks in parallel: F sums over the parameter blocks, F* over the observation blocks.
template <typename Accumulate>
void block_sums(std::span<const double> kernels, const Shape& shape, bool adjoint, const double* in,
                double* out, int threads, Accumulate&& accumulate) {
  const index_t nt = shape.nt;
  const index_t outer = adjoint ? shape.nm : shape.nd, inner = adjoint ? shape.nd : shape.nm;
  check_threads(threads, "direct product: threads");
  const int nthreads = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(nthreads) schedule(dynamic)
  for (index_t o = 0; o < outer; ++o) {
    double* y = out + o * nt;
    std::fill(y, y + nt, 0.0);
    for (index_t b = 0; b < inner; ++b) {
      const index_t i = adjoint ? b : o, j = adjoint ? o : b;
      accumulate(kernels.data() + (i * shape.nm + j) * nt, in + b * nt, y);
    }
  }
}

}  // namespace

void direct_product(std::span<const double> kernels, const Shape& shape, std::span<const double> m,
                    std::span<double> d, int threads) {
  check_sizes(kernels, shape, m.size(), shape.nm, d.size(), shape.nd);
  const index_t nt = shape.nt;
  block_sums(kernels, shape, false, m.data(), d.data(), threads,
             [nt](const double* f, const double* mj, double* di) {
               for (index_t s = 0; s < nt; ++s) {  // d_i[s + k] += f[k] m_j[s]: contiguous in k
                 const double ms = mj[s];
#pragma omp simd
                 for (index_t k = 0; k < nt - s; ++k)
                   di[s + k] += f[k] * ms;
               }
             });
}

void direct_adjoint_product(std::span<const double> kernels, const Shape& shape,
                            std::span<const double> d, std::span<double> m, int threads) {
  check_sizes(kernels, shape, d.size(), shape.nd, m.size(), shape.nm);
  const index_t nt = shape.nt;
  block_sums(kernels, shape, true, d.data(), m.data(), threads,
             [nt](const double* f, const double* di, double* mj) {
               for (index_t s = 0; s < nt; ++s) {  // m_j[s] = sum_k f[k] d_i[s + k]
                 double sum = 0;
#pragma omp simd reduction(+ : sum)
                 for (index_t k = 0; k < nt - s; ++k)
                   sum += f[k] * di[s + k];
                 mj[s] += sum;
               }
             });
}

}  // namespace shiftop::btt
