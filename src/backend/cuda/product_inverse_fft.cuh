// Phases 3-5 of an F* pass for one right-hand side in one kernel (Venkat et al., Algorithm 2, with
// the mixed-precision paper's casts, section 3.2): the product y^[w] = F^[w]^H x^[w] is computed
// straight into the shared memory of the inverse real FFT (real_fft_stages.cuh), which then writes
// the unpadded output. The output spectra, Nm (L/2+1) complex values, never reach device memory:
// the GEMV-C kernel's write of them and the inverse's read are both gone, which at few
// observation blocks (Nd << Nm) is most of the bytes beside F^ (bench/NOTES.md, issue 19).
#pragma once

#include "backend/cuda/complex.cuh"
#include "backend/cuda/gemv_kernels.cuh"
#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {

/// y[j][t] = double(T5(sum_k Y[j][k] exp(2 pi i k t / L))) for t < nt (cuFFT's unnormalised C2R
/// of the Hermitian spectrum Y[j], keeping the first nt values; T5 = float if `single_output`),
/// where
/// Y[j][k] = TY(sum_i conj(F^[k][i][j]) x[i][k]) for k <= L/2, summed in FP64 from F^ in TA
/// ([w][Nd][ld], as gemv_fused) and x in TX (block-major [Nd][L/2+1]). shape.nw must be L/2+1
/// and L a length real_fft_supported() takes.
template <typename TA, typename TX, typename TY>
void adjoint_product_inverse_fft(const complex_t<TA>* a, const GemvShape& shape,
                                 const complex_t<TX>* x, double* y, bool single_output, index_t nt,
                                 index_t length, const complex_t<TY>* twiddles, stream_t stream);

}  // namespace shiftop::cuda
