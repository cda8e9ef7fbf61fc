// The GPU engine's apply (btt/cuda/engine.cuh): groups of right-hand sides, the passes of an
// operation, the five phases of a pass, CUDA graphs and per-phase profiling.
#include <algorithm>

#include "backend/cuda/cublas.cuh"
#include "backend/cuda/layout_kernels.cuh"
#include "backend/cuda/product_inverse_fft.cuh"
#include "backend/cuda/real_fft.cuh"
#include "btt/cuda/engine.cuh"
#include "btt/passes.hpp"

namespace shiftop::btt {

template <typename T>
const complex_t<T>* CudaEngine::spectrum() const {
  return of_precision<T>(spectrum32_, spectrum64_);
}

template <typename T>
const complex_t<T>* CudaEngine::twiddles() const {
  return of_precision<T>(twiddles32_, twiddles64_);
}

template <typename T>
void CudaEngine::execute_cufft(cuda::FftKind kind, index_t blocks, index_t n) {
  CufftPlans<T>& plans = *cufft_plans<T>();
  const bool nm_blocks = blocks == shape_.nm;
  // Forward: padded series -> input spectra; inverse: output spectra in place.
  const bool forward = kind == cuda::FftKind::Forward;
  const cuda::DeviceMemory& spectra = forward ? input_spectra_ : output_spectra_;
  const auto out = [&](index_t r) -> void* {
    return spectra.as<complex_t<T>>() + r * blocks * nw_;
  };
  const auto in = [&](index_t r) -> void* {
    return forward ? static_cast<void*>(padded_.as<T>() + r * blocks * length_) : out(r);
  };
  if (n == 1 || n == group_size_) {
    plans.get(kind, nm_blocks, n != 1).execute(in(0), out(0));
    return;
  }
  for (index_t r = 0; r < n; ++r)
    plans.get(kind, nm_blocks, false).execute(in(r), out(r));
}

bool CudaEngine::products_into_inverse_fft(bool adjoint, index_t n) const {
  const std::optional<cuda::GemvTuning>& tuning = gemv_tuning_[adjoint ? 1 : 0];
  return adjoint && n == 1 && fused_transforms_[1] && tuning && tuning->into_inverse_fft;
}

bool CudaEngine::inverse_reads_frequency_major(bool adjoint, index_t n) const {
  return fused_transforms_[adjoint ? 1 : 0] && (n > 1 || !gemv_tuning_[adjoint ? 1 : 0]) &&
         precision_[Phase::Gemv] == precision_[Phase::Ifft];
}

template <typename T3, typename T2, typename T4>
void CudaEngine::multiply(bool adjoint, index_t n, bool frequency_major_output) {
  const index_t nd = shape_.nd, nm = shape_.nm;
  const std::optional<cuda::GemvTuning>& tuning = gemv_tuning_[adjoint ? 1 : 0];
  if (n == 1 && tuning) {
    mark(kReordered);
    cuda::gemv_fused<T3, T2, T4>(adjoint, spectrum<T3>(), gemv_shape(),
                                 input_spectra_.as<complex_t<T2>>(),
                                 output_spectra_.as<complex_t<T4>>(), *tuning, stream());
    mark(kMultiplied);
    mark(kReorderedBack);
    return;
  }
  // Frequency-major vectors for cuBLAS. F* uses conj(F^[w]^H x) = M conj(x), with M the
  // column-major view of F^[w] (Nm x Nd, lda = ld): the reorderings conjugate on the way.
  const index_t in_b = adjoint ? nd : nm, out_b = adjoint ? nm : nd;
  complex_t<T3>* xs = output_spectra_.as<complex_t<T3>>();
  complex_t<T3>* ys = input_spectra_.as<complex_t<T3>>();
  cuda::to_frequency_major<T2, T3>(
      input_spectra_.as<complex_t<T2>>(), xs,
      {.p = n, .q = in_b, .nw = nw_, .block_p = in_b * nw_, .freq_w = n * in_b, .freq_p = in_b},
      adjoint, 1.0, stream());
  mark(kReordered);
  const auto i = [](index_t v) { return static_cast<int>(v); };
  const cublasOperation_t op = adjoint ? CUBLAS_OP_N : CUBLAS_OP_T;
  const long long stride_a = nd * ld_;
  cublasHandle_t cublas = context_->handles().cublas;
  if (n == 1)
    cuda::gemv_batched<T3>(cublas, op, i(nm), i(nd), spectrum<T3>(), i(ld_), stride_a, xs, in_b, ys,
                           out_b, i(nw_));
  else
    cuda::gemm_batched<T3>(cublas, op, i(out_b), i(n), i(in_b), spectrum<T3>(), i(ld_), stride_a,
                           xs, i(in_b), n * in_b, ys, i(out_b), n * out_b, i(nw_));
  mark(kMultiplied);
  if (!frequency_major_output)
    cuda::from_frequency_major<T3, T4>(ys, output_spectra_.as<complex_t<T4>>(),
                                       {.p = n,
                                        .q = out_b,
                                        .nw = nw_,
                                        .block_p = out_b * nw_,
                                        .freq_w = n * out_b,
                                        .freq_p = out_b},
                                       adjoint, stream());
  mark(kReorderedBack);
}

void CudaEngine::mark(Mark m) {
  if (options_.gpu_engine.profile) marks_.record(m, stream());
}

void CudaEngine::add_pass_times() {
  if (!options_.gpu_engine.profile) return;
  marks_.synchronize(kUnpadded);
  const auto between = [this](Mark a, Mark b) { return 1e-3 * marks_.elapsed_ms(a, b); };
  times_[ApplyPhase::Pad] += between(kStart, kPadded);
  times_[ApplyPhase::Fft] += between(kPadded, kTransformed);
  times_[ApplyPhase::Layout] +=
      between(kTransformed, kReordered) + between(kMultiplied, kReorderedBack);
  times_[ApplyPhase::Gemv] += between(kReordered, kMultiplied);
  times_[ApplyPhase::Ifft] += between(kReorderedBack, kTransformedBack);
  times_[ApplyPhase::Unpad] += between(kTransformedBack, kUnpadded);
}

void CudaEngine::pass(bool adjoint, const double* x, double* y, index_t n) {
  const PrecisionConfig& p = precision_;
  const index_t in_b = adjoint ? shape_.nd : shape_.nm, out_b = adjoint ? shape_.nm : shape_.nd;
  const bool fused = fused_transforms_[adjoint ? 1 : 0];
  // Frequency-major: the inverse reads cuBLAS's output (input_spectra_), conjugated back for F*
  // as the transpose would.
  const bool frequency_major = inverse_reads_frequency_major(adjoint, n);
  const cuda::SpectraLayout from_gemm{.frequency_stride = frequency_major ? n * out_b : 0,
                                      .conjugate = frequency_major && adjoint};
  mark(kStart);
  with_type(p[Phase::Pad], [&](auto t1) {
    with_type(p[Phase::Fft], [&](auto t2) {
      using T1 = decltype(t1);
      using T2 = decltype(t2);
      if (fused) {
        mark(kPadded);
        cuda::padded_real_fft<T1, T2>(x, input_spectra_.as<complex_t<T2>>(), n * in_b, shape_.nt,
                                      length_, twiddles<T2>(), stream());
      } else {
        cuda::pad_and_cast<T1, T2>(x, padded_.as<T2>(), n * in_b, shape_.nt, length_, stream());
        mark(kPadded);
        execute_cufft<T2>(cuda::FftKind::Forward, in_b, n);
      }
      mark(kTransformed);
    });
  });
  if (products_into_inverse_fft(adjoint, n)) {
    mark(kReordered);
    with_type(p[Phase::Gemv], [&](auto t3) {
      with_type(p[Phase::Fft], [&](auto t2) {
        with_type(p[Phase::Ifft], [&](auto t4) {
          using T3 = decltype(t3);
          using T2 = decltype(t2);
          using T4 = decltype(t4);
          cuda::adjoint_product_inverse_fft<T3, T2, T4>(
              spectrum<T3>(), gemv_shape(), input_spectra_.as<complex_t<T2>>(), y,
              p[Phase::Unpad] == Precision::Single, shape_.nt, length_, twiddles<T4>(), stream());
        });
      });
    });
    // Phases 3-5 are one kernel: its time counts as the product's.
    mark(kMultiplied);
    mark(kReorderedBack);
    mark(kTransformedBack);
    mark(kUnpadded);
    add_pass_times();
    return;
  }
  with_type(p[Phase::Gemv], [&](auto t3) {
    with_type(p[Phase::Fft], [&](auto t2) {
      with_type(p[Phase::Ifft], [&](auto t4) {
        multiply<decltype(t3), decltype(t2), decltype(t4)>(adjoint, n, frequency_major);
      });
    });
  });
  with_type(p[Phase::Ifft], [&](auto t4) {
    with_type(p[Phase::Unpad], [&](auto t5) {
      using T4 = decltype(t4);
      using T5 = decltype(t5);
      if (fused) {
        const cuda::DeviceMemory& spectra = frequency_major ? input_spectra_ : output_spectra_;
        cuda::unpadded_inverse_real_fft<T4, T5>(spectra.as<complex_t<T4>>(), y, n * out_b,
                                                shape_.nt, length_, twiddles<T4>(), stream(),
                                                from_gemm);
        mark(kTransformedBack);
      } else {
        execute_cufft<T4>(cuda::FftKind::Inverse, out_b, n);
        mark(kTransformedBack);
        cuda::unpad_and_cast<T4, T5>(output_spectra_.as<T4>(), 2 * nw_, y, n * out_b, shape_.nt,
                                     stream());
      }
    });
  });
  mark(kUnpadded);
  add_pass_times();
}

void CudaEngine::run(Op op, const double* x, double* y, index_t nrhs) {
  const index_t in_size = input_blocks(op, shape_) * shape_.nt;
  const index_t out_size = output_blocks(op, shape_) * shape_.nt;
  for_each_group(nrhs, group_size_, [&](index_t first, index_t n) {
    run_passes(op, x + first * in_size, middle_.as<double>(), y + first * out_size,
               [&](bool adjoint, const double* in, double* out) { pass(adjoint, in, out, n); });
  });
}

void CudaEngine::apply(Op op, const double* x, double* y, index_t nrhs) {
  context_->activate();
  times_ = {};
  const index_t in_size = input_blocks(op, shape_) * shape_.nt;
  const index_t out_size = output_blocks(op, shape_) * shape_.nt;
  for_each_group(nrhs, group_size_, [&](index_t first, index_t n) {
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(x_.as<double>(), x + first * in_size,
                                       static_cast<std::size_t>(n * in_size) * sizeof(double),
                                       cudaMemcpyHostToDevice, stream()));
    run(op, x_.as<double>(), y_.as<double>(), n);
    SHIFTOP_CUDA_CHECK(cudaMemcpyAsync(y + first * out_size, y_.as<double>(),
                                       static_cast<std::size_t>(n * out_size) * sizeof(double),
                                       cudaMemcpyDeviceToHost, stream()));
  });
  SHIFTOP_CUDA_CHECK(cudaStreamSynchronize(stream()));
}

void CudaEngine::forget_graph() {
  if (graph_ != nullptr) SHIFTOP_CUDA_CHECK(cudaGraphExecDestroy(graph_));
  graph_ = nullptr;
  graph_key_.reset();
}

void CudaEngine::apply_device(Op op, const double* x, double* y, index_t nrhs, void* stream) {
  context_->activate();
  times_ = {};
  context_->wait_for(stream);
  if (options_.gpu_engine.graphs && !options_.gpu_engine.profile) {
    const GraphKey key{op, x, y, nrhs};
    if (!graph_key_ || !(*graph_key_ == key)) {
      forget_graph();
      cudaGraph_t graph = nullptr;
      SHIFTOP_CUDA_CHECK(cudaStreamBeginCapture(this->stream(), cudaStreamCaptureModeThreadLocal));
      try {
        run(op, x, y, nrhs);
      } catch (...) {
        cudaStreamEndCapture(this->stream(), &graph);
        if (graph != nullptr) cudaGraphDestroy(graph);
        throw;
      }
      SHIFTOP_CUDA_CHECK(cudaStreamEndCapture(this->stream(), &graph));
      const cudaError_t made = cudaGraphInstantiate(&graph_, graph, 0);
      cudaGraphDestroy(graph);
      SHIFTOP_CUDA_CHECK(made);
      graph_key_ = key;
    }
    SHIFTOP_CUDA_CHECK(cudaGraphLaunch(graph_, this->stream()));
  } else {
    run(op, x, y, nrhs);
  }
  context_->signal(stream);
}

}  // namespace shiftop::btt
