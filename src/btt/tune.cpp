#include "shiftop/btt/tune.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>

#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/svd/spectrum.hpp"
#ifdef SHIFTOP_HAVE_CUDA
#include "shiftop/gpu/devices.hpp"
#endif

namespace shiftop::btt {
namespace {

// The machine epsilon of a phase: twice the unit roundoff (the paper's eps_s ~ 1e-7).
double epsilon(Precision precision) {
  return 2.0 * unit_roundoff(precision);
}

/// Normal random values whose low 29 mantissa bits (those FP32 drops) are not all zero.
std::vector<double> unrepresentable_in_fp32(index_t count, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::normal_distribution<double> normal;
  std::vector<double> values(static_cast<std::size_t>(count));
  for (double& v : values)
    v = std::bit_cast<double>(std::bit_cast<std::uint64_t>(normal(generator)) | 0x10000001ull);
  return values;
}

/// Runs op of the plan on its backend and waits for it: host arrays on the CPU, device arrays on
/// a GPU (uploaded once), so that the times exclude host-device copies.
class TimedApply {
 public:
  TimedApply(Plan& plan, Op op, const std::vector<double>& x, std::vector<double>& y, bool gpu,
             int device)
      : plan_(plan), op_(op), x_(x), y_(y), device_(device) {
    if (!gpu) return;
#ifdef SHIFTOP_HAVE_CUDA
    device_x_.emplace(x.size(), device);
    device_x_->upload(x.data());
    device_y_.emplace(y.size(), device);
#endif
  }
  void operator()() {
#ifdef SHIFTOP_HAVE_CUDA
    if (device_x_) {
      plan_.apply_device(op_, device_x_->data(), device_y_->data());
      gpu::synchronize(device_);
      return;
    }
#endif
    plan_.apply(op_, x_, y_);
  }
  /// One apply, then its output in host memory.
  const std::vector<double>& result() {
    (*this)();
#ifdef SHIFTOP_HAVE_CUDA
    if (device_y_) device_y_->download(y_.data());
#endif
    return y_;
  }

 private:
  Plan& plan_;
  Op op_;
  const std::vector<double>& x_;
  std::vector<double>& y_;
  int device_;
#ifdef SHIFTOP_HAVE_CUDA  // without CUDA no plan runs on a GPU
  std::optional<gpu::DeviceArray> device_x_, device_y_;
#endif
};

/// ||a - reference|| / ||reference||, or ||a - reference|| where the reference is 0.
double relative_error(std::span<const double> a, std::span<const double> reference) {
  double difference = 0, norm = 0;
  for (std::size_t k = 0; k < reference.size(); ++k) {
    difference += (a[k] - reference[k]) * (a[k] - reference[k]);
    norm += reference[k] * reference[k];
  }
  return norm > 0 ? std::sqrt(difference / norm) : std::sqrt(difference);
}

/// Marks the points no other one beats in both time and error.
void mark_front(std::vector<TunePoint>& points) {
  for (TunePoint& p : points)
    p.pareto = std::none_of(points.begin(), points.end(), [&](const TunePoint& q) {
      return q.milliseconds <= p.milliseconds && q.relative_error <= p.relative_error &&
             (q.milliseconds < p.milliseconds || q.relative_error < p.relative_error);
    });
}

double kappa_of(const Plan& plan, std::span<const double> first_column,
                std::span<const double> first_row, const TuneOptions& options) {
  if (options.kappa > 0) return options.kappa;
  require(!first_column.empty(),
          "tune_precision: kappa(F^) for the error bounds needs the kernels (or options.kappa)");
  require(first_row.empty() == plan.triangular(),
          "tune_precision: the plan is {}, but the first block row given is {}",
          plan.triangular() ? "block lower-triangular" : "general",
          first_row.empty() ? "empty" : "not");
  svd::SpectrumOptions spectrum_options;
  spectrum_options.threads = options.threads;
  return svd::spectrum(first_column, first_row, plan.shape(), spectrum_options).kappa;
}

OpTuning tune_op(Plan& plan, Op op, double kappa, bool gpu, const TuneOptions& options) {
  const Shape& s = plan.shape();
  const std::vector<double> x =
      unrepresentable_in_fp32(input_blocks(op, s) * s.nt, op == Op::F ? 2 : 3);
  std::vector<double> y(static_cast<std::size_t>(output_blocks(op, s) * s.nt));
  TimedApply apply(plan, op, x, y, gpu, options.device);
  OpTuning tuning{.op = op, .points = {}, .input = x};
  std::vector<double> exact;
  // Times the plan as it is set up and compares its result with FP64's (`exact`).
  const auto measure = [&](const PrecisionConfig& config) {
    const std::vector<double>& result = apply.result();
    if (exact.empty()) exact = result;  // the first configuration is DDDDD
    std::vector<double> seconds;
    for (int k = 0; k < options.repetitions; ++k) {
      Stopwatch watch;
      apply();
      seconds.push_back(watch.lap());
    }
    TunePoint point{.precision = config.str(),
                    .gemv_kernel = gpu ? plan.choices().of(op).gemv_name() : "",
                    .milliseconds = median(seconds) * 1e3,
                    .relative_error = relative_error(result, exact),
                    .error_bound = precision_error_bound(config, s, op, kappa),
                    .pareto = false};
    require(std::isfinite(point.relative_error),
            "tune: {} in {} gave a non-finite result (overflow in FP32?)", name_of(op),
            point.label());
    if (options.on_point) options.on_point(op, point);
    tuning.points.push_back(std::move(point));
  };
  const std::vector<PrecisionConfig> configs = PrecisionConfig::all();
  for (std::size_t k = 0; k < configs.size(); ++k) {
    if (options.on_start) options.on_start(op, k, configs.size());
    plan.set_precision(configs[k].str());
    measure(configs[k]);
    if (gpu && configs[k][Phase::Gemv] == Precision::Single &&
        tuning.points.back().gemv_kernel == "cublas") {
      plan.set_gemv(GemvImplementation::Fused);
      measure(configs[k]);
      plan.set_gemv(GemvImplementation::Auto);
    }
  }
  mark_front(tuning.points);
  return tuning;
}

}  // namespace

double precision_error_bound(const PrecisionConfig& p, const Shape& shape, Op op, double kappa) {
  require(op == Op::F || op == Op::Fadj, "precision_error_bound: eq. (6) bounds F and Fadj, not {}",
          name_of(op));
  require(kappa >= 1, "precision_error_bound: kappa(F^) must be at least 1, got {}", kappa);
  const auto eps = [&](Phase phase) { return epsilon(p[phase]); };
  const auto rounds = [&](Phase phase) { return p[phase] == Precision::Single ? 1.0 : 0.0; };
  const double inner = static_cast<double>(op == Op::F ? shape.nm : shape.nd);
  const double log_fft = std::log2(2.0 * static_cast<double>(shape.nt));
  return kappa * (rounds(Phase::Pad) * eps(Phase::Pad) +
                  (epsilon(Precision::Double) + eps(Phase::Fft) + eps(Phase::Ifft)) * log_fft +
                  eps(Phase::Gemv) * inner + rounds(Phase::Unpad) * eps(Phase::Unpad));
}

std::string TunePoint::label() const {
  if (gemv_kernel.empty() || precision.size() < 3 || precision[2] != 'S') return precision;
  return precision + " " + gemv_kernel.substr(0, gemv_kernel.find(' '));
}

const TunePoint* OpTuning::fastest_under(double tolerance) const {
  const TunePoint* best = nullptr;
  for (const TunePoint& p : points)
    if (p.relative_error <= tolerance && (!best || p.milliseconds < best->milliseconds)) best = &p;
  return best;
}

TuneResult tune_precision(Plan& plan, std::span<const double> first_column,
                          std::span<const double> first_row, const TuneOptions& options) {
  require(!options.ops.empty(), "tune_precision: no operation to tune");
  for (Op op : options.ops)
    require(op == Op::F || op == Op::Fadj, "tune_precision: expected F or Fadj, got {}",
            name_of(op));
  require(options.repetitions >= 1, "tune_precision: expected at least 1 repetition, got {}",
          options.repetitions);
  require(options.kappa == 0 || options.kappa >= 1,
          "tune_precision: kappa(F^) must be at least 1 (or 0: computed), got {}", options.kappa);
  // Only the CPU engine runs FFTW.
  const bool gpu = plan.choices().passes[0].transforms != Transforms::Fftw;
  TuneResult result{.kappa = kappa_of(plan, first_column, first_row, options), .ops = {}};
  const std::string precision = plan.precision().str();
  struct Restore {  // the plan as it was, also when a configuration throws
    Plan& plan;
    const std::string& precision;
    bool gpu;
    ~Restore() {
      try {
        plan.set_precision(precision);
        if (gpu) plan.set_gemv(GemvImplementation::Auto);
      } catch (...) {  // a destructor must not throw; the plan stays usable in any precision
      }
    }
  } restore{plan, precision, gpu};
  for (Op op : options.ops)
    result.ops.push_back(tune_op(plan, op, result.kappa, gpu, options));
  return result;
}

}  // namespace shiftop::btt
