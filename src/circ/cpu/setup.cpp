// The CPU engine's creation: threads and their rows, workspaces, and the kernel, chosen by a
// short measured probe under Planning::Measure (sparse-block-circulant-spmv, section 3.1: which
// of MM, MM-2 and MM-2-s is fastest, and for which s, depends on the compiler and the machine).
#include <omp.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <random>
#include <tuple>

#include <fmt/format.h>
#include "circ/cpu/engine.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"

namespace shiftop::circ {

namespace {

// Rows [split[t], split[t+1]) for thread t, balancing nonzeros plus one per row (each row's
// output is zeroed and stored).
std::vector<std::int64_t> split_rows(const std::vector<std::int64_t>& indptr, int threads) {
  const auto rows = static_cast<std::int64_t>(indptr.size()) - 1;
  const std::int64_t total = indptr.back() + rows;
  std::vector<std::int64_t> split(static_cast<std::size_t>(threads) + 1, rows);
  split[0] = 0;
  std::int64_t row = 0;
  for (int t = 1; t < threads; ++t) {
    const std::int64_t target = total * t / threads;
    while (row < rows && indptr[row] + row < target)
      ++row;
    split[t] = row;
  }
  return split;
}

// Candidates a probe times: every kernel (BlockSpmv only for k <= 8, since it reads A k times)
// and s in {2, 4, 8, 12, 16} for Mm2s, unless the options fix the kernel or s.
std::vector<std::pair<CpuKernel, int>> candidates(const CpuOptions& cpu, index_t k) {
  std::vector<std::pair<CpuKernel, int>> list;
  const auto add_mm2s = [&] {
    if (cpu.maxpy_width > 0) {
      list.emplace_back(CpuKernel::Mm2s, cpu.maxpy_width);
      return;
    }
    for (int s : {2, 4, 8, 12, 16})
      list.emplace_back(CpuKernel::Mm2s, s);
  };
  switch (cpu.kernel) {
    case CpuKernel::Auto:
      if (k <= 8) list.emplace_back(CpuKernel::BlockSpmv, 0);
      list.emplace_back(CpuKernel::Mm, 0);
      list.emplace_back(CpuKernel::Mm2, 1);
      add_mm2s();
      break;
    case CpuKernel::Mm2s:
      add_mm2s();
      break;
    default:
      list.emplace_back(cpu.kernel, cpu.kernel == CpuKernel::Mm2 ? 1 : 0);
  }
  return list;
}

// The probe's result for operators of the same sizes, value type, threads and candidates, so
// that remaking an operator (another file of the same scanner, a new Python object) does not
// probe again. Keyed by sizes, not values: the kernels' speed depends on the pattern, which
// operators of the same sizes from one scanner share.
using ProbeKey =
    std::tuple<index_t, index_t, index_t, std::int64_t, std::size_t, int, index_t, CpuKernel, int>;
std::mutex probe_cache_mutex;
std::map<ProbeKey, Choices> probe_cache;

}  // namespace

template <class T>
CpuEngine<T>::CpuEngine(Layout<T> layout, const Options& options)
    : layout_(std::move(layout)),
      threads_(options.cpu.threads > 0 ? options.cpu.threads : omp_get_max_threads()),
      max_rhs_(options.max_rhs) {
  const Shape& s = layout_.shape;
  split_[0] = split_rows(layout_.indptr, threads_);
  split_[1] = split_rows(layout_.t_indptr, threads_);
  const index_t rows = std::max(s.mb, s.nb);
  in_ = AlignedBuffer<T>(static_cast<std::size_t>(rows * 2 * s.k * max_rhs_));
  out_ = AlignedBuffer<T>(static_cast<std::size_t>(rows * s.k * max_rhs_));
  choices_.backend = Backend::Cpu;
}

template <class T>
void CpuEngine<T>::use(CpuKernel kernel, int width) {
  choices_.cpu_kernel = kernel;
  choices_.maxpy_width = kernel == CpuKernel::Mm2s ? width : 0;
  if (kernel != CpuKernel::BlockSpmv) {
    column_[0] = {};
    column_[1] = {};
    return;
  }
  if (!column_[0].empty()) return;
  // The nonzero's column in the duplicated block-major vector (eq. 2), from the layout's offsets
  // row*2k + t: t*n + row, with n = nb for C and mb for C^T.
  const Shape& s = layout_.shape;
  const auto columns = [&](const std::vector<std::uint32_t>& offset, index_t n) {
    std::vector<std::uint32_t> column(offset.size());
    for (std::size_t e = 0; e < offset.size(); ++e) {
      const std::int64_t row = offset[e] / (2 * s.k), t = offset[e] % (2 * s.k);
      column[e] = static_cast<std::uint32_t>(t * n + row);
    }
    return column;
  };
  column_[0] = columns(layout_.offset, s.nb);
  column_[1] = columns(layout_.t_offset, s.mb);
}

template <class T>
void CpuEngine<T>::choose(const Options& options) {
  const Shape& shape = layout_.shape;
  const auto list = candidates(options.cpu, shape.k);
  if (options.planning == Planning::Estimate || list.size() == 1) {
    const bool mm2s =
        options.cpu.kernel == CpuKernel::Auto || options.cpu.kernel == CpuKernel::Mm2s;
    if (mm2s)
      use(CpuKernel::Mm2s, options.cpu.maxpy_width > 0 ? options.cpu.maxpy_width : 8);
    else
      use(list.front().first, list.front().second);
    return;
  }
  const ProbeKey key{shape.k,  shape.mb, shape.nb,           layout_.nnz(),          sizeof(T),
                     threads_, max_rhs_, options.cpu.kernel, options.cpu.maxpy_width};
  {
    const std::lock_guard lock(probe_cache_mutex);
    if (const auto found = probe_cache.find(key); found != probe_cache.end()) {
      use(found->second.cpu_kernel, found->second.maxpy_width);
      choices_.probe = found->second.probe;
      return;
    }
  }
  // One C and one C^T product per repetition (an iterative solver alternates them), on the same
  // random x for every candidate (C^T writes elsewhere: a repeated x <- C^T C x would drift to
  // subnormals or infinity), after one untimed product that brings A into cache as the solver's
  // would be. The shortest repetition counts: other load on the machine only adds time.
  std::mt19937_64 random(17);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<T> x(static_cast<std::size_t>(shape.cols())),
      y(static_cast<std::size_t>(shape.rows())), back(x.size());
  for (T& v : x)
    v = static_cast<T>(uniform(random));
  std::vector<std::pair<std::string, double>> probe;
  double best = 0;
  std::pair<CpuKernel, int> chosen = list.front();
  for (const auto& [kernel, width] : list) {
    use(kernel, width);
    apply(Op::C, x.data(), y.data(), 1);
    std::vector<double> seconds;
    for (int repetition = 0; repetition < 3; ++repetition) {
      Stopwatch watch;
      apply(Op::C, x.data(), y.data(), 1);
      apply(Op::Ct, y.data(), back.data(), 1);
      seconds.push_back(watch.elapsed());
    }
    const double time = *std::min_element(seconds.begin(), seconds.end());
    probe.emplace_back(
        kernel == CpuKernel::Mm2s ? fmt::format("mm2s s={}", width) : std::string(name_of(kernel)),
        time);
    if (probe.size() == 1 || time < best) {
      best = time;
      chosen = {kernel, width};
    }
  }
  use(chosen.first, chosen.second);
  choices_.probe = std::move(probe);
  const std::lock_guard lock(probe_cache_mutex);
  probe_cache[key] = choices_;
}

template <class T>
std::unique_ptr<Engine<T>> make_cpu_engine(Layout<T> layout, const Options& options) {
  auto engine = std::make_unique<CpuEngine<T>>(std::move(layout), options);
  engine->choose(options);
  return engine;
}

template std::unique_ptr<Engine<float>> make_cpu_engine(Layout<float>, const Options&);
template std::unique_ptr<Engine<double>> make_cpu_engine(Layout<double>, const Options&);

}  // namespace shiftop::circ
