// Can cuFFT write frequency-major spectra directly (output stride = the number of series,
// distance 1), so that the several-right-hand-side path needs no transposes? This probe times the
// batched D2Z and Z2D at the benchmark shapes both ways. On an H100 (2026-11-22) the
// frequency-major layout ran 4-5x slower (D2Z 0.56 TB/s against 3.0 TB/s), slower than the
// block-major transform plus a tiled transpose, so the engine keeps the transposes
// (bench/NOTES.md). Build and run on the device machine:
//   nvcc -O2 -arch=sm_90 bench/fft_layouts.cu -lcufft -o /tmp/fft_layouts && /tmp/fft_layouts
#include <cuda_runtime.h>
#include <cufft.h>

#include <cstdio>
#include <cstdlib>

namespace {

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fft_layouts: %s failed\n", what);
    std::exit(1);
  }
}

float best_ms(cufftHandle plan, bool forward, void* in, void* out) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best = 1e30f;
  for (int rep = 0; rep < 6; ++rep) {  // the first run is untimed
    cudaEventRecord(start);
    const cufftResult done =
        forward ? cufftExecD2Z(plan, static_cast<double*>(in), static_cast<double2*>(out))
                : cufftExecZ2D(plan, static_cast<double2*>(in), static_cast<double*>(out));
    check(done == CUFFT_SUCCESS, "cufftExec");
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (rep > 0 && ms < best) best = ms;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

}  // namespace

int main() {
  // {series, length}: 32 right-hand sides and one at the wide shape, the skinny shape, the wide
  // shape's observation side for 32 right-hand sides.
  const long long cases[][2] = {{5000 * 32, 2048}, {5000, 2048}, {40000, 4096}, {100 * 32, 2048}};
  for (const auto& c : cases) {
    long long series = c[0], length = c[1], nw = length / 2 + 1;
    void *real = nullptr, *spectra = nullptr;
    check(cudaMalloc(&real, series * length * 8) == cudaSuccess, "cudaMalloc");
    check(cudaMalloc(&spectra, series * nw * 16) == cudaSuccess, "cudaMalloc");
    cudaMemset(real, 0, series * length * 8);
    cudaMemset(spectra, 0, series * nw * 16);
    for (int frequency_major = 0; frequency_major < 2; ++frequency_major) {
      long long n[1] = {length}, real_rows[1] = {length}, complex_rows[1] = {nw};
      const long long stride = frequency_major ? series : 1, distance = frequency_major ? 1 : nw;
      std::size_t work = 0;
      cufftHandle forward, inverse;
      cufftCreate(&forward);
      cufftCreate(&inverse);
      check(cufftMakePlanMany64(forward, 1, n, real_rows, 1, length, complex_rows, stride, distance,
                                CUFFT_D2Z, series, &work) == CUFFT_SUCCESS,
            "D2Z plan");
      check(cufftMakePlanMany64(inverse, 1, n, complex_rows, stride, distance, real_rows, 1, length,
                                CUFFT_Z2D, series, &work) == CUFFT_SUCCESS,
            "Z2D plan");
      const float f = best_ms(forward, true, real, spectra);
      const float i = best_ms(inverse, false, spectra, real);
      const double bytes = series * (length * 8.0 + nw * 16.0);
      std::printf("series %lld length %lld %s: D2Z %.3f ms (%.0f GB/s), Z2D %.3f ms (%.0f GB/s)\n",
                  series, length, frequency_major ? "frequency-major" : "block-major", f,
                  bytes / f / 1e6, i, bytes / i / 1e6);
      cufftDestroy(forward);
      cufftDestroy(inverse);
    }
    cudaFree(real);
    cudaFree(spectra);
  }
}
