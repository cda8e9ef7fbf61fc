// Batched power-of-two real FFTs with the zero-padding and the unpadding folded in (Venkat et
// al., Algorithm 2: phases 1-2 and 4-5 in one kernel each, casts as in the mixed-precision paper,
// section 3.2). cuFFT must read its input padded to L in memory and write all L outputs, so the
// separate pad and unpad passes and the zeros cost about as much as the transforms' own data;
// these kernels read only the Nt values of each series (forward) and write only the first Nt
// (inverse). Each series is transformed in shared memory as a complex FFT of L/2 points (radix-8
// Stockham stages, Govindaraju et al., SC'08) with the usual real-to-complex split step.
#pragma once

#include <cstdint>

#include "backend/cuda/complex.cuh"
#include "backend/cuda/runtime.cuh"

namespace shiftop::cuda {

using index_t = std::int64_t;

/// Whether the kernels below take FFT length L on the current device: a power of two from 16 to
/// 8192 whose shared-memory working set fits (up to 147 kB per block at 8192 in FP64).
bool real_fft_supported(index_t length);

/// The L roots of unity the kernels read: exp(-2 pi i k / L) for k <= L/2, then each Stockham
/// stage's twiddles in the order its threads read them.
template <typename T>
void make_twiddles(complex_t<T>* table, index_t length, stream_t stream);

/// Where value k of series s lies in the inverse's input: block-major rows of L/2+1 values
/// (s (L/2+1) + k, as cuFFT), or frequency-major at k * frequency_stride + s (the layout cuBLAS
/// writes for several vectors), there conjugated if asked (F* as M conj(x)). The forward writes
/// block-major only: written frequency-major (16 bytes per frequency and series, strided) it was
/// slower than the padding, cuFFT and tiled transpose it was to replace (bench/NOTES.md, GPU
/// variant 11).
struct SpectraLayout {
  index_t frequency_stride = 0;  // 0: block-major
  bool conjugate = false;        // frequency-major only
};

/// spectra[s][k] = sum_{t < nt} T2(T1(x[s][t])) exp(-2 pi i k t / L) for k <= L/2: the forward
/// real FFT of each zero-padded series (nt <= L/2). Spectra rows have L/2+1 values.
template <typename T1, typename T2>
void padded_real_fft(const double* x, complex_t<T2>* spectra, index_t series, index_t nt,
                     index_t length, const complex_t<T2>* twiddles, stream_t stream);

/// y[s][t] = double(T5(sum_{k < L} X[s][k] exp(2 pi i k t / L))) for t < nt, where X[s] is the
/// Hermitian spectrum whose first L/2+1 values are spectra(s, k) (the imaginary parts of its first
/// and last value are ignored): cuFFT's unnormalised C2R, keeping the first nt values.
template <typename T4, typename T5>
void unpadded_inverse_real_fft(const complex_t<T4>* spectra, double* y, index_t series, index_t nt,
                               index_t length, const complex_t<T4>* twiddles, stream_t stream,
                               SpectraLayout layout = {});

}  // namespace shiftop::cuda
