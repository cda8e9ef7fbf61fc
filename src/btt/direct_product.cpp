#include "shiftop/btt/direct_product.hpp"

#include <omp.h>

#include <algorithm>

#include "shiftop/core/error.hpp"

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

}  // namespace

void direct_product(std::span<const double> kernels, const Shape& shape, std::span<const double> m,
                    std::span<double> d, int threads) {
  check_sizes(kernels, shape, m.size(), shape.nm, d.size(), shape.nd);
  const index_t nt = shape.nt;
  const int nthreads = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(nthreads) schedule(dynamic)
  for (index_t i = 0; i < shape.nd; ++i) {
    double* di = d.data() + i * nt;
    std::fill(di, di + nt, 0.0);
    for (index_t j = 0; j < shape.nm; ++j) {
      const double* f = kernels.data() + (i * shape.nm + j) * nt;
      const double* mj = m.data() + j * nt;
      for (index_t s = 0; s < nt; ++s) {  // d_i[s + k] += f[k] m_j[s]: contiguous in k
        const double ms = mj[s];
#pragma omp simd
        for (index_t k = 0; k < nt - s; ++k)
          di[s + k] += f[k] * ms;
      }
    }
  }
}

void direct_adjoint_product(std::span<const double> kernels, const Shape& shape,
                            std::span<const double> d, std::span<double> m, int threads) {
  check_sizes(kernels, shape, d.size(), shape.nd, m.size(), shape.nm);
  const index_t nt = shape.nt;
  const int nthreads = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for num_threads(nthreads) schedule(dynamic)
  for (index_t j = 0; j < shape.nm; ++j) {
    double* mj = m.data() + j * nt;
    std::fill(mj, mj + nt, 0.0);
    for (index_t i = 0; i < shape.nd; ++i) {
      const double* f = kernels.data() + (i * shape.nm + j) * nt;
      const double* di = d.data() + i * nt;
      for (index_t s = 0; s < nt; ++s) {  // m_j[s] = sum_k f[k] d_i[s + k]
        double sum = 0;
#pragma omp simd reduction(+ : sum)
        for (index_t k = 0; k < nt - s; ++k)
          sum += f[k] * di[s + k];
        mj[s] += sum;
      }
    }
  }
}

}  // namespace shiftop::btt
