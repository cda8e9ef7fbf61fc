// Issue 18's GPU benchmark: shiftop's batched implicit Hari-Zimmermann GSVD on the GPU
// (svd/gsvd_gpu.hpp) against the CPU gsvd_hz_batched on all cores of the host (OpenMP over the
// pairs) and against LAPACK's dggsvd3 / zggsvd3 looped over the pairs (OpenMP over the pairs, one
// BLAS thread each), on the same batch of pairs with prescribed generalized singular values
// (tests/support/prescribed_gsvd.hpp: log-uniform over [1e-5, 1e4], X of condition
// --x-condition; --distinct pairs are formed, in long double, and repeated to fill the batch).
// Per method: the median and minimum of --reps timed calls (wall clock around the whole call:
// the GPU's includes the copies to and from the device and the host's checks), the largest and
// mean relative error of the values against the prescribed ones, the largest sweep count and the
// pairs that did not converge. One JSON object on stdout; bench/run_gsvd_gpu.py runs it.
#include <cblas.h>
#include <lapacke.h>
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <vector>

#include "shiftop/gpu/context.hpp"
#include "shiftop/svd/gsvd.hpp"
#include "shiftop/svd/gsvd_gpu.hpp"
#include "support/prescribed_gsvd.hpp"

namespace {

using shiftop::index_t;
using shiftop::svd::GsvdOptions;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

struct Config {
  index_t batch = 1001, m = 100, p = 100, n = 100;
  std::string type = "d";
  std::vector<std::string> methods{"gpu", "cpu", "lapack"};
  int reps = 3, warmup = 1, distinct = 64, device = 0;
  bool vectors = false;
  double x_condition = 10;
  unsigned seed = 18;
};

/// The values sigma_f / sigma_g of every pair (batch x n, each nonincreasing), the stats' summary.
struct Outcome {
  std::vector<double> values;
  int max_sweeps = 0;
  long long unconverged = 0;
};

template <class T>
struct Pairs {
  std::vector<T> f, g;
  std::vector<double> sigma;  // batch x n, prescribed
};

template <class T>
Pairs<T> make_pairs(const Config& c) {
  const int distinct = static_cast<int>(std::min<index_t>(c.batch, std::max(1, c.distinct)));
  std::vector<shiftop::testing::PrescribedGsvd<T>> made(static_cast<std::size_t>(distinct));
#pragma omp parallel for schedule(dynamic, 1)
  for (int k = 0; k < distinct; ++k)
    made[static_cast<std::size_t>(k)] = shiftop::testing::random_gsvd_pair<T>(
        c.m, c.p, c.n, c.seed + static_cast<unsigned>(k), c.x_condition);
  Pairs<T> out;
  for (index_t b = 0; b < c.batch; ++b) {
    const auto& pair = made[static_cast<std::size_t>(b % distinct)];
    out.f.insert(out.f.end(), pair.f.begin(), pair.f.end());
    out.g.insert(out.g.end(), pair.g.begin(), pair.g.end());
    out.sigma.insert(out.sigma.end(), pair.sigma.begin(), pair.sigma.end());
  }
  return out;
}

template <class T>
Outcome from_result(const shiftop::svd::BatchedGsvdResult<T>& r) {
  Outcome out;
  out.values.resize(r.sigma_f.size());
  for (std::size_t i = 0; i < out.values.size(); ++i)
    out.values[i] = r.sigma_f[i] / r.sigma_g[i];
  for (const auto& s : r.stats) {
    out.max_sweeps = std::max(out.max_sweeps, s.sweeps);
    out.unconverged += s.converged ? 0 : 1;
  }
  return out;
}

template <class T>
Outcome run_gpu(const shiftop::gpu::Context& context, const Pairs<T>& pairs, const Config& c) {
  GsvdOptions options;
  options.compute_vectors = c.vectors;
  return from_result(shiftop::svd::gsvd_hz_batched(context, pairs.f.data(), c.m, c.m * c.n,
                                                   pairs.g.data(), c.p, c.p * c.n, c.batch, c.m,
                                                   c.p, c.n, options));
}

template <class T>
Outcome run_cpu(const Pairs<T>& pairs, const Config& c) {
  GsvdOptions options;
  options.compute_vectors = c.vectors;
  return from_result(shiftop::svd::gsvd_hz_batched(pairs.f.data(), c.m, c.m * c.n, pairs.g.data(),
                                                   c.p, c.p * c.n, c.batch, c.m, c.p, c.n,
                                                   options));
}

// xGGSVD3 per pair, OpenMP over the pairs (one BLAS thread each). With vectors: U, V, Q.
template <class T>
Outcome run_lapack(const Pairs<T>& pairs, const Config& c) {
  const auto m = static_cast<lapack_int>(c.m), p = static_cast<lapack_int>(c.p),
             n = static_cast<lapack_int>(c.n);
  Outcome out;
  out.values.assign(static_cast<std::size_t>(c.batch * c.n), NAN);
  long long failures = 0;
  const char job = c.vectors ? 'U' : 'N', jobv = c.vectors ? 'V' : 'N',
             jobq = c.vectors ? 'Q' : 'N';
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : failures)
  for (index_t b = 0; b < c.batch; ++b) {
    std::vector<T> a(pairs.f.begin() + b * c.m * c.n, pairs.f.begin() + (b + 1) * c.m * c.n);
    std::vector<T> g(pairs.g.begin() + b * c.p * c.n, pairs.g.begin() + (b + 1) * c.p * c.n);
    std::vector<double> alpha(static_cast<std::size_t>(n)), beta(alpha.size());
    std::vector<T> u(c.vectors ? static_cast<std::size_t>(m * m) : 1),
        v(c.vectors ? static_cast<std::size_t>(p * p) : 1),
        q(c.vectors ? static_cast<std::size_t>(n * n) : 1);
    std::vector<lapack_int> iwork(static_cast<std::size_t>(n));
    lapack_int k = 0, l = 0, info = 0;
    const lapack_int ldu = c.vectors ? m : 1, ldv = c.vectors ? p : 1, ldq = c.vectors ? n : 1;
    if constexpr (std::is_same_v<T, double>)
      info = LAPACKE_dggsvd3(LAPACK_COL_MAJOR, job, jobv, jobq, m, n, p, &k, &l, a.data(), m,
                             g.data(), p, alpha.data(), beta.data(), u.data(), ldu, v.data(), ldv,
                             q.data(), ldq, iwork.data());
    else
      info = LAPACKE_zggsvd3(LAPACK_COL_MAJOR, job, jobv, jobq, m, n, p, &k, &l,
                             reinterpret_cast<lapack_complex_double*>(a.data()), m,
                             reinterpret_cast<lapack_complex_double*>(g.data()), p, alpha.data(),
                             beta.data(), reinterpret_cast<lapack_complex_double*>(u.data()), ldu,
                             reinterpret_cast<lapack_complex_double*>(v.data()), ldv,
                             reinterpret_cast<lapack_complex_double*>(q.data()), ldq, iwork.data());
    if (info != 0 || k != 0 || l != n) {
      ++failures;
      continue;
    }
    std::vector<double> values;
    for (lapack_int i = 0; i < l; ++i)
      values.push_back(alpha[static_cast<std::size_t>(i)] / beta[static_cast<std::size_t>(i)]);
    std::sort(values.begin(), values.end(), std::greater<>());
    std::copy(values.begin(), values.end(), out.values.begin() + b * c.n);
  }
  out.unconverged = failures;
  return out;
}

/// Largest and mean relative error of the nonzero prescribed values (NaN: a failed pair).
std::pair<double, double> errors(const std::vector<double>& got, const std::vector<double>& want) {
  double worst = 0, sum = 0;
  long long count = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (want[i] > 0) {
      const double e = std::abs(got[i] - want[i]) / want[i];
      worst = std::isnan(e) ? NAN : std::max(worst, e);
      sum += e;
      ++count;
    }
  return {worst, count > 0 ? sum / static_cast<double>(count) : 0.0};
}

template <class T>
Json run_all(const Config& c) {
  Json out;
  const auto start = Clock::now();
  const Pairs<T> pairs = make_pairs<T>(c);
  out["generation_seconds"] = std::chrono::duration<double>(Clock::now() - start).count();
  std::shared_ptr<shiftop::gpu::Context> context;
  for (const std::string& method : c.methods) {
    Json record{{"method", method}};
    try {
      std::function<Outcome()> call;
      if (method == "gpu") {
        if (!context) context = shiftop::gpu::Context::create(c.device);
        call = [&] { return run_gpu(*context, pairs, c); };
      } else if (method == "cpu") {
        call = [&] { return run_cpu(pairs, c); };
      } else {
        call = [&] { return run_lapack(pairs, c); };
      }
      Outcome last;
      for (int w = 0; w < c.warmup; ++w)
        last = call();
      std::vector<double> times;
      for (int r = 0; r < c.reps; ++r) {
        const auto t0 = Clock::now();
        last = call();
        times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      }
      std::sort(times.begin(), times.end());
      const auto [worst, mean] = errors(last.values, pairs.sigma);
      record["seconds_median"] = times[times.size() / 2];
      record["seconds_min"] = times.front();
      record["ms_per_pair"] = 1e3 * times[times.size() / 2] / static_cast<double>(c.batch);
      record["max_relative_error"] = worst;
      record["mean_relative_error"] = mean;
      record["max_sweeps"] = last.max_sweeps;
      record[method == "lapack" ? "failed_pairs" : "unconverged_pairs"] = last.unconverged;
    } catch (const std::exception& e) {
      record["error"] = e.what();
    }
    std::fprintf(stderr, "%s\n", record.dump().c_str());
    out["methods"].push_back(record);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"Batched GSVD: shiftop GPU vs CPU vs LAPACK xGGSVD3"};
  app.add_option("--batch", c.batch)->check(CLI::PositiveNumber);
  app.add_option("--m", c.m)->check(CLI::PositiveNumber);
  app.add_option("--p", c.p)->check(CLI::PositiveNumber);
  app.add_option("--n", c.n)->check(CLI::PositiveNumber);
  app.add_option("--type", c.type)->check(CLI::IsMember({"d", "z"}));
  app.add_option("--methods", c.methods)
      ->delimiter(',')
      ->check(CLI::IsMember({"gpu", "cpu", "lapack"}));
  app.add_option("--reps", c.reps)->check(CLI::PositiveNumber);
  app.add_option("--warmup", c.warmup)->check(CLI::NonNegativeNumber);
  app.add_option("--distinct", c.distinct, "distinct pairs formed, repeated to fill the batch")
      ->check(CLI::PositiveNumber);
  app.add_option("--x-condition", c.x_condition)->check(CLI::Range(1.0, 1e15));
  app.add_option("--seed", c.seed);
  app.add_option("--device", c.device);
  app.add_flag("--vectors", c.vectors, "U, V and X as well (LAPACK: U, V, Q)");
  CLI11_PARSE(app, argc, argv);
  openblas_set_num_threads(1);  // LAPACK runs one pair per OpenMP thread
  Json out = c.type == "d" ? run_all<double>(c) : run_all<std::complex<double>>(c);
  out["batch"] = c.batch;
  out["m"] = c.m;
  out["p"] = c.p;
  out["n"] = c.n;
  out["type"] = c.type;
  out["vectors"] = c.vectors;
  out["x_condition"] = c.x_condition;
  out["distinct_pairs"] = std::min<index_t>(c.batch, c.distinct);
  out["omp_threads"] = omp_get_max_threads();
  std::printf("%s\n", out.dump().c_str());
  bool failed = false;
  for (const auto& record : out["methods"])
    failed = failed || record.contains("error");
  return failed ? 3 : 0;
}
