// Do cuFFT's LTO callbacks (bench/fft_callbacks_device.cu) beat separate layout passes? For each
// case the probe times pad / unpad / transpose kernels (the engine's, src/backend/cuda) around
// plain transforms against one transform whose callbacks do that work, checks that both give the
// same numbers, and reports the JIT cost of making the callback plans. Then the cost of a
// callback itself: plain D2Z against D2Z with a load callback that only reads the padded input,
// and with the pad callback indexing by a shift instead of the reciprocal. Answer on an H100
// (2026-11-22, bench/results/fft-callbacks-h100-2026-11-22.jsonl): no at the power-of-two
// lengths the engine uses: a callback alone makes cuFFT's D2Z 1.2-1.5x slower, more than the pad
// pass it saves; they win only at lengths like 2Nt = 4000 where cuFFT is slow anyway. So the
// engine has its own transforms instead (src/backend/cuda/real_fft.cuh).
//   forward:  pad_and_cast + D2Z                       vs D2Z with pad_load
//   inverse:  in-place Z2D + unpad_and_cast            vs out-of-place Z2D with unpad_store
//   forward, n vectors: pad + D2Z + to_frequency_major vs D2Z with pad_load + freq_major_store
//   inverse, n vectors: from_frequency_major + Z2D + unpad vs Z2D with freq_major_load +
//   unpad_store
// Build and run on the device machine (one JSON line per case):
//   nvcc -dc -fatbin -gencode arch=compute_90,code=lto_90 bench/fft_callbacks_device.cu \
//     -o /tmp/cb.fatbin
//   bin2c --name fft_callbacks_fatbin --type longlong /tmp/cb.fatbin > /tmp/fft_callbacks_fatbin.h
//   nvcc -O2 -std=c++20 -arch=sm_90 -Isrc -I/tmp bench/fft_callbacks.cu \
//     src/backend/cuda/layout_kernels.cu -lcufft -o /tmp/fft_callbacks
#include <cuda_runtime.h>
#include <cufftXt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backend/cuda/layout_kernels.cuh"
#include "fft_callbacks_device.cu"
#include "fft_callbacks_fatbin.h"

namespace {

using index_t = long long;

void check(int status, const char* what) {
  if (status != 0) {
    std::fprintf(stderr, "fft_callbacks: %s failed (status %d)\n", what, status);
    std::exit(1);
  }
}
#define CHECK(call) check(static_cast<int>(call), #call)

__global__ void fill(double* v, index_t n, unsigned seed) {
  for (index_t i = blockIdx.x * index_t{blockDim.x} + threadIdx.x; i < n;
       i += index_t{gridDim.x} * blockDim.x) {
    unsigned long long h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    v[i] = double(h >> 11) * 0x1.0p-53 - 0.5;
  }
}

struct Buffer {
  void* p = nullptr;
  std::size_t bytes = 0;
  explicit Buffer(std::size_t n) : bytes(n) { CHECK(cudaMalloc(&p, n)); }
  ~Buffer() { cudaFree(p); }
  template <typename T>
  T* as() const {
    return static_cast<T*>(p);
  }
};

template <typename Work>
float best_ms(Work&& work) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  float best = 1e30f;
  for (int rep = 0; rep < 8; ++rep) {  // the first two are untimed
    cudaEventRecord(start);
    work();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (rep > 1) best = std::min(best, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  CHECK(cudaGetLastError());
  return best;
}

// max |a - b| / max |b| over n doubles.
double relative_difference(const void* a, const void* b, std::size_t n) {
  std::vector<double> ha(n), hb(n);
  CHECK(cudaMemcpy(ha.data(), a, n * 8, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hb.data(), b, n * 8, cudaMemcpyDeviceToHost));
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    diff = std::max(diff, std::abs(ha[i] - hb[i]));  // NaN-poisoned slots make this NaN
    if (std::isnan(ha[i]) || std::isnan(hb[i])) return NAN;
    scale = std::max(scale, std::abs(hb[i]));
  }
  return diff / scale;
}

struct Callback {
  const char* symbol;
  cufftXtCallbackType type;
};

// A batched D2Z (forward) or Z2D (inverse) of `series` series of length L: real rows of
// `real_rows`, complex rows of L/2+1; the callbacks (if any) see `params`.
cufftHandle make_plan(bool forward, index_t length, index_t series, index_t real_rows,
                      std::vector<Callback> callbacks, FftCallbackParams* params, double* jit_ms) {
  cufftHandle plan;
  CHECK(cufftCreate(&plan));
  const auto start = std::chrono::steady_clock::now();
  for (const Callback& c : callbacks)
    CHECK(cufftXtSetJITCallback(plan, c.symbol, fft_callbacks_fatbin, sizeof fft_callbacks_fatbin,
                                c.type, reinterpret_cast<void**>(&params)));
  long long n[1] = {length}, real[1] = {real_rows}, complex[1] = {length / 2 + 1};
  std::size_t work = 0;
  CHECK(cufftMakePlanMany64(plan, 1, n, forward ? real : complex, 1,
                            forward ? real_rows : length / 2 + 1, forward ? complex : real, 1,
                            forward ? length / 2 + 1 : real_rows, forward ? CUFFT_D2Z : CUFFT_Z2D,
                            series, &work));
  *jit_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

void report(const char* name, index_t vectors, index_t blocks, index_t nt, index_t length,
            double copy_gbs, float before, float after, double bytes_before, double bytes_after,
            double diff, double jit_ms) {
  std::printf(
      "{\"case\":\"%s\",\"vectors\":%lld,\"blocks\":%lld,\"nt\":%lld,\"length\":%lld,"
      "\"copy_GBps\":%.1f,\"layout_passes_ms\":%.4f,\"callbacks_ms\":%.4f,\"speedup\":%.3f,"
      "\"layout_passes_floor_ms\":%.4f,\"callbacks_floor_ms\":%.4f,\"max_rel_diff\":%.3g,"
      "\"jit_plan_ms\":%.1f}\n",
      name, vectors, blocks, nt, length, copy_gbs, before, after, before / after,
      bytes_before / copy_gbs * 1e-6, bytes_after / copy_gbs * 1e-6, diff, jit_ms);
  std::fflush(stdout);
}

void run_case(index_t vectors, index_t blocks, index_t nt, index_t length, double copy_gbs) {
  namespace sc = shiftop::cuda;
  const index_t series = vectors * blocks, nw = length / 2 + 1;
  Buffer x(series * nt * 8), y1(series * nt * 8), y2(series * nt * 8);
  Buffer padded(series * 2 * nw * 8), spec1(series * nw * 16), spec2(series * nw * 16),
      pristine(series * nw * 16);
  fill<<<1024, 256>>>(x.as<double>(), series * nt, 1u);
  CHECK(cudaMemset(padded.p, 0, padded.bytes));

  FftCallbackParams host{.length = length,
                         .nt = nt,
                         .nw = nw,
                         .series = series,
                         .inv_length = 1.0 / double(length),
                         .inv_nw = 1.0 / double(nw)};
  FftCallbackParams* params = nullptr;
  CHECK(cudaMalloc(&params, sizeof host));
  CHECK(cudaMemcpy(params, &host, sizeof host, cudaMemcpyHostToDevice));

  double jit = 0, jit_plain = 0;
  const cufftHandle plain_forward = make_plan(true, length, series, length, {}, params, &jit_plain);
  const cufftHandle plain_inverse =
      make_plan(false, length, series, 2 * nw, {}, params, &jit_plain);
  const double real_in = series * nt * 8.0, spectra = series * nw * 16.0;
  const bool several = vectors > 1;
  const sc::TransposeShape to_fm{.p = vectors,
                                 .q = blocks,
                                 .nw = nw,
                                 .block_p = blocks * nw,
                                 .freq_w = series,
                                 .freq_p = blocks};

  // Forward.
  const Callback pad{"shiftop_pad_load_d", CUFFT_CB_LD_REAL_DOUBLE};
  const Callback fm_store{"shiftop_freq_major_store_z", CUFFT_CB_ST_COMPLEX_DOUBLE};
  const cufftHandle cb_forward = make_plan(
      true, length, series, length,
      several ? std::vector<Callback>{pad, fm_store} : std::vector<Callback>{pad}, params, &jit);
  const auto forward_before = [&] {
    sc::pad_and_cast<double, double>(x.as<double>(), padded.as<double>(), series, nt, length,
                                     nullptr);
    cufftExecD2Z(plain_forward, padded.as<double>(), spec1.as<double2>());
    if (several)
      sc::to_frequency_major<double, double>(spec1.as<double2>(), spec2.as<double2>(), to_fm, false,
                                             1.0, nullptr);
  };
  double2* const forward_result = several ? spec2.as<double2>() : spec1.as<double2>();
  double2* const forward_cb_out = several ? spec1.as<double2>() : spec2.as<double2>();
  const auto forward_after = [&] { cufftExecD2Z(cb_forward, x.as<double>(), forward_cb_out); };
  const float fb = best_ms(forward_before);
  CHECK(cudaMemcpy(pristine.p, forward_result, spectra, cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset(forward_cb_out, 0xff, spectra));  // NaN: unwritten values show
  const float fa = best_ms(forward_after);
  const double fdiff = relative_difference(forward_cb_out, pristine.p, series * nw * 2);
  const double fb_bytes =
      real_in + 2 * series * length * 8.0 + spectra + (several ? 2 * spectra : 0);
  report(several ? "forward_freq_major" : "forward", vectors, blocks, nt, length, copy_gbs, fb, fa,
         fb_bytes, real_in + spectra, fdiff, jit);

  // Inverse, from the forward's spectra (block-major for one vector, frequency-major for several).
  const Callback unpad{"shiftop_unpad_store_d", CUFFT_CB_ST_REAL_DOUBLE};
  const Callback fm_load{"shiftop_freq_major_load_z", CUFFT_CB_LD_COMPLEX_DOUBLE};
  const cufftHandle cb_inverse = make_plan(
      false, length, series, length,
      several ? std::vector<Callback>{unpad, fm_load} : std::vector<Callback>{unpad}, params, &jit);
  // Both sequences start from a fresh copy of the spectra (C2R may overwrite its input); the
  // copy is timed on its own and taken off.
  const auto restore = [&] {
    CHECK(cudaMemcpyAsync(spec2.p, pristine.p, spectra, cudaMemcpyDeviceToDevice));
  };
  const float restore_ms = best_ms(restore);
  const auto inverse_before = [&] {
    restore();
    if (several)
      sc::from_frequency_major<double, double>(spec2.as<double2>(), spec1.as<double2>(), to_fm,
                                               false, nullptr);
    double2* in = several ? spec1.as<double2>() : spec2.as<double2>();
    cufftExecZ2D(plain_inverse, in, reinterpret_cast<double*>(in));
    sc::unpad_and_cast<double, double>(reinterpret_cast<double*>(in), 2 * nw, y1.as<double>(),
                                       series, nt, nullptr);
  };
  const auto inverse_after = [&] {
    restore();
    cufftExecZ2D(cb_inverse, spec2.as<double2>(), y2.as<double>());
  };
  CHECK(cudaMemset(y1.p, 0xff, y1.bytes));
  CHECK(cudaMemset(y2.p, 0xff, y2.bytes));
  const float ib = best_ms(inverse_before) - restore_ms;
  const float ia = best_ms(inverse_after) - restore_ms;
  const double idiff = relative_difference(y2.p, y1.p, series * nt);
  const double ib_bytes = (several ? 2 * spectra : 0) + 2 * spectra + 2 * series * nt * 8.0;
  report(several ? "inverse_freq_major" : "inverse", vectors, blocks, nt, length, copy_gbs, ib, ia,
         ib_bytes, spectra + series * nt * 8.0, idiff, jit);

  for (cufftHandle h : {plain_forward, plain_inverse, cb_forward, cb_inverse})
    cufftDestroy(h);
  cudaFree(params);
}

// One D2Z of `series` series of length L (nt values each) without a callback (on the padded
// input), with the identity load callback (same input), and with the pad callbacks (unpadded
// input) indexing by the reciprocal and by a shift.
void callback_cost(index_t series, index_t nt, index_t length) {
  const index_t nw = length / 2 + 1;
  Buffer x(series * nt * 8), padded(series * length * 8), spectra(series * nw * 16);
  CHECK(cudaMemset(x.p, 0, x.bytes));
  CHECK(cudaMemset(padded.p, 0, padded.bytes));
  int shift = 0;
  while ((index_t{1} << shift) < length)
    ++shift;
  const FftCallbackParams reciprocal{.length = length,
                                     .nt = nt,
                                     .nw = nw,
                                     .series = series,
                                     .inv_length = 1.0 / double(length),
                                     .inv_nw = 1.0 / double(nw)};
  FftCallbackParams shifted = reciprocal;
  shifted.nw = shift;
  const struct {
    const char* name;
    const char* symbol;
    const FftCallbackParams* params;
    const Buffer* input;
  } variants[] = {{"none", nullptr, &reciprocal, &padded},
                  {"identity_load", "probe_identity_load_d", &reciprocal, &padded},
                  {"pad_load_reciprocal", "shiftop_pad_load_d", &reciprocal, &x},
                  {"pad_load_shift", "probe_shift_load_d", &shifted, &x}};
  for (const auto& v : variants) {
    FftCallbackParams* params = nullptr;
    CHECK(cudaMalloc(&params, sizeof *v.params));
    CHECK(cudaMemcpy(params, v.params, sizeof *v.params, cudaMemcpyHostToDevice));
    double jit = 0;
    std::vector<Callback> callbacks;
    if (v.symbol != nullptr) callbacks.push_back({v.symbol, CUFFT_CB_LD_REAL_DOUBLE});
    const cufftHandle plan = make_plan(true, length, series, length, callbacks, params, &jit);
    const float ms =
        best_ms([&] { cufftExecD2Z(plan, v.input->as<double>(), spectra.as<double2>()); });
    std::printf(
        "{\"case\":\"callback_cost\",\"callback\":\"%s\",\"series\":%lld,\"nt\":%lld,"
        "\"length\":%lld,\"d2z_ms\":%.4f}\n",
        v.name, series, nt, length, ms);
    cufftDestroy(plan);
    cudaFree(params);
  }
}

}  // namespace

int main() {
  Buffer a(std::size_t{4} << 30), b(std::size_t{4} << 30);
  const float copy_ms =
      best_ms([&] { cudaMemcpyAsync(b.p, a.p, a.bytes, cudaMemcpyDeviceToDevice); });
  const double copy_gbs = 2.0 * a.bytes / copy_ms * 1e-6;
  // {vectors, blocks, nt, length}: the skinny shape's parameter side, the wide shape's, each at
  // 2Nt and at the power of two; the wide shape's parameter side for 32 vectors.
  const index_t cases[][4] = {
      {1, 40000, 2000, 4096}, {1, 40000, 2000, 4000}, {1, 5000, 1000, 2048}, {1, 5000, 1000, 2000},
      {32, 5000, 1000, 2048}, {32, 5000, 1000, 2000}, {3, 37, 17, 34}};
  for (const auto& c : cases)
    run_case(c[0], c[1], c[2], c[3], copy_gbs);
  callback_cost(40000, 2000, 4096);
  callback_cost(5000, 1000, 2048);
}
