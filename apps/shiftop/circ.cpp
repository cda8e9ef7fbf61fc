// `shiftop circ`: sparse block-circulant operators C stored as their first block row A
// (include/shiftop/circ/operator.hpp, io/circulant_file.hpp). `circ matvec` applies C or C^T to
// the vectors of a .npy file in the file's value type (float32 or float64); `circ info` describes
// a file: sizes, nonzeros per row of C and of C^T, and the memory C would take if assembled.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "commands.hpp"
#include "output_paths.hpp"
#include "shiftop/circ/operator.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/io/circulant_file.hpp"
#include "shiftop/io/npy.hpp"

namespace shiftop::app {
namespace {

struct CircMatvecOptions {
  std::string operator_path, input, output, backend = "cpu", kernel = "auto";
  int device = 0, threads = 0;
  bool transpose = false, json = false;
};

struct CircInfoOptions {
  std::string path;
  bool json = false;
};

template <class T>
constexpr io::DType kDType = std::is_same_v<T, float> ? io::DType::Float32 : io::DType::Float64;
template <class T>
constexpr io::Element kElement =
    std::is_same_v<T, float> ? io::Element::Float32 : io::Element::Float64;
template <class T>
constexpr const char* kTypeName = std::is_same_v<T, float> ? "float32" : "float64";

// The right-hand sides of a .npy file: shape (length,) is one vector, (nrhs, length) many, in the
// operator's value type (a float64 file for a float32 operator would be rounded: refused).
template <class T>
struct Vectors {
  std::vector<index_t> shape;
  index_t nrhs = 1;
  std::vector<T> values;
};

// C or Fortran order, as svd and gsvd read matrices.
template <class T>
Vectors<T> read_vectors(const std::string& path, index_t length, const std::string& what) {
  const io::NpyArray array = io::read_npy(path);
  require(array.dtype == kDType<T>,
          "--input {}: {} values: expected {}, the operator's value type (convert with "
          "numpy's astype)",
          path, array.dtype == io::DType::Float32 ? "float32" : "float64", kTypeName<T>);
  const std::vector<index_t>& s = array.shape;
  require((s.size() == 1 && s[0] == length) || (s.size() == 2 && s[1] == length),
          "--input {}: shape ({}): expected ({},) or (nrhs, {}), {}", path,
          fmt::format("{}{}", fmt::join(s, ", "), s.size() == 1 ? "," : ""), length, length, what);
  Vectors<T> x{.shape = array.shape, .nrhs = s.size() == 2 ? s[0] : 1, .values = {}};
  x.values.resize(array.data.size());
  for (std::size_t i = 0; i < array.data.size(); ++i) {
    require(std::isfinite(array.data[i]),
            "--input {}: {} at vector {}, entry {}: expected finite "
            "values",
            path, std::isnan(array.data[i]) ? "NaN" : "infinity", static_cast<index_t>(i) / length,
            static_cast<index_t>(i) % length);
    x.values[i] = static_cast<T>(array.data[i]);  // exact: the file holds T
  }
  return x;
}

template <class T>
void run_matvec(const CircMatvecOptions& o, const circ::Options& base) {
  Stopwatch watch;
  const circ::FirstBlockRow<T> a = io::read_circulant<T>(o.operator_path);
  const circ::Shape& shape = a.shape;
  const circ::Op op = o.transpose ? circ::Op::Ct : circ::Op::C;
  const index_t n = circ::input_length(shape, op), m = circ::output_length(shape, op);
  const Vectors<T> x = read_vectors<T>(
      o.input, n,
      o.transpose
          ? fmt::format("k*mb = {}*{} values for C^T (block-major [k][mb])", shape.k, shape.mb)
          : fmt::format("k*nb = {}*{} values for C (block-major [k][nb])", shape.k, shape.nb));
  const double read_seconds = watch.lap();

  circ::Options options = base;
  options.max_rhs = std::clamp<index_t>(x.nrhs, 1, 8);
  circ::Operator<T> c = circ::Operator<T>::create(a, options);
  const double create_seconds = watch.lap();

  std::vector<T> y(static_cast<std::size_t>(x.nrhs * m));
  if (x.nrhs > 0) c.apply(op, x.values, y, x.nrhs);
  const double apply_seconds = watch.lap();
  std::vector<index_t> y_shape = x.shape;
  y_shape.back() = m;
  io::write_npy(o.output, std::vector<double>(y.begin(), y.end()), y_shape, kElement<T>, false);
  const double write_seconds = watch.lap();

  std::FILE* summary = o.output == "-" ? stderr : stdout;
  const std::string name = o.transpose ? "C^T" : "C";
  if (o.json) {
    const nlohmann::ordered_json out{{"op", name},
                                     {"shape",
                                      {{"k", shape.k},
                                       {"mb", shape.mb},
                                       {"nb", shape.nb},
                                       {"rows", shape.rows()},
                                       {"cols", shape.cols()}}},
                                     {"nnz", a.nnz()},
                                     {"dtype", kTypeName<T>},
                                     {"nrhs", x.nrhs},
                                     {"choices", c.choices().str()},
                                     {"output", o.output},
                                     {"read_ms", read_seconds * 1e3},
                                     {"create_ms", create_seconds * 1e3},
                                     {"apply_ms", apply_seconds * 1e3},
                                     {"write_ms", write_seconds * 1e3}};
    fmt::print(summary, "{}\n", out.dump());
    return;
  }
  fmt::print(summary, "{} on {} ({} nonzeros in A, {}, {} rhs, {}): apply {:.3f} ms; wrote {}\n",
             name, shape.str(), a.nnz(), kTypeName<T>, x.nrhs, c.choices().str(),
             apply_seconds * 1e3, o.output);
}

// Nonzeros per row: the least, the mean, the most, and how many rows have none.
struct RowCounts {
  std::int64_t min = 0, max = 0, empty = 0;
  double mean = 0;
};

// The counts of one block row, which each of the k block rows repeats: min, mean and max are
// the block row's, the empty rows k times its own.
RowCounts row_counts(const std::vector<std::int64_t>& counts, index_t k) {
  RowCounts r;
  if (counts.empty()) return r;
  const auto [lo, hi] = std::ranges::minmax_element(counts);
  r.min = *lo;
  r.max = *hi;
  r.empty = k * std::ranges::count(counts, 0);
  std::int64_t total = 0;
  for (const std::int64_t c : counts)
    total += c;
  r.mean = static_cast<double>(total) / static_cast<double>(counts.size());
  return r;
}

nlohmann::ordered_json to_json(const RowCounts& r) {
  return {{"min", r.min}, {"mean", r.mean}, {"max", r.max}, {"empty", r.empty}};
}

template <class T>
void run_info(const CircInfoOptions& o, const io::CirculantInfo& file) {
  const circ::FirstBlockRow<T> a = io::read_circulant<T>(o.path);
  const circ::Shape& s = a.shape;
  // Rows of C are rows of A (permuted by block); row l of block j of C^T holds the nonzeros of
  // column l of every block A_d (eq. 1), so C^T's rows count A's entries per column mod nb.
  std::vector<std::int64_t> per_row(static_cast<std::size_t>(s.mb)),
      per_column(static_cast<std::size_t>(s.nb)), per_block(static_cast<std::size_t>(s.k));
  for (index_t r = 0; r < s.mb; ++r) {
    per_row[static_cast<std::size_t>(r)] = a.indptr[r + 1] - a.indptr[r];
    for (std::int64_t e = a.indptr[r]; e < a.indptr[r + 1]; ++e) {
      ++per_column[static_cast<std::size_t>(a.indices[e] % s.nb)];
      ++per_block[static_cast<std::size_t>(a.indices[e] / s.nb)];
    }
  }
  const RowCounts c_rows = row_counts(per_row, s.k), ct_rows = row_counts(per_column, s.k);
  const auto empty_blocks = std::ranges::count(per_block, 0);

  // A as stored (the file's index width), and the explicit CSR of C: k times the entries,
  // (k*mb + 1) offsets, 32-bit indices while k*nnz and k*nb fit them (as scipy does).
  const auto value_bytes = static_cast<std::int64_t>(sizeof(T));
  const char* index_type = file.index_bits == 32 ? "int32" : "int64";
  const std::int64_t a_bytes = file.stored_bytes;
  const std::int64_t c_entries = s.k * a.nnz();
  const std::int64_t c_index_bytes =
      (c_entries < (std::int64_t{1} << 31) && s.cols() < (std::int64_t{1} << 31)) ? 4 : 8;
  const std::int64_t c_bytes =
      c_entries * (value_bytes + c_index_bytes) + (s.rows() + 1) * c_index_bytes;

  if (o.json) {
    const nlohmann::ordered_json out{
        {"path", o.path},
        {"k", s.k},
        {"mb", s.mb},
        {"nb", s.nb},
        {"rows", s.rows()},
        {"cols", s.cols()},
        {"nnz", a.nnz()},
        {"nnz_of_C", c_entries},
        {"value_type", kTypeName<T>},
        {"index_type", index_type},
        {"nnz_per_row_C", to_json(c_rows)},
        {"nnz_per_row_Ct", to_json(ct_rows)},
        {"empty_blocks", empty_blocks},
        {"bytes_A", a_bytes},
        {"bytes_C_explicit", c_bytes},
        {"saving", static_cast<double>(c_bytes) / static_cast<double>(a_bytes)}};
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print(
      "{}: block-circulant C, {}\n"
      "  A: {} nonzeros ({} values, {} indices), {} of {} blocks empty\n"
      "  nonzeros per row of C:   min {}, mean {:.2f}, max {} ({} rows empty)\n"
      "  nonzeros per row of C^T: min {}, mean {:.2f}, max {} ({} rows empty)\n"
      "  memory: A {} bytes; C assembled as CSR {} bytes ({} entries), {:.1f}x more\n",
      o.path, s.str(), a.nnz(), kTypeName<T>, index_type, empty_blocks, s.k, c_rows.min,
      c_rows.mean, c_rows.max, c_rows.empty, ct_rows.min, ct_rows.mean, ct_rows.max, ct_rows.empty,
      a_bytes, c_bytes, c_entries, static_cast<double>(c_bytes) / static_cast<double>(a_bytes));
}

void add_matvec(CLI::App* circ_cmd) {
  auto o = std::make_shared<CircMatvecOptions>();
  CLI::App* cmd = circ_cmd->add_subcommand(
      "matvec", "y = C x (or x = C^T y) for a block-circulant C stored as its first block row");
  cmd->add_option("--operator", o->operator_path,
                  "C: HDF5 file with the CSR of A (datasets indptr, indices, data; attributes "
                  "mB, nB, k); its value type (float32 or float64) is the product's")
      ->required();
  cmd->add_option("--input", o->input,
                  ".npy of the operator's value type: shape (k*nB,) or (nrhs, k*nB), block-major "
                  "(with --transpose (k*mB,) or (nrhs, k*mB))")
      ->required();
  cmd->add_option("--output", o->output,
                  ".npy of the input's rank: (k*mB,) or (nrhs, k*mB) (with --transpose k*nB); - "
                  "writes it to standard output")
      ->required();
  cmd->add_flag("--transpose", o->transpose, "apply C^T (exact: the same values, no stored copy)");
  add_choice_option<circ::CpuKernel>(
      cmd, "--kernel", o->kernel,
      "{}: the CPU product (Romero et al. section 3.1); auto is mm2s with s = 8");
  add_backend_option(cmd, o->backend);
  add_device_option(cmd, o->device);
  add_threads_option(cmd, o->threads);
  add_json_flag(cmd, o->json);
  cmd->callback([o] {
    // The options first: a bad one is refused before the files are read.
    circ::Options options;
    options.backend = backend_option(o->backend, o->device);
    options.cpu.kernel = parse_name<circ::CpuKernel>(o->kernel, "--kernel");
    require(o->kernel == "auto" || options.backend == Backend::Cpu,
            "--kernel {}: chooses among the CPU products; --backend cuda runs the GPU's own "
            "kernel (expected --kernel auto)",
            o->kernel);
    // One product: the probe of Planning::Measure would cost more than it can save.
    options.planning = Planning::Estimate;
    options.cpu.threads = o->threads;
    options.gpu.device = o->device;
    check_paths({{"--operator", o->operator_path}, {"--input", o->input}},
                {{"--output", o->output, OutputFormat::Npy}}, StandardOutput::Allowed);
    if (io::inspect_circulant(o->operator_path).value_type == "float32")
      run_matvec<float>(*o, options);
    else
      run_matvec<double>(*o, options);
  });
}

void add_info(CLI::App* circ_cmd) {
  auto o = std::make_shared<CircInfoOptions>();
  CLI::App* cmd = circ_cmd->add_subcommand(
      "info", "Sizes, nonzeros per row of C and C^T, and memory of a block-circulant file");
  cmd->add_option("file", o->path, "HDF5 file with the CSR of the first block row A")->required();
  add_json_flag(cmd, o->json);
  cmd->callback([o] {
    check_paths({{"file", o->path}}, {});
    const io::CirculantInfo file = io::inspect_circulant(o->path);
    if (file.value_type == "float32")
      run_info<float>(*o, file);
    else
      run_info<double>(*o, file);
  });
}

}  // namespace

void add_circ_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "circ", "Sparse block-circulant operators C given by their first block row A");
  cmd->require_subcommand(1);
  add_matvec(cmd);
  add_info(cmd);
}

}  // namespace shiftop::app
