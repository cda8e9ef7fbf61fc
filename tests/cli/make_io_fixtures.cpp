// Writes the operator and vector files the command-line I/O tests read, good and broken, into
// DIR: shiftop .h5 files, FFTMatvec directories and vector files, and one file or directory for
// each kind of bad input the readers must refuse (tests/cli/CMakeLists.txt lists them).
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"
#include "support/io_fixtures.hpp"

namespace {

using namespace shiftop;
using namespace shiftop::testing;

constexpr index_t kNd = 3, kNm = 4, kNt = 5;

std::vector<double> ramp(std::size_t n, double scale) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = scale / static_cast<double>(i + 1) - 0.1 * static_cast<double>(i % 3);
  return v;
}

DatasetSpec row_of(const std::vector<double>& k, index_t r) {
  const auto n = static_cast<std::ptrdiff_t>(kNm * kNt);
  return fftmatvec_row({k.begin() + r * n, k.begin() + (r + 1) * n}, kNm, kNt);
}

std::string meta(index_t nd, index_t nm, index_t nt, const std::string& flags = "1\n0\n1\n0\n") {
  return fmt::format("{}\n{}\n{}\nadj/vec_\n.h5\n{}", nd, nm, nt, flags);
}

void write_all(const std::string& dir) {
  const std::vector<double> k = ramp(kNd * kNm * kNt, 1.0);
  const std::vector<double> m = ramp(kNm * kNt, 2.0);
  const std::vector<double> d = ramp(kNd * kNt, 3.0);
  const auto at = [&](const std::string& name) { return dir + "/" + name; };

  io::OperatorData op;
  op.full_shape = op.shape = {kNd, kNm, kNt};
  op.first_column = k;
  op.metadata = {{"units", "K per W"}};
  io::write_operator(at("F.h5"), op);
  io::write_operator(at("F_dir"), op);
  io::write_operator(at("K.npy"), op);
  io::OperatorData two_rows = op;
  two_rows.full_shape = two_rows.shape = {kNd - 1, kNm, kNt};
  two_rows.first_column.resize((kNd - 1) * kNm * kNt);
  io::write_operator(at("R_bad.npy"), two_rows);
  io::OperatorData general = op;
  general.triangular = false;
  general.first_row = ramp(k.size(), -1.0);
  for (std::size_t i = 0; i < k.size(); i += kNt)
    general.first_row[i] = k[i];
  io::write_operator(at("G.h5"), general);
  io::write_vector(at("m.h5"),
                   {.blocks = kNm, .nt = kNt, .values = m, .space = io::VectorSpace::Parameter});
  io::write_vector(at("fm.h5"),
                   {.blocks = kNm, .nt = kNt, .values = m, .space = io::VectorSpace::Parameter},
                   io::VectorFormat::FFTMatvec);
  io::write_vector(at("plain.npy"), {.blocks = kNm, .nt = kNt, .values = m});
  io::write_vector(at("batch.h5"), {.nrhs = 2,
                                    .blocks = kNm,
                                    .nt = kNt,
                                    .batched = true,
                                    .values = ramp(2 * kNm * kNt, 1.5),
                                    .space = io::VectorSpace::Parameter});
  io::write_vector(at("fd.h5"),
                   {.blocks = kNd, .nt = kNt, .values = d, .space = io::VectorSpace::Data},
                   io::VectorFormat::FFTMatvec);

  // Bad shiftop operator files.
  write_h5(at("no_kernels.h5"), {{.name = "vector", .dims = {kNm, kNt}, .values = m}});
  write_h5(at("rank2.h5"), {{.name = "kernels", .dims = {kNd * kNm, kNt}, .values = k}});
  write_h5(
      at("f32.h5"),
      {{.name = "kernels", .dims = {kNd, kNm, kNt}, .values = k, .file_type = H5T_IEEE_F32LE}});
  write_h5(at("sizes.h5"), {{.name = "kernels", .dims = {kNd, kNm, kNt}, .values = k}},
           {{"nm", std::int64_t{7}}});
  write_truncated(at("F.h5"), at("truncated.h5"), 0.5);
  write_corrupted(at("F.h5"), at("corrupt.h5"), '\x5a');
  write_bytes(at("text.h5"), "this is not HDF5\n");
  std::vector<double> nan_k = k;
  nan_k[(1 * kNm + 2) * kNt + 4] = std::nan("");
  write_h5(at("nan.h5"), {{.name = "kernels", .dims = {kNd, kNm, kNt}, .values = nan_k}});
  write_h5(at("huge.h5"),
           {{.name = "kernels", .dims = {100000, 100000, 100000}, .unwritten = true}});

  // Bad FFTMatvec directories.
  const io::AttributeValue one = std::int64_t{1};
  std::vector<DatasetSpec> rows;
  for (index_t r = 0; r < kNd; ++r)
    rows.push_back(row_of(k, r));
  write_fftmatvec_dir(at("meta_text_dir"), "3\nfour\n5\nadj/vec_\n.h5\n1\n0\n1\n0\n", "adj/vec_",
                      rows);
  write_fftmatvec_dir(at("meta_short_dir"), "3\n4\n5\nadj/vec_\n", "adj/vec_", rows);
  write_fftmatvec_dir(at("missing_row_dir"), meta(kNd + 1, kNm, kNt), "adj/vec_", rows);
  write_fftmatvec_dir(at("meta_nm_dir"), meta(kNd, kNm + 2, kNt), "adj/vec_", rows);
  write_fftmatvec_dir(at("not_reindexed_dir"), meta(kNd, kNm, kNt, "0\n0\n1\n0\n"), "adj/vec_",
                      rows);
  write_fftmatvec_dir(at("huge_dir"), meta(200000, 200000, 100000), "adj/vec_", {});
  auto edited = rows;
  edited[1].file_type = H5T_IEEE_F32LE;
  write_fftmatvec_dir(at("f32_row_dir"), meta(kNd, kNm, kNt), "adj/vec_", edited);
  edited = rows;
  edited[2].values[kNt + 1] = -INFINITY;
  write_fftmatvec_dir(at("inf_row_dir"), meta(kNd, kNm, kNt), "adj/vec_", edited);
  edited = rows;
  edited[0].attributes[1].second = std::int64_t{kNm + 1};
  write_fftmatvec_dir(at("n_param_dir"), meta(kNd, kNm, kNt), "adj/vec_", edited);

  // FFTMatvec's files as they come: an eight-line meta_adj (as in FFTMatvec's own test data), block
  // rows with attributes FFTMatvec ignores (one differing from row to row), Windows line ends
  // (refused, as FFTMatvec refuses them); vectors with qoi and checksum; a later shiftop layout.
  write_fftmatvec_dir(at("eight_line_dir"), meta(kNd, kNm, kNt, "1\n0\n1\n"), "adj/vec_", rows);
  edited = rows;
  for (std::size_t r = 0; r < edited.size(); ++r)
    edited[r].attributes.insert(edited[r].attributes.end(),
                                {{"prior_solved", one},
                                 {"dt", 0.025},
                                 {"grid", std::string("64x64 P1")},
                                 {"sensor_x", 0.5 * static_cast<double>(r)}});
  write_fftmatvec_dir(at("attributes_dir"), meta(kNd, kNm, kNt), "adj/vec_", edited);
  write_fftmatvec_dir(at("crlf_dir"), "3\r\n4\r\n5\r\nadj/vec_\r\n.h5\r\n1\r\n0\r\n1\r\n",
                      "adj/vec_", rows);
  io::write_vector(
      at("fq.h5"),
      {.blocks = kNd, .nt = kNt, .values = d, .space = io::VectorSpace::Data, .qoi = true},
      io::VectorFormat::FFTMatvec);
  io::write_vector(
      at("fmc.h5"),
      {.blocks = kNm, .nt = kNt, .values = m, .space = io::VectorSpace::Parameter, .checksum = 7},
      io::VectorFormat::FFTMatvec);
  write_h5(at("v99.h5"), {{.name = "kernels", .dims = {kNd, kNm, kNt}, .values = k}},
           {{"shiftop_format", std::string("operator")}, {"format_version", std::int64_t{99}}});

  // Bad vector files.
  write_h5(at("f32_vec.h5"), {{.name = "vec",
                               .dims = {kNm * kNt},
                               .values = m,
                               .file_type = H5T_IEEE_F32LE,
                               .attributes = {{"n_param", std::int64_t{kNm}},
                                              {"param_steps", std::int64_t{kNt}},
                                              {"reindex", one}}}});
  write_h5(at("tosi.h5"), {{.name = "vec",
                            .dims = {kNm * kNt},
                            .values = m,
                            .attributes = {{"n_param", std::int64_t{kNm}},
                                           {"param_steps", std::int64_t{kNt}},
                                           {"reindex", std::int64_t{0}}}}});
  write_h5(at("short_vec.h5"), {{.name = "vec",
                                 .dims = {kNm * kNt - 1},
                                 .values = m,
                                 .attributes = {{"n_param", std::int64_t{kNm}},
                                                {"param_steps", std::int64_t{kNt}},
                                                {"reindex", one}}}});
  std::vector<double> nan_m = m;
  nan_m[kNt + 2] = std::nan("");
  write_h5(at("nan_m.h5"), {{.name = "vector", .dims = {kNm, kNt}, .values = nan_m}});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: make_io_fixtures DIR\n");
    return 1;
  }
  try {
    std::filesystem::remove_all(argv[1]);
    std::filesystem::create_directories(argv[1]);
    write_all(argv[1]);
  } catch (const shiftop::Error& e) {
    fmt::print(stderr, "make_io_fixtures: {}\n", e.what());
    return 1;
  }
  return 0;
}
