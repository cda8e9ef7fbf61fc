// `shiftop matvec` on a process grid, under mpiexec (or with --grid): every rank reads only its
// slice of the operator (distributed::read_distributed_plan) and its blocks of the input vectors,
// the distributed plan applies op, and rank 0 gathers the output blocks and writes the output file.
// The input file is read whole by every rank: vectors are small next to the operator.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "matvec.hpp"
#include "mpi_launch.hpp"
#include "shiftop/btt/distributed_plan.hpp"
#include "shiftop/btt/read_distributed_plan.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/core/timer.hpp"
#include "shiftop/distributed/collective_check.hpp"
#include "shiftop/distributed/mpi_check.hpp"
#include "shiftop/io/operator_file.hpp"

namespace shiftop::app {
namespace {

/// The blocks `range` of this rank's output `local` ([rhs][range][t]) from every rank, placed
/// into y on rank 0 (collective over the grid).
void gather_output(const distributed::Grid& grid, distributed::IndexRange range,
                   const std::vector<double>& local, io::VectorData& y) {
  require(local.size() <= static_cast<std::size_t>(INT_MAX),
          "the output blocks of one rank hold {} values, more than one MPI message carries ({})",
          local.size(), INT_MAX);
  const int count = static_cast<int>(local.size());
  const std::array<std::int64_t, 2> mine = {range.begin, range.end};
  const bool root = grid.rank() == 0;
  const auto ranks = static_cast<std::size_t>(grid.size());
  std::vector<int> counts(root ? ranks : 0), offsets(root ? ranks : 0);
  std::vector<std::int64_t> ranges(root ? 2 * ranks : 0);
  distributed::check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, grid.comm()),
                         "MPI_Gather");
  distributed::check_mpi(
      MPI_Gather(mine.data(), 2, MPI_INT64_T, ranges.data(), 2, MPI_INT64_T, 0, grid.comm()),
      "MPI_Gather");
  std::vector<double> pieces;
  if (root) {
    std::size_t total = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      offsets[r] = static_cast<int>(total);
      total += static_cast<std::size_t>(counts[r]);
    }
    require(total <= static_cast<std::size_t>(INT_MAX),
            "the output holds {} values, more than one MPI gather carries ({})", total, INT_MAX);
    pieces.resize(total);
  }
  distributed::check_mpi(MPI_Gatherv(local.data(), count, MPI_DOUBLE, pieces.data(), counts.data(),
                                     offsets.data(), MPI_DOUBLE, 0, grid.comm()),
                         "MPI_Gatherv");
  if (!root) return;
  const index_t nt = y.nt;
  for (std::size_t r = 0; r < ranks; ++r) {
    const index_t begin = ranges[2 * r], blocks = ranges[2 * r + 1] - begin;
    const double* piece = pieces.data() + offsets[r];
    for (index_t k = 0; k < y.nrhs; ++k)
      std::copy_n(piece + k * blocks * nt, blocks * nt,
                  y.values.data() + (k * y.blocks + begin) * nt);
  }
}

void run_on_grid(const MpiSession& mpi, const MatvecOptions& o) {
  require(o.row_path.empty(),
          "--row: under MPI the operator file must hold the whole operator (a shiftop .h5 file "
          "keeps the first block row of a general operator); convert it first");
  const btt::Op op = parse_name<btt::Op>(o.op, "--op");
  Stopwatch watch;
  // What every rank needs to know first: the operator's shape and metadata (from its first
  // kernel alone) and the input vectors.
  io::OperatorInfo info;
  Metadata metadata;
  io::VectorData x;
  io::VectorFormat format = io::VectorFormat::Auto;
  distributed::run_collectively(MPI_COMM_WORLD, [&] {
    info = io::inspect_operator(o.operator_path);
    metadata = io::read_operator(o.operator_path, {.slice = {.rows = {0, 1}, .cols = {0, 1}},
                                                   .allow_nonfinite = o.allow_nonfinite,
                                                   .allow_nonfinite_name = kAllowNonfinite})
                   .metadata;
    x = io::read_vector(o.input_path, {.allow_nonfinite = o.allow_nonfinite,
                                       .allow_nonfinite_name = kAllowNonfinite});
    check_input(x, info.shape, metadata, op, o);
    format = output_format(o);
  });
  const Shape& shape = info.shape;
  const auto [grid_shape, grid_reason] = select_grid(o.grid, shape, mpi);
  const distributed::Grid grid(grid_shape);

  distributed::DistributedPlan plan =
      distributed::read_distributed_plan(grid, o.operator_path, matvec_plan_options(o, x.nrhs));
  const double read_seconds = max_over_ranks(watch.lap(), grid.comm());
  const std::vector<double> local_x =
      distributed::slice_blocks(x.values, x.nrhs, x.blocks, shape.nt, plan.local_input_blocks(op));
  x.values = {};
  const distributed::IndexRange out_range = plan.local_output_blocks(op);
  std::vector<double> local_y(static_cast<std::size_t>(x.nrhs * out_range.size() * shape.nt));
  distributed::check_mpi(MPI_Barrier(grid.comm()), "MPI_Barrier");
  watch.lap();
  plan.apply(op, local_x, local_y, x.nrhs);
  const double apply_seconds = max_over_ranks(watch.lap(), grid.comm());

  io::VectorData y;
  if (grid.rank() == 0) y = output_vector(x, shape, metadata, op);
  gather_output(grid, out_range, local_y, y);
  distributed::run_collectively(grid.comm(), [&] {
    if (grid.rank() == 0) io::write_vector(o.output_path, y, format);
  });
  const double write_seconds = watch.lap();
  if (grid.rank() != 0) return;

  if (o.json) {
    nlohmann::ordered_json out{{"op", o.op},
                               {"shape", {{"nd", shape.nd}, {"nm", shape.nm}, {"nt", shape.nt}}},
                               {"nrhs", x.nrhs},
                               {"precision", plan.precision().str()},
                               {"triangular", plan.triangular()},
                               {"backend", o.backend},
                               {"ranks", grid.size()},
                               {"grid", grid_shape.str()},
                               {"grid_reason", grid_reason},
                               {"operator_format", name_of(info.format)},
                               {"output", o.output_path},
                               {"output_format", name_of(format)},
                               {"read_and_plan_ms", read_seconds * 1e3},
                               {"apply_ms", apply_seconds * 1e3},
                               {"gather_and_write_ms", write_seconds * 1e3}};
    fmt::print(summary_stream(o), "{}\n", out.dump());
  } else {
    fmt::print(
        summary_stream(o),
        "{} on {} ({} rhs, precision {}) over {} ranks, grid {}: read + plan {:.1f} ms, apply "
        "{:.2f} ms; wrote {} ({})\n",
        o.op, shape.str(), x.nrhs, plan.precision().str(), grid.size(), grid_shape.str(),
        read_seconds * 1e3, apply_seconds * 1e3, o.output_path, name_of(format));
  }
}

}  // namespace

void run_distributed_matvec(const MatvecOptions& o) {
  const MpiSession mpi;
  run_on_grid(mpi, o);
}

}  // namespace shiftop::app
