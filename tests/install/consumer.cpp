// Uses the installed API only: a CPU plan of a random block Toeplitz operator against the
// direct time-domain product, and Algorithm 4's grid choice from shiftop::distributed.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "shiftop/btt/direct_product.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/distributed/grid_choice.hpp"

int main() {
  const shiftop::Shape shape{3, 5, 7};
  std::mt19937_64 engine(1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<double> kernels(static_cast<std::size_t>(shape.kernel_size()));
  std::vector<double> m(static_cast<std::size_t>(shape.nm * shape.nt));
  for (double& v : kernels)
    v = uniform(engine);
  for (double& v : m)
    v = uniform(engine);

  auto plan =
      shiftop::btt::Plan::create(kernels, shape, {.planning = shiftop::btt::Planning::Estimate});
  std::vector<double> d(static_cast<std::size_t>(shape.nd * shape.nt));
  std::vector<double> want(d.size());
  plan.apply(shiftop::btt::Op::F, m, d);
  shiftop::btt::direct_product(kernels, shape, m, want);
  double error = 0, norm = 0;
  for (std::size_t k = 0; k < d.size(); ++k) {
    error += (d[k] - want[k]) * (d[k] - want[k]);
    norm += want[k] * want[k];
  }
  const double relative = std::sqrt(error / norm);
  const auto choice = shiftop::distributed::choose_grid(shape, 4, 4);
  std::printf("consumer: relative error %.2e, grid %s\n", relative, choice.grid.str().c_str());
  return relative < 1e-13 ? 0 : 1;
}
