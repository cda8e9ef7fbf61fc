// `shiftop grid`: the process grid Algorithm 4 (Venkat et al., section 3.7) chooses for an
// operator on a number of ranks, and the modelled communication cost of every candidate.
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "shiftop/distributed/grid_choice.hpp"
#include "shiftop/distributed/partition.hpp"

namespace shiftop::app {
namespace {

struct GridOptions {
  index_t nd = 0, nm = 0, nt = 0;
  int ranks = 0, per_node = 1;
  bool json = false;
};

// Ranks of `grid` that own no observation block or no parameter block: the ceil-sized split
// leaves the last grid rows (columns) empty when blocks are few (Nd=9 on 4 rows: 3, 3, 3, 0).
int idle_ranks(const Shape& shape, const distributed::GridShape& grid) {
  const distributed::Partition part(shape, grid);
  int rows = 0, cols = 0;
  for (int i = 0; i < grid.rows; ++i)
    rows += part.rows(i).size() > 0 ? 1 : 0;
  for (int j = 0; j < grid.cols; ++j)
    cols += part.cols(j).size() > 0 ? 1 : 0;
  return grid.rows * grid.cols - rows * cols;
}

void run(const GridOptions& o) {
  const Shape shape{o.nd, o.nm, o.nt};
  const distributed::GridChoice choice = distributed::choose_grid(shape, o.ranks, o.per_node);
  const int idle = idle_ranks(shape, choice.grid);
  if (idle > 0)
    fmt::print(stderr,
               "shiftop: warning: grid {} gives {} of {} ranks nothing to do (Nd={} observation "
               "blocks on {} grid rows, Nm={} parameter blocks on {} grid columns); fewer ranks "
               "would do the same work\n",
               choice.grid.str(), idle, o.ranks, o.nd, choice.grid.rows, o.nm, choice.grid.cols);
  nlohmann::ordered_json out;
  out["shape"] = {{"nd", o.nd}, {"nm", o.nm}, {"nt", o.nt}};
  out["ranks"] = o.ranks;
  out["per_node"] = o.per_node;
  out["grid"] = choice.grid.str();
  out["rows"] = choice.grid.rows;
  out["cols"] = choice.grid.cols;
  out["reason"] = choice.reason;
  out["idle_ranks"] = idle;
  out["candidates"] = nlohmann::json::array();
  for (const distributed::GridCandidate& c : choice.candidates) {
    const distributed::Partition part(shape, c.grid);
    out["candidates"].push_back({{"grid", c.grid.str()},
                                 {"rows", c.grid.rows},
                                 {"cols", c.grid.cols},
                                 {"nd_local", part.rows(0).size()},
                                 {"nm_local", part.cols(0).size()},
                                 {"cost_eq25", c.cost},
                                 {"critical_path_bytes", c.bytes},
                                 {"node_aligned", c.node_aligned}});
  }
  if (o.json) {
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print("{} on {} ranks, {} per node: grid {}\n  {}\n", shape.str(), o.ranks, o.per_node,
             choice.grid.str(), choice.reason);
  fmt::print("  {:>11} {:>9} {:>9} {:>12} {:>14} {:>12}\n", "grid", "nd local", "nm local",
             "cost eq.25", "MB per apply", "node-aligned");
  for (const auto& c : out["candidates"])
    fmt::print("{} {:>11} {:>9} {:>9} {:>12.4g} {:>14.4g} {:>12}\n",
               c["grid"] == out["grid"] ? '*' : ' ', c["grid"].get<std::string>(),
               c["nd_local"].get<index_t>(), c["nm_local"].get<index_t>(),
               c["cost_eq25"].get<double>(), c["critical_path_bytes"].get<double>() / 1e6,
               c["node_aligned"].get<bool>() ? "yes" : "no");
  fmt::print(
      "cost eq.25: (r/p) log2 r + (Nd/Nm)/r log2(p/r); MB per apply: eq. 20, the FP64 bytes along "
      "the broadcast and reduction trees of one F or F* (8 Nt (nm log2 r + nd log2 c))\n");
}

}  // namespace

void add_grid_command(CLI::App& app) {
  auto o = std::make_shared<GridOptions>();
  CLI::App* cmd = app.add_subcommand(
      "grid", "Choose the process grid for a number of ranks (Algorithm 4) and explain it");
  cmd->add_option("--nd", o->nd, "observation blocks Nd")->required()->check(kPositive);
  cmd->add_option("--nm", o->nm, "parameter blocks Nm")->required()->check(kPositive);
  cmd->add_option("--nt", o->nt, "time steps Nt")->required()->check(kPositive);
  cmd->add_option("--ranks", o->ranks, "MPI ranks (GPUs) p")->required()->check(kPositive);
  add_count_option(cmd, "--per-node", o->per_node, "ranks (GPUs) per node k");
  add_json_flag(cmd, o->json);
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
