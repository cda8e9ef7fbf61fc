// shiftop::circ::Operator — a sparse block-circulant matrix C, built once from its first block row
// and applied many times with no allocation (Romero et al., sparse-block-circulant-spmv, eqs. 1-5;
// docs/circ.md).
//
// C has k x k blocks of mb x nb, block (i, j) = A_{(j-i) mod k} (eq. 1), so it is (k*mb) x (k*nb)
// and A = (A_0 ... A_{k-1}), an mb x (k*nb) sparse matrix, gives all of it. y = C x is computed as
// Y = A X° (eq. 3): a sparse x dense product in which every nonzero of A loaded from memory is
// used k times. C^T is block-circulant too, with first block row (A_0^T, A_{k-1}^T, ..., A_1^T),
// and is applied through a transposed index into A's own values: no second copy of the blocks is
// stored, and C^T is the exact transpose of C (the same numbers, summed in another order).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/core/backend.hpp"
#include "shiftop/core/circulant_data.hpp"
#include "shiftop/core/shape.hpp"

namespace shiftop::circ {

/// y = C x, or x = C^T y.
enum class Op { C, Ct };

}  // namespace shiftop::circ

template <>
struct shiftop::EnumNames<shiftop::circ::Op> {
  static constexpr std::array<std::pair<circ::Op, std::string_view>, 2> table{
      {{circ::Op::C, "C"}, {circ::Op::Ct, "Ct"}}};
};

namespace shiftop::circ {

/// Length of one input (k*nb for C, k*mb for C^T) and one output vector.
index_t input_length(const Shape& shape, Op op);
index_t output_length(const Shape& shape, Op op);

/// The CPU products of the paper's section 3.1. BlockSpmv is eq. (2): one CSR SpMV of A per
/// output block on the shifted input, A read k times (the baseline). Mm is Y = A X° with the
/// implicit index of eq. (4) on X (two AXPYs per nonzero, split where the block index wraps). Mm2
/// reads the duplicated input X^ = (X X) of eq. (5), one AXPY of length k per nonzero. Mm2s merges
/// s nonzeros of a row into one MAXPY (Fig. 5). Auto: the fastest by a short probe under
/// Planning::Measure, Mm2s with s = 8 under Estimate.
enum class CpuKernel { Auto, BlockSpmv, Mm, Mm2, Mm2s };

/// How the GPU applies C^T (docs/circ.md, "Design decisions"): Index walks a transposed index of
/// A (for each column of the blocks, the rows and blocks of its nonzeros and where their values
/// are in A); Atomic walks A's rows and adds into the output with atomics (no extra memory, sums
/// in a varying order). Auto: Index, or the faster under Planning::Measure.
enum class TransposeMethod { Auto, Index, Atomic };

}  // namespace shiftop::circ

template <>
struct shiftop::EnumNames<shiftop::circ::CpuKernel> {
  static constexpr std::array<std::pair<circ::CpuKernel, std::string_view>, 5> table{
      {{circ::CpuKernel::Auto, "auto"},
       {circ::CpuKernel::BlockSpmv, "block-spmv"},
       {circ::CpuKernel::Mm, "mm"},
       {circ::CpuKernel::Mm2, "mm2"},
       {circ::CpuKernel::Mm2s, "mm2s"}}};
};

template <>
struct shiftop::EnumNames<shiftop::circ::TransposeMethod> {
  static constexpr std::array<std::pair<circ::TransposeMethod, std::string_view>, 3> table{
      {{circ::TransposeMethod::Auto, "auto"},
       {circ::TransposeMethod::Index, "index"},
       {circ::TransposeMethod::Atomic, "atomic"}}};
};

namespace shiftop::circ {

struct CpuOptions {
  /// OpenMP threads; 0 uses OpenMP's default.
  int threads = 0;
  CpuKernel kernel = CpuKernel::Auto;
  /// s, the nonzeros per MAXPY of Mm2s (1..16); 0 probes under Measure and takes 8 under Estimate.
  int maxpy_width = 0;
};

/// How the GPU engine applies C^T; the CPU engine does not read it.
struct GpuEngineOptions {
  TransposeMethod transpose = TransposeMethod::Auto;
};

struct Options {
  Backend backend = Backend::Cpu;
  Planning planning = Planning::Measure;
  /// Right-hand sides applied together: the dense operands become k*max_rhs wide, and A is read
  /// once per group. The workspaces, about (2*max(nb, mb) + max(mb, nb)) * k * max_rhs values,
  /// grow linearly with it; A is already reused k times, so more than 1 pays mostly for small k.
  index_t max_rhs = 1;
  CpuOptions cpu{};
  /// The GPU of Backend::Cuda: gpu.context when given (shared with plans and SVDs), else a new
  /// context of the operator's own on GPU gpu.device (gpu::context_for).
  GpuOptions gpu{};
  GpuEngineOptions gpu_engine{};
};

/// What an operator chose, and what the probe measured to choose it.
struct Choices {
  Backend backend = Backend::Cpu;
  CpuKernel cpu_kernel = CpuKernel::Auto;             // what runs on the CPU (C and C^T)
  int maxpy_width = 0;                                // s, when cpu_kernel is Mm2s
  TransposeMethod transpose = TransposeMethod::Auto;  // GPU only
  /// Candidate name -> seconds of one C and one C^T product, the shortest of three (empty under
  /// Estimate).
  std::vector<std::pair<std::string, double>> probe;
  /// "cpu mm2s s=8", "cuda transpose=index", ...
  std::string str() const;
};

template <class T>
class Engine;

/// T is float or double: the values of A, the vectors, and the accumulation (FP32 accumulates in
/// FP32, as the paper's CT products do).
template <class T>
class Operator {
 public:
  /// Validates `a` against `shape` (see validate), then prepares the backend's layout: A with
  /// each column split into (block, column in block), the transposed index, the workspaces.
  template <class I>
  static Operator create(const Shape& shape, CsrView<T, I> a, const Options& options = {});
  static Operator create(const FirstBlockRow<T>& a, const Options& options = {});

  Operator(Operator&&) noexcept;
  Operator& operator=(Operator&&) noexcept;
  ~Operator();

  /// y = op(C) x for `nrhs` vectors stored one after another. Each input vector is block-major,
  /// [k][nb] for C and [k][mb] for C^T, and each output [k][mb] for C, [k][nb] for C^T. Calls on
  /// one operator must not overlap in time (the workspaces are the operator's).
  void apply(Op op, std::span<const T> x, std::span<T> y, index_t nrhs = 1);
  /// apply on device pointers (Backend::Cuda only), ordered after the work queued on `stream` (a
  /// cudaStream_t; null is the default stream), asynchronous with respect to the host.
  void apply_device(Op op, const T* x, T* y, index_t nrhs = 1, void* stream = nullptr);

  const Shape& shape() const { return shape_; }
  std::int64_t nnz() const { return nnz_; }
  /// Bytes the operator holds: A's layout, the transposed index, the workspaces.
  std::size_t memory_bytes() const;
  Choices choices() const;

 private:
  Operator(Shape shape, std::int64_t nnz, std::unique_ptr<Engine<T>> engine);

  Shape shape_;
  std::int64_t nnz_ = 0;
  std::unique_ptr<Engine<T>> engine_;
};

/// The CSR of C itself ((k*mb) x (k*nb), k*nnz(A) entries, each row's columns ascending with
/// repeated columns summed), for small operators: tests, scipy export. Throws when k*nnz(A) is
/// above `max_entries`.
template <class T>
FirstBlockRow<T> assemble(const FirstBlockRow<T>& a, std::int64_t max_entries = 100'000'000);

}  // namespace shiftop::circ
