// Writes the small .npy files the command-line tests read: kernels K (3, 4, 5) and a parameter
// vector m (4, 5).
#include <fmt/core.h>

#include <string>
#include <vector>

#include "shiftop/io/npy.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_cli_fixtures DIR\n");
    return 1;
  }
  const std::string dir = argv[1];
  std::vector<double> k(3 * 4 * 5), m(4 * 5);
  for (std::size_t i = 0; i < k.size(); ++i)
    k[i] = 1.0 / static_cast<double>(i + 1);
  for (std::size_t i = 0; i < m.size(); ++i)
    m[i] = static_cast<double>(i % 7) - 3.0;
  const std::vector<shiftop::index_t> k_shape{3, 4, 5}, m_shape{4, 5};
  shiftop::io::write_npy(dir + "/K.npy", k, k_shape);
  shiftop::io::write_npy(dir + "/m.npy", m, m_shape);
  return 0;
}
