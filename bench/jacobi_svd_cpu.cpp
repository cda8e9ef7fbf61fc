// Issue 15's CPU benchmark: shiftop's one-sided Jacobi SVD (every variant) against LAPACK's
// dgesvj (one-sided Jacobi), dgejsv (preconditioned Jacobi) and dgesdd (divide and conquer), on
// n x n matrices, singular values only and with U, V. One JSON object per line on stdout:
// n, kind, method, vectors, seconds (median of --reps), sweeps, rotations (shiftop), the
// relative difference of the singular values from dgejsv's (JOBA = 'F', the accuracy anchor), and
// the FP64 DGEMM rate measured in the same process (the floor's compute rate). Threads come from
// the environment (OMP_NUM_THREADS for shiftop, OPENBLAS_NUM_THREADS for LAPACK):
// bench/run_jacobi_svd_cpu.py runs it on one thread and on all.
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "shiftop/svd/jacobi.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::JacobiOptions;
using shiftop::svd::Variant;
using Clock = std::chrono::steady_clock;

std::vector<double> test_matrix(index_t n, const std::string& kind, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<double> a(static_cast<std::size_t>(n * n));
  for (double& x : a)
    x = normal(rng);
  if (kind == "graded") {  // B D, column scales 10^(-12 t) in shuffled order
    std::vector<double> d(static_cast<std::size_t>(n));
    for (index_t j = 0; j < n; ++j)
      d[j] = std::pow(10.0, -12.0 * static_cast<double>(j) / static_cast<double>(n - 1));
    std::shuffle(d.begin(), d.end(), rng);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i)
        a[i + j * n] *= d[j];
  }
  return a;
}

struct Run {
  std::vector<double> sigma;
  int sweeps = -1;
  long long rotations = -1;
};

double median_seconds(int reps, const std::function<Run()>& run, Run& last) {
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    last = run();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double dgemm_gflops(int n) {
  std::vector<double> a(static_cast<std::size_t>(n) * n, 1.0), b(a), c(a);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto start = Clock::now();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n,
                0.0, c.data(), n);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return 2.0 * n * n * static_cast<double>(n) / best / 1e9;
}

Run shiftop_run(const std::vector<double>& a, index_t n, Variant variant, bool vectors) {
  JacobiOptions options;
  options.variant = variant;
  options.compute_u = options.compute_v = vectors;
  const auto r = shiftop::svd::jacobi(a.data(), n, n, n, options);
  if (!r.stats.converged) std::fprintf(stderr, "warning: shiftop did not converge (n = %ld)\n", n);
  return {r.sigma, r.stats.sweeps, static_cast<long long>(r.stats.rotations)};
}

Run dgesvj_run(std::vector<double> a, lapack_int n, bool vectors) {
  std::vector<double> sva(static_cast<std::size_t>(n)),
      v(vectors ? static_cast<std::size_t>(n) * n : 1), stat(6);
  const lapack_int info =
      LAPACKE_dgesvj(LAPACK_COL_MAJOR, 'G', vectors ? 'U' : 'N', vectors ? 'V' : 'N', n, n,
                     a.data(), n, sva.data(), 0, v.data(), vectors ? n : 1, stat.data());
  if (info != 0) std::fprintf(stderr, "warning: dgesvj info %d\n", static_cast<int>(info));
  for (double& s : sva)
    s *= stat[0];
  std::sort(sva.begin(), sva.end(), std::greater<>());
  return {sva, static_cast<int>(stat[3]), -1};  // stat[3]: sweeps
}

Run dgejsv_run(std::vector<double> a, lapack_int n, bool vectors) {
  const std::size_t size = vectors ? static_cast<std::size_t>(n) * n : 1;
  std::vector<double> sva(static_cast<std::size_t>(n)), u(size), v(size), stat(7);
  std::vector<lapack_int> istat(3);
  const lapack_int ld = vectors ? n : 1;
  const lapack_int info = LAPACKE_dgejsv(
      LAPACK_COL_MAJOR, 'F', vectors ? 'U' : 'N', vectors ? 'V' : 'N', 'N', 'N', 'N', n, n,
      a.data(), n, sva.data(), u.data(), ld, v.data(), ld, stat.data(), istat.data());
  if (info != 0) std::fprintf(stderr, "warning: dgejsv info %d\n", static_cast<int>(info));
  for (double& s : sva)
    s *= stat[0] / stat[1];
  return {sva, -1, -1};
}

Run dgesdd_run(std::vector<double> a, lapack_int n, bool vectors) {
  const std::size_t size = vectors ? static_cast<std::size_t>(n) * n : 1;
  std::vector<double> s(static_cast<std::size_t>(n)), u(size), vt(size);
  const lapack_int ld = vectors ? n : 1;
  const lapack_int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, vectors ? 'S' : 'N', n, n, a.data(), n,
                                         s.data(), u.data(), ld, vt.data(), ld);
  if (info != 0) std::fprintf(stderr, "warning: dgesdd info %d\n", static_cast<int>(info));
  return {s, -1, -1};
}

double relative_difference(const std::vector<double>& got, const std::vector<double>& anchor) {
  double worst = 0;
  for (std::size_t i = 0; i < anchor.size(); ++i)
    worst = std::max(worst, std::abs(got[i] - anchor[i]) / anchor[i]);
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{128, 256, 512};
  int reps = 3;
  std::vector<std::string> kinds{"random", "graded"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--sizes") {
      sizes.clear();
      for (std::size_t at = 0; at < value.size();) {
        const std::size_t comma = value.find(',', at);
        sizes.push_back(std::stoi(value.substr(at, comma - at)));
        at = comma == std::string::npos ? value.size() : comma + 1;
      }
    } else if (flag == "--reps") {
      reps = std::stoi(value);
    } else if (flag == "--kinds") {
      kinds = value == "both" ? kinds : std::vector<std::string>{value};
    } else {
      std::fprintf(stderr, "jacobi_svd_cpu: unknown option %s (--sizes, --reps, --kinds)\n",
                   flag.c_str());
      return 2;
    }
  }
  const char* threads = std::getenv("OMP_NUM_THREADS");
  std::printf("{\"dgemm_gflops\": %.2f, \"omp_num_threads\": \"%s\"}\n", dgemm_gflops(1024),
              threads ? threads : "");
  for (int n : sizes)
    for (const std::string& kind : kinds) {
      const std::vector<double> a = test_matrix(n, kind, 42u + static_cast<unsigned>(n));
      const int r = n >= 1024 ? 1 : reps;
      Run anchor;
      median_seconds(
          1, [&] { return dgejsv_run(a, n, false); }, anchor);
      const auto report = [&](const char* method, bool vectors, const std::function<Run()>& run) {
        Run last;
        const double seconds = median_seconds(r, run, last);
        std::printf(
            "{\"n\": %d, \"kind\": \"%s\", \"method\": \"%s\", \"vectors\": %s, \"seconds\": %.6f, "
            "\"sweeps\": %d, \"rotations\": %lld, \"relative_difference_to_dgejsv\": %.3e}\n",
            n, kind.c_str(), method, vectors ? "true" : "false", seconds, last.sweeps,
            last.rotations, relative_difference(last.sigma, anchor.sigma));
        std::fflush(stdout);
      };
      for (bool vectors : {false, true}) {
        report("shiftop auto", vectors, [&] { return shiftop_run(a, n, Variant::Auto, vectors); });
        report("shiftop pointwise", vectors,
               [&] { return shiftop_run(a, n, Variant::Pointwise, vectors); });
        report("shiftop block-oriented", vectors,
               [&] { return shiftop_run(a, n, Variant::BlockOriented, vectors); });
        report("shiftop full-block", vectors,
               [&] { return shiftop_run(a, n, Variant::FullBlock, vectors); });
        report("dgesvj", vectors, [&] { return dgesvj_run(a, n, vectors); });
        report("dgejsv", vectors, [&] { return dgejsv_run(a, n, vectors); });
        report("dgesdd", vectors, [&] { return dgesdd_run(a, n, vectors); });
      }
    }
  return 0;
}
