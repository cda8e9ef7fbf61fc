// Issue 18's CPU benchmark: shiftop's implicit Hari-Zimmermann GSVD (svd::gsvd_hz, every variant)
// against LAPACK's dggsvd3 (xGGSVP3 preprocessing + the Kogbetliantz xTGSJA, the thesis' Table
// 3.3 reference), values only, on the same square n x n pairs with prescribed generalized
// singular values (tests/support/prescribed_gsvd.hpp: log-uniform over [1e-5, 1e4], X of
// condition --x-condition, formed in long double; thesis section 3.4). One JSON object per line
// on stdout: n, method, seconds (median of --reps), sweeps and transformations (shiftop), the max
// and mean relative error of the generalized singular values against the prescribed ones, and a
// header with the FP64 DGEMM rate and the one-thread DDOT rate (in cache) measured in the same
// process (the floor's compute rates). Threads come from the environment (OMP_NUM_THREADS for
// shiftop, OPENBLAS_NUM_THREADS for LAPACK): bench/run_gsvd_cpu.py runs it on one thread and on
// all. --type complex runs complex pairs against zggsvd3 (still named "dggsvd3" in the output).
#include <cblas.h>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "shiftop/core/error.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "support/prescribed_gsvd.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::GsvdOptions;
using shiftop::svd::Variant;
using Clock = std::chrono::steady_clock;

struct Run {
  std::vector<double> values;  // nonincreasing
  int sweeps = -1;
  long long transformations = -1;
  bool converged = true;
  std::string error;
};

double median_seconds(int reps, const std::function<Run()>& run, Run& last) {
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto start = Clock::now();
    last = run();
    times.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    if (!last.error.empty()) break;
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double dgemm_gflops(int n) {
  std::vector<double> a(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), 1.0), b(a), c(a);
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto start = Clock::now();
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a.data(), n, b.data(), n,
                0.0, c.data(), n);
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return 2.0 * n * n * static_cast<double>(n) / best / 1e9;
}

// DDOT of two length-`len` vectors (in L1/L2 like a column pair of the pointwise method), best of
// 3 batches: the level-1 rate one thread reaches on data in cache.
double ddot_gflops(int len) {
  std::vector<double> x(static_cast<std::size_t>(len), 1.0), y(x);
  const int calls = std::max(1, 200000000 / len);
  double best = 1e30, sink = 0;
  for (int r = 0; r < 3; ++r) {
    const auto start = Clock::now();
    for (int c = 0; c < calls; ++c) {
      sink += cblas_ddot(len, x.data(), 1, y.data(), 1);
      x[static_cast<std::size_t>(c % len)] += 1e-300;  // keep the calls from being hoisted
    }
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  if (sink == 42) std::fprintf(stderr, "\n");
  return 2.0 * len * static_cast<double>(calls) / best / 1e9;
}

template <class T>
Run shiftop_run(const shiftop::testing::PrescribedGsvd<T>& pair, Variant variant) {
  GsvdOptions options;
  options.variant = variant;
  Run run;
  try {
    const auto r = shiftop::svd::gsvd_hz(pair.f.data(), pair.m, pair.m, pair.g.data(), pair.p,
                                         pair.p, pair.n, options);
    run.values = r.values();
    run.sweeps = r.stats.sweeps;
    run.transformations = static_cast<long long>(r.stats.transformations);
    run.converged = r.stats.converged;
  } catch (const std::exception& e) {
    run.error = e.what();
  }
  return run;
}

// LAPACK's xGGSVD3 (dggsvd3 or zggsvd3), values only.
template <class T>
Run ggsvd3_run(const shiftop::testing::PrescribedGsvd<T>& pair) {
  std::vector<T> a = pair.f, b = pair.g;
  const auto m = static_cast<lapack_int>(pair.m), p = static_cast<lapack_int>(pair.p),
             n = static_cast<lapack_int>(pair.n);
  std::vector<double> alpha(static_cast<std::size_t>(n)), beta(alpha.size());
  std::vector<T> dummy(1);
  std::vector<lapack_int> iwork(static_cast<std::size_t>(n));
  lapack_int k = 0, l = 0, info = 0;
  if constexpr (std::is_same_v<T, double>)
    info = LAPACKE_dggsvd3(LAPACK_COL_MAJOR, 'N', 'N', 'N', m, n, p, &k, &l, a.data(), m, b.data(),
                           p, alpha.data(), beta.data(), dummy.data(), 1, dummy.data(), 1,
                           dummy.data(), 1, iwork.data());
  else
    info = LAPACKE_zggsvd3(LAPACK_COL_MAJOR, 'N', 'N', 'N', m, n, p, &k, &l, a.data(), m, b.data(),
                           p, alpha.data(), beta.data(), dummy.data(), 1, dummy.data(), 1,
                           dummy.data(), 1, iwork.data());
  Run run;
  if (info != 0) run.error = "ggsvd3 info " + std::to_string(info);
  if (k != 0 || l != n)  // G of full column rank: k = 0, l = n
    run.error = "ggsvd3: k = " + std::to_string(k) + ", l = " + std::to_string(l);
  for (lapack_int i = k; i < k + l; ++i)
    run.values.push_back(alpha[static_cast<std::size_t>(i)] / beta[static_cast<std::size_t>(i)]);
  std::sort(run.values.begin(), run.values.end(), std::greater<>());
  return run;
}

// The largest and the mean relative error of the nonzero prescribed values.
std::pair<double, double> relative_errors(const std::vector<double>& got,
                                          const std::vector<double>& prescribed) {
  if (got.size() != prescribed.size()) return {NAN, NAN};
  double worst = 0, sum = 0;
  int count = 0;
  for (std::size_t i = 0; i < prescribed.size(); ++i)
    if (prescribed[i] > 0) {
      const double e = std::abs(got[i] - prescribed[i]) / prescribed[i];
      worst = std::max(worst, e);
      sum += e;
      ++count;
    }
  return {worst, count ? sum / count : 0.0};
}

std::vector<std::string> split(const std::string& value) {
  std::vector<std::string> items;
  for (std::size_t at = 0; at < value.size();) {
    const std::size_t comma = value.find(',', at);
    items.push_back(value.substr(at, comma - at));
    at = comma == std::string::npos ? value.size() : comma + 1;
  }
  return items;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{250, 500};
  int reps = 3, lapack_max_n = 1000000;
  unsigned seed = 18;
  double x_condition = 10;
  std::string type = "real";
  std::vector<std::string> methods{"pointwise", "block-oriented", "full-block", "auto", "dggsvd3"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--sizes") {
      sizes.clear();
      for (const std::string& s : split(value))
        sizes.push_back(std::stoi(s));
    } else if (flag == "--reps") {
      reps = std::stoi(value);
    } else if (flag == "--methods") {
      methods = split(value);
    } else if (flag == "--x-condition") {
      x_condition = std::stod(value);
    } else if (flag == "--lapack-max-n") {
      lapack_max_n = std::stoi(value);
    } else if (flag == "--type") {
      type = value;
    } else if (flag == "--seed") {
      seed = static_cast<unsigned>(std::stoul(value));
    } else {
      std::fprintf(stderr,
                   "gsvd_cpu: unknown option %s (--sizes, --reps, --methods, --x-condition, "
                   "--lapack-max-n, --type, --seed)\n",
                   flag.c_str());
      return 2;
    }
  }
  if (type != "real" && type != "complex") {
    std::fprintf(stderr, "gsvd_cpu: --type: expected real or complex, not '%s'\n", type.c_str());
    return 2;
  }
  for (const std::string& method : methods)
    if (method != "pointwise" && method != "block-oriented" && method != "full-block" &&
        method != "auto" && method != "dggsvd3") {
      std::fprintf(stderr,
                   "gsvd_cpu: --methods: unknown method '%s' (pointwise, block-oriented, "
                   "full-block, auto, dggsvd3)\n",
                   method.c_str());
      return 2;
    }
  const char* threads = std::getenv("OMP_NUM_THREADS");
  std::printf(
      "{\"dgemm_gflops\": %.2f, \"ddot_gflops_one_thread\": %.2f, \"omp_num_threads\": \"%s\", "
      "\"x_condition\": %g, \"seed\": %u}\n",
      dgemm_gflops(1024), ddot_gflops(1000), threads ? threads : "", x_condition, seed);
  std::fflush(stdout);
  {  // warm-up: OpenMP's threads and the first page faults stay out of the first timing
    const auto small = shiftop::testing::random_gsvd_pair<double>(64, 64, 64, seed, x_condition);
    shiftop_run(small, Variant::Pointwise);
    shiftop_run(small, Variant::BlockOriented);
  }
  // Every size for one element type (real: dggsvd3, complex: zggsvd3 as "dggsvd3").
  const auto run_all = [&]<class T>() {
    constexpr bool is_complex = !std::is_same_v<T, double>;
    for (int n : sizes) {
      const auto start = Clock::now();
      const auto pair = shiftop::testing::random_gsvd_pair<T>(
          n, n, n, seed + static_cast<unsigned>(n), x_condition);
      const double generated = std::chrono::duration<double>(Clock::now() - start).count();
      const int r = n >= 1000 ? 1 : reps;
      for (const std::string& method : methods) {
        if (method == "dggsvd3" && n > lapack_max_n) continue;
        const Variant variant = method == "pointwise"        ? Variant::Pointwise
                                : method == "block-oriented" ? Variant::BlockOriented
                                : method == "full-block"     ? Variant::FullBlock
                                                             : Variant::Auto;
        Run last;
        const double seconds = median_seconds(
            r, [&] { return method == "dggsvd3" ? ggsvd3_run(pair) : shiftop_run(pair, variant); },
            last);
        const auto [worst, mean] = relative_errors(last.values, pair.sigma);
        std::printf(
            "{\"n\": %d, \"m\": %d, \"p\": %d, \"type\": \"%s\", \"method\": \"%s\", \"seconds\": "
            "%.6f, \"reps\": %d, "
            "\"sweeps\": %d, \"transformations\": %lld, \"converged\": %s, "
            "\"max_relative_error\": %.3e, \"mean_relative_error\": %.3e, "
            "\"condition_measure\": %.3e, \"generation_seconds\": %.2f, \"error\": \"%s\"}\n",
            n, n, n, is_complex ? "complex" : "real", method.c_str(), seconds, r, last.sweeps,
            last.transformations, last.converged ? "true" : "false", worst, mean,
            pair.sigma.front() / pair.sigma.back(), generated, last.error.c_str());
        std::fflush(stdout);
      }
    }
  };
  if (type == "real")
    run_all.template operator()<double>();
  else
    run_all.template operator()<std::complex<double>>();
  return 0;
}
