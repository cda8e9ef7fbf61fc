// Issue 17's CPU benchmark: the products of a sparse block-circulant operator with every CPU
// kernel (sparse-block-circulant-spmv, section 3.1 and Fig. 3), on the paper's Table 1 shapes
// (random columns) and on the ct2d scanner's own matrices, FP32 and FP64. The paper's protocol:
// 20 products alternating C and C^T, the shortest of three attempts. Each kernel's result is
// checked against a long double product on sampled rows before it is timed. The memory bandwidth
// is measured in the same process; the floor of a kernel is its compulsory bytes over it.
// Prints one JSON object per case (bench/run_circ_cpu.py collects them).
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "shiftop/circ/operator.hpp"
#include "shiftop/core/memory_bandwidth.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/models/ct2d.hpp"

namespace {

using shiftop::index_t;
namespace circ = shiftop::circ;

// A random first block row: `per_row` nonzeros per row at distinct uniformly random columns,
// values uniform in (0, 1] (the pattern has none of a scanner's locality: a worst case for the
// gathers of the dense operand).
template <class T>
circ::FirstBlockRow<T> random_first_block_row(const circ::Shape& shape, index_t per_row,
                                              std::uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<std::int64_t> column(0, shape.cols() - 1);
  std::uniform_real_distribution<double> value(0.0, 1.0);
  circ::FirstBlockRow<T> a;
  a.shape = shape;
  a.indptr.push_back(0);
  std::vector<std::int64_t> row;
  for (index_t r = 0; r < shape.mb; ++r) {
    row.clear();
    while (static_cast<index_t>(row.size()) < per_row)
      row.push_back(column(random));
    std::sort(row.begin(), row.end());
    row.erase(std::unique(row.begin(), row.end()), row.end());
    for (auto c : row) {
      a.indices.push_back(c);
      a.data.push_back(static_cast<T>(1.0 - value(random)));
    }
    a.indptr.push_back(static_cast<std::int64_t>(a.indices.size()));
  }
  return a;
}

// Largest relative error of op(C) x on `samples` rows spread over the output, against the same
// rows computed from the first block row in long double (eq. 2 for C, its transpose for C^T).
template <class T>
double sampled_error(const circ::FirstBlockRow<T>& a, circ::Op op, const std::vector<T>& x,
                     const std::vector<T>& y, int samples) {
  const auto& s = a.shape;
  const index_t m = op == circ::Op::C ? s.rows() : s.cols();
  double worst = 0, scale = 0;
  for (T v : y)
    scale = std::max(scale, std::abs(static_cast<double>(v)));
  std::vector<long double> exact(static_cast<std::size_t>(samples), 0.0L);
  std::vector<index_t> rows(static_cast<std::size_t>(samples));
  for (int q = 0; q < samples; ++q)
    rows[q] = (m - 1) * q / std::max(1, samples - 1);
  if (op == circ::Op::C) {
    for (int q = 0; q < samples; ++q) {
      const index_t i = rows[q] / s.mb, r = rows[q] % s.mb;
      for (auto e = a.indptr[r]; e < a.indptr[r + 1]; ++e) {
        const index_t d = a.indices[e] / s.nb, l = a.indices[e] % s.nb;
        exact[q] += static_cast<long double>(a.data[e]) * x[((i + d) % s.k) * s.nb + l];
      }
    }
  } else {  // x_i[l] = sum over nonzeros (r, d*nb + l) of v * y_{(i-d) mod k}[r]
    for (index_t r = 0; r < s.mb; ++r)
      for (auto e = a.indptr[r]; e < a.indptr[r + 1]; ++e) {
        const index_t d = a.indices[e] / s.nb, l = a.indices[e] % s.nb;
        for (int q = 0; q < samples; ++q) {
          const index_t i = rows[q] / s.nb;
          if (rows[q] % s.nb != l) continue;
          exact[q] += static_cast<long double>(a.data[e]) * x[((i - d + s.k) % s.k) * s.mb + r];
        }
      }
  }
  for (int q = 0; q < samples; ++q) {
    const double error = std::abs(static_cast<double>(exact[q] - y[rows[q]])) / scale;
    if (std::isnan(error)) return error;  // a non-finite output
    worst = std::max(worst, error);
  }
  return worst;
}

struct Kernel {
  circ::CpuKernel kernel;
  int s;
  std::string name() const {
    return kernel == circ::CpuKernel::Mm2s ? "mm2s-" + std::to_string(s)
                                           : std::string(shiftop::name_of(kernel));
  }
};

template <class T>
void run_case(const std::string& name, const circ::FirstBlockRow<T>& a,
              const std::vector<Kernel>& kernels, int products, int baseline_products, int attempts,
              const shiftop::MemoryBandwidth& bandwidth) {
  const auto& s = a.shape;
  const double nnz = static_cast<double>(a.nnz());
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<T> x(static_cast<std::size_t>(s.cols())), y(static_cast<std::size_t>(s.rows()));
  for (T& v : x)
    v = static_cast<T>(uniform(random));
  for (const Kernel& kernel : kernels) {
    circ::Options options;
    options.planning = shiftop::Planning::Estimate;
    options.cpu.kernel = kernel.kernel;
    options.cpu.maxpy_width = kernel.s;
    shiftop::Stopwatch setup;
    auto c = circ::Operator<T>::create(a, options);
    const double setup_seconds = setup.elapsed();
    // Correct first: C x and C^T y against long double on 64 sampled rows each.
    std::vector<T> forward(y.size()), back(x.size());
    c.apply(circ::Op::C, x, forward);
    c.apply(circ::Op::Ct, forward, back);
    const double error = std::max(sampled_error(a, circ::Op::C, x, forward, 64),
                                  sampled_error(a, circ::Op::Ct, forward, back, 64));
    // The baseline reads A k times per product: fewer products keep it within minutes.
    const int count = kernel.kernel == circ::CpuKernel::BlockSpmv ? baseline_products : products;
    // C x and C^T y of the same random x and its product y, alternating: C^T writes elsewhere, so
    // no power iteration drives the data to infinity (a first version overwrote x, and FP32
    // overflowed after a few products).
    double best = 1e300;
    for (int attempt = 0; attempt < attempts; ++attempt) {
      shiftop::Stopwatch watch;
      for (int p = 0; p < count; ++p) {
        if (p % 2 == 0)
          c.apply(circ::Op::C, x, y);
        else
          c.apply(circ::Op::Ct, forward, back);
      }
      best = std::min(best, watch.elapsed() / count);
    }
    // Compulsory traffic of one product: A once (value and 32-bit offset per nonzero; k times
    // for the baseline), the input read and the output written once each.
    const double passes =
        kernel.kernel == circ::CpuKernel::BlockSpmv ? static_cast<double>(s.k) : 1.0;
    const double bytes =
        nnz * (sizeof(T) + 4.0) * passes + static_cast<double>((s.rows() + s.cols()) * sizeof(T));
    const double floor = bytes / (bandwidth.read_GBs * 1e9);
    nlohmann::json out = {{"case", name},
                          {"type", sizeof(T) == 4 ? "float32" : "float64"},
                          {"k", s.k},
                          {"mb", s.mb},
                          {"nb", s.nb},
                          {"nnz", a.nnz()},
                          {"kernel", kernel.name()},
                          {"threads", omp_get_max_threads()},
                          {"products", count},
                          {"seconds_per_product", best},
                          {"gflops", 2.0 * static_cast<double>(s.k) * nnz / best * 1e-9},
                          {"floor_bytes", bytes},
                          {"floor_seconds", floor},
                          {"fraction_of_floor", floor / best},
                          {"setup_seconds", setup_seconds},
                          {"memory_bytes", c.memory_bytes()},
                          {"max_relative_error", error},
                          {"read_GBs", bandwidth.read_GBs},
                          {"copy_GBs", bandwidth.copy_GBs}};
    std::printf("%s\n", out.dump().c_str());
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"CPU products of sparse block-circulant operators (issue 17)"};
  std::vector<std::string> cases{"ct-small", "ct-medium", "scanner-small"};
  std::string type = "both";
  std::vector<std::string> kernel_names{"block-spmv", "mm",     "mm2",     "mm2s-2",
                                        "mm2s-4",     "mm2s-8", "mm2s-12", "mm2s-16"};
  int products = 20, baseline_products = 2, attempts = 3;
  app.add_option("--cases", cases,
                 "ct-small, ct-medium (Table 1 shapes, random columns), scanner-small, "
                 "scanner-medium (ct2d presets of about the same sizes)");
  app.add_option("--type", type, "float32, float64 or both")
      ->check(CLI::IsMember({"float32", "float64", "both"}));
  app.add_option("--kernels", kernel_names, "block-spmv, mm, mm2, mm2s-S");
  app.add_option("--products", products, "alternating C / C^T products per attempt");
  app.add_option("--baseline-products", baseline_products, "the same for block-spmv");
  app.add_option("--attempts", attempts, "attempts; the shortest counts");
  CLI11_PARSE(app, argc, argv);

  std::vector<Kernel> kernels;
  for (const auto& n : kernel_names) {
    if (n == "block-spmv")
      kernels.push_back({circ::CpuKernel::BlockSpmv, 0});
    else if (n == "mm")
      kernels.push_back({circ::CpuKernel::Mm, 0});
    else if (n == "mm2")
      kernels.push_back({circ::CpuKernel::Mm2, 0});
    else if (n.rfind("mm2s-", 0) == 0)
      kernels.push_back({circ::CpuKernel::Mm2s, std::stoi(n.substr(5))});
    else {
      std::fprintf(stderr, "--kernels: unknown kernel '%s'\n", n.c_str());
      return 2;
    }
  }
  const auto bandwidth = shiftop::measure_memory_bandwidth(std::size_t{1} << 28);
  std::fprintf(stderr, "bandwidth: read %.1f GB/s, copy %.1f GB/s, %d threads\n",
               bandwidth.read_GBs, bandwidth.copy_GBs, omp_get_max_threads());
  const auto run_type = [&](auto zero) {
    using T = decltype(zero);
    for (const auto& name : cases) {
      circ::FirstBlockRow<T> a;
      if (name == "ct-small")
        a = random_first_block_row<T>({150, 19600, 8560}, 359, 1);
      else if (name == "ct-medium")
        a = random_first_block_row<T>({150, 19600, 37224}, 962, 2);
      else if (name == "scanner-small" || name == "scanner-medium") {
        // shiftop model ct2d's presets ct-small and ct-medium (Table 1's shapes).
        const bool small = name == "scanner-small";
        const shiftop::models::ct2d::Geometry g{.positions = 150,
                                                .rings = small ? 535 : 1551,
                                                .sectors = small ? 2400 : 3600,
                                                .detectors = 19600};
        a = shiftop::models::ct2d::system_matrix<T>(g);
      } else {
        std::fprintf(stderr, "--cases: unknown case '%s'\n", name.c_str());
        std::exit(2);
      }
      std::fprintf(stderr, "%s: %s, %lld nonzeros\n", name.c_str(), a.shape.str().c_str(),
                   static_cast<long long>(a.nnz()));
      run_case<T>(name, a, kernels, products, baseline_products, attempts, bandwidth);
    }
  };
  if (type != "float64") run_type(0.0f);
  if (type != "float32") run_type(0.0);
  return 0;
}
