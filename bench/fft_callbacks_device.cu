// cuFFT LTO callbacks (FP64) for the probe bench/fft_callbacks.cu: the forward transform reads the
// unpadded series and sees zeros past Nt (phase 1 folded in), the inverse writes only the first Nt
// values of each series (phase 5), and with several right-hand sides the spectra are written and
// read frequency-major (no transposes). Compiled to LTO-IR on its own (nvcc -dc -fatbin
// -gencode arch=compute_90,code=lto_90), embedded with bin2c and linked into cuFFT's kernels at
// plan time (cufftXtSetJITCallback); the probe includes this file too, for the parameters. The
// callbacks have C++ linkage: cuFFT declares each symbol with its callback signature.
#include <cufftXt.h>

/// What the callbacks need, in device memory (cuFFT's callerInfo). Quotients use the reciprocals:
/// offsets stay below 2^53, so one correction step makes them exact.
struct FftCallbackParams {
  long long length = 0;  // L: real values per series (forward input, inverse output)
  long long nt = 0;      // values per series in the unpadded arrays
  long long nw = 0;      // L/2+1 frequencies per series (log2 L for probe_shift_load_d)
  long long series = 0;  // frequency-major stride: series per frequency
  double inv_length = 0, inv_nw = 0;
};

namespace {

struct Split {
  long long quotient, remainder;
};

// offset = quotient * divisor + remainder through the reciprocal: a 64-bit integer division would
// cost more than the memory access it indexes.
__device__ __forceinline__ Split split(unsigned long long offset, long long divisor,
                                       double inverse) {
  const auto o = static_cast<long long>(offset);
  long long q = __double2ll_rz(static_cast<double>(o) * inverse);
  long long r = o - q * divisor;
  if (r < 0) {
    --q;
    r += divisor;
  } else if (r >= divisor) {
    ++q;
    r -= divisor;
  }
  return {q, r};
}

__device__ __forceinline__ const FftCallbackParams& params(void* info) {
  return *static_cast<const FftCallbackParams*>(info);
}

}  // namespace

// Forward, real value `offset` of the padded series.
__device__ cufftDoubleReal shiftop_pad_load_d(void* in, unsigned long long offset, void* info,
                                              void*) {
  const FftCallbackParams& p = params(info);
  const Split at = split(offset, p.length, p.inv_length);
  return at.remainder < p.nt ? static_cast<const double*>(in)[at.quotient * p.nt + at.remainder]
                             : 0.0;
}

// Inverse, real value `offset` of the padded series.
__device__ void shiftop_unpad_store_d(void* out, unsigned long long offset, cufftDoubleReal value,
                                      void* info, void*) {
  const FftCallbackParams& p = params(info);
  const Split at = split(offset, p.length, p.inv_length);
  if (at.remainder < p.nt) static_cast<double*>(out)[at.quotient * p.nt + at.remainder] = value;
}

// Forward, complex value `offset` of block-major spectra, to k * series + s.
__device__ void shiftop_freq_major_store_z(void* out, unsigned long long offset,
                                           cufftDoubleComplex value, void* info, void*) {
  const FftCallbackParams& p = params(info);
  const Split at = split(offset, p.nw, p.inv_nw);
  static_cast<double2*>(out)[at.remainder * p.series + at.quotient] = value;
}

// Inverse, complex value `offset` of block-major spectra, from k * series + s.
__device__ cufftDoubleComplex shiftop_freq_major_load_z(void* in, unsigned long long offset,
                                                        void* info, void*) {
  const FftCallbackParams& p = params(info);
  const Split at = split(offset, p.nw, p.inv_nw);
  return static_cast<const double2*>(in)[at.remainder * p.series + at.quotient];
}

// The cost of a callback itself: the padded input read as it is (no index arithmetic), and the
// pad with a shift for power-of-two lengths.
__device__ cufftDoubleReal probe_identity_load_d(void* in, unsigned long long offset, void*,
                                                 void*) {
  return static_cast<const double*>(in)[offset];
}
__device__ cufftDoubleReal probe_shift_load_d(void* in, unsigned long long offset, void* info,
                                              void*) {
  const FftCallbackParams& p = params(info);
  const auto s = static_cast<long long>(offset >> p.nw);
  const auto t = static_cast<long long>(offset & ((1ull << p.nw) - 1));
  return t < p.nt ? static_cast<const double*>(in)[s * p.nt + t] : 0.0;
}
