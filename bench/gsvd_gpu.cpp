// Issue 18's GPU benchmark: shiftop's batched implicit Hari-Zimmermann GSVD on the GPU
// (svd/gsvd.hpp, backend cuda) against the CPU gsvd_hz_batched on all cores of the host (OpenMP
// over the pairs) and against LAPACK's dggsvd3 / zggsvd3 looped over the pairs (OpenMP over the
// pairs, one BLAS thread each), on the same batch of pairs with prescribed generalized singular
// values (tests/support/prescribed_gsvd.hpp: log-uniform over [1e-5, 1e4], X of condition
// --x-condition; --distinct pairs are formed, in long double, and repeated to fill the batch).
// Per method: the median and minimum of --reps timed calls (wall clock around the whole call:
// the GPU's includes the copies to and from the device and the host's checks), the largest and
// mean relative error of the values against the prescribed ones, the largest sweep count and the
// pairs that did not converge. One JSON object on stdout; bench/run_gsvd_gpu.py runs it.
//
// --model heat|wave instead: the Nt + 1 frequency pairs (F^[w], R^[w]), w = 0..Nt, of the p2o map
// of models/heat2d.hpp or wave2d.hpp (--grid points per side, --nd sensors, --nm sources, --nt
// steps; default layouts), F^[w] = sum_t F_t exp(-2 pi i w t / L), L = 2 Nt (a direct DFT of the
// kernels, in double), R^[w] = inverse::Regulariser{mass 1, first time derivative}.symbol(w, L)
// (2 Nm x Nm): the pairs of inverse::RegularizationPath. No prescribed values there: the errors are
// the relative differences of the first min(Nd, Nm) values (F^[w] has rank <= Nd) against LAPACK's
// (or, without it, the CPU's).
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
#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/inverse/regpath.hpp"
#include "shiftop/models/heat2d.hpp"
#include "shiftop/models/wave2d.hpp"
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
  std::string model = "prescribed";  // or heat, wave: the frequency pairs of a p2o map
  index_t grid = 32, nd = 32, nm = 64, nt = 256;
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
  std::vector<double> sigma;  // batch x n, prescribed (empty for a model's pairs)
};

// The frequency pairs of a model (see the top): c.batch, m, p, n are set from the model.
Pairs<std::complex<double>> model_pairs(Config& c) {
  using Complex = std::complex<double>;
  const std::vector<double> kernels =
      c.model == "heat"
          ? shiftop::models::Heat2d::with_default_layout(c.grid, c.nm, c.nd, c.nt).kernels()
          : shiftop::models::Wave2d::with_default_layout(c.grid, c.nm, c.nd, c.nt).kernels();
  const index_t nd = c.nd, nm = c.nm, nt = c.nt, period = 2 * nt;
  shiftop::inverse::Regulariser regulariser;
  regulariser.mass = 1;
  regulariser.time_derivative = 1;
  c.batch = nt + 1;
  c.m = nd;
  c.n = nm;
  c.p = regulariser.rows(nm);
  std::vector<Complex> twiddle(static_cast<std::size_t>(period));
  for (index_t k = 0; k < period; ++k)
    twiddle[static_cast<std::size_t>(k)] = std::polar(
        1.0, -2 * std::acos(-1.0) * static_cast<double>(k) / static_cast<double>(period));
  Pairs<Complex> out;
  out.f.resize(static_cast<std::size_t>(c.batch * nd * nm));
  out.g.resize(static_cast<std::size_t>(c.batch * c.p * nm));
#pragma omp parallel for schedule(dynamic, 1)
  for (index_t w = 0; w <= nt; ++w) {
    Complex* f = out.f.data() + w * nd * nm;
    for (index_t i = 0; i < nd; ++i)
      for (index_t j = 0; j < nm; ++j) {
        const double* series = kernels.data() + (i * nm + j) * nt;
        Complex sum = 0;
        for (index_t t = 0; t < nt; ++t)
          sum += series[t] * twiddle[static_cast<std::size_t>((w * t) % period)];
        f[i + j * nd] = sum;
      }
    const std::vector<Complex> r = regulariser.symbol(nm, w, period);
    std::copy(r.begin(), r.end(), out.g.begin() + w * c.p * nm);
  }
  return out;
}

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
Outcome run_gpu(const std::shared_ptr<shiftop::gpu::Context>& context, const Pairs<T>& pairs,
                const Config& c) {
  GsvdOptions options;
  options.compute_vectors = c.vectors;
  options.backend = shiftop::Backend::Cuda;
  options.gpu.context = context;
  return from_result(shiftop::svd::gsvd_hz_batched(pairs.f.data(), c.m, c.m * c.n, pairs.g.data(),
                                                   c.p, c.p * c.n, c.batch, c.m, c.p, c.n,
                                                   options));
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

/// Largest and mean relative difference of the first `count` values of every pair (n each).
std::pair<double, double> differences(const std::vector<double>& got,
                                      const std::vector<double>& want, index_t n, index_t count) {
  double worst = 0, sum = 0;
  long long terms = 0;
  for (std::size_t b = 0; b * static_cast<std::size_t>(n) < want.size(); ++b)
    for (index_t i = 0; i < count; ++i) {
      const std::size_t at = b * static_cast<std::size_t>(n) + static_cast<std::size_t>(i);
      const double e = std::abs(got[at] - want[at]) / want[at];
      worst = std::isnan(e) ? NAN : std::max(worst, e);
      sum += e;
      ++terms;
    }
  return {worst, terms > 0 ? sum / static_cast<double>(terms) : 0.0};
}

template <class T>
Json run_all(Config& c, const Pairs<T>& pairs) {
  Json out;
  std::shared_ptr<shiftop::gpu::Context> context;
  std::vector<std::pair<std::size_t, Outcome>> outcomes;  // (record index, outcome)
  for (const std::string& method : c.methods) {
    Json record{{"method", method}};
    try {
      std::function<Outcome()> call;
      if (method == "gpu") {
        if (!context) context = shiftop::gpu::Context::create(c.device);
        call = [&] { return run_gpu(context, pairs, c); };
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
      record["seconds_median"] = times[times.size() / 2];
      record["seconds_min"] = times.front();
      record["ms_per_pair"] = 1e3 * times[times.size() / 2] / static_cast<double>(c.batch);
      record["max_sweeps"] = last.max_sweeps;
      record[method == "lapack" ? "failed_pairs" : "unconverged_pairs"] = last.unconverged;
      if (!pairs.sigma.empty()) {
        const auto [worst, mean] = errors(last.values, pairs.sigma);
        record["max_relative_error"] = worst;
        record["mean_relative_error"] = mean;
      }
      outcomes.emplace_back(out["methods"].size(), std::move(last));
    } catch (const std::exception& e) {
      record["error"] = e.what();
    }
    std::fprintf(stderr, "%s\n", record.dump().c_str());
    out["methods"].push_back(record);
  }
  if (pairs.sigma.empty() && !outcomes.empty()) {
    // A model's pairs: against LAPACK's values where it ran, else the CPU's, else the first.
    const auto method_of = [&](std::size_t k) {
      return out["methods"][outcomes[k].first]["method"].get<std::string>();
    };
    std::size_t reference = 0;
    for (const char* preferred : {"cpu", "lapack"})
      for (std::size_t k = 0; k < outcomes.size(); ++k)
        if (method_of(k) == preferred) reference = k;
    out["reference"] = out["methods"][outcomes[reference].first]["method"];
    const index_t count = std::min(c.m, c.n);
    for (const auto& [index, outcome] : outcomes) {
      const auto [worst, mean] =
          differences(outcome.values, outcomes[reference].second.values, c.n, count);
      out["methods"][index]["max_relative_difference"] = worst;
      out["methods"][index]["mean_relative_difference"] = mean;
    }
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
  app.add_option("--model", c.model, "prescribed pairs, or a model's frequency pairs")
      ->check(CLI::IsMember({"prescribed", "heat", "wave"}));
  app.add_option("--grid", c.grid, "model: interior grid points per side")
      ->check(CLI::PositiveNumber);
  app.add_option("--nd", c.nd, "model: sensors")->check(CLI::PositiveNumber);
  app.add_option("--nm", c.nm, "model: sources")->check(CLI::PositiveNumber);
  app.add_option("--nt", c.nt, "model: time steps")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);
  // LAPACK runs one pair per OpenMP thread: run with OPENBLAS_NUM_THREADS=1 (run_gsvd_gpu.py
  // does; the generic -lblas does not export openblas_set_num_threads to call here).
  Json out;
  const auto start = Clock::now();
  if (c.model != "prescribed") {
    c.type = "z";
    const auto pairs = model_pairs(c);
    out = run_all(c, pairs);
  } else if (c.type == "d") {
    const auto pairs = make_pairs<double>(c);
    out = run_all(c, pairs);
  } else {
    const auto pairs = make_pairs<std::complex<double>>(c);
    out = run_all(c, pairs);
  }
  out["total_seconds"] = std::chrono::duration<double>(Clock::now() - start).count();
  out["model"] = c.model;
  if (c.model != "prescribed") {
    out["grid"] = c.grid;
    out["nd"] = c.nd;
    out["nm"] = c.nm;
    out["nt"] = c.nt;
  }
  out["batch"] = c.batch;
  out["m"] = c.m;
  out["p"] = c.p;
  out["n"] = c.n;
  out["type"] = c.type;
  out["vectors"] = c.vectors;
  out["x_condition"] = c.x_condition;
  if (c.model == "prescribed") out["distinct_pairs"] = std::min<index_t>(c.batch, c.distinct);
  out["omp_threads"] = omp_get_max_threads();
  std::printf("%s\n", out.dump().c_str());
  bool failed = false;
  for (const auto& record : out["methods"])
    failed = failed || record.contains("error");
  return failed ? 3 : 0;
}
