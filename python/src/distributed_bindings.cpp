// shiftop._distributed: the distributed plan (include/shiftop/distributed/) for Python. A module
// of its own, built only with MPI, so that shiftop._core never links MPI (docs/architecture.md,
// "Headers and targets") and `import shiftop` loads no MPI library. It never initialises MPI: the
// caller's mpi4py did, and hands its communicator over as the Fortran handle of comm.py2f(), which
// MPI_Comm_f2c turns back into an MPI_Comm without mpi4py's headers. The import order of shiftop
// and mpi4py therefore does not matter. python/shiftop/distributed.py is the user-facing half.
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>

#include "shiftop/btt/distributed_plan.hpp"
#include "shiftop/btt/op.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/btt/read_distributed_plan.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/distributed/grid.hpp"
#include "shiftop/distributed/grid_choice.hpp"
#include "shiftop/io/operator_file.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using distributed::DistributedPlan;
using distributed::Grid;
using distributed::GridShape;
using InputArray = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using OutputArray = nb::ndarray<double, nb::c_contig, nb::device::cpu>;

void check(int code, const char* call) {
  require(code == MPI_SUCCESS, "{} failed with MPI error code {}", call, code);
}

// The largest number of ranks of `comm` on one node: Algorithm 4's k (as `shiftop matvec`
// computes it in apps/shiftop/mpi_launch.cpp).
int ranks_per_node(MPI_Comm comm) {
  int rank = 0;
  check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  int node_size = 1;
  const int size_code = MPI_Comm_size(node, &node_size);
  check(MPI_Comm_free(&node), "MPI_Comm_free");
  check(size_code, "MPI_Comm_size");
  int most = 0;
  check(MPI_Allreduce(&node_size, &most, 1, MPI_INT, MPI_MAX, comm), "MPI_Allreduce");
  return most;
}

// "PRxPC", or "auto": Algorithm 4 (grid_choice.hpp) for the operator's shape on comm's ranks.
GridShape grid_shape(const std::string& text, const std::string& path, MPI_Comm comm) {
  if (text != "auto") return GridShape::parse(text);
  int size = 0;
  check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  const int per_node = ranks_per_node(comm);
  // Every rank reads the shape; a rank that cannot must not leave the others waiting in the
  // grid's collectives, so all learn whether every one could.
  Shape shape;
  std::string error;
  try {
    shape = io::inspect_operator(path).shape;
  } catch (const Error& e) {
    error = e.what();
  }
  int ok = error.empty() ? 1 : 0, all_ok = 0;
  check(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (!error.empty()) throw Error(error);
  require(all_ok == 1, "{}: another rank could not read the operator's shape", path);
  return distributed::choose_grid(shape, size, per_node).grid;
}

// The MPI_Comm behind mpi4py's comm.py2f(), after checking that MPI is usable from here.
MPI_Comm communicator(std::int64_t fortran_handle) {
  int initialized = 0, finalized = 0;
  check(MPI_Initialized(&initialized), "MPI_Initialized");
  check(MPI_Finalized(&finalized), "MPI_Finalized");
  require(initialized && !finalized,
          "MPI is {}: import mpi4py.MPI (which initialises it) before using shiftop.distributed",
          finalized ? "already finalised" : "not initialised");
  int provided = MPI_THREAD_SINGLE;
  check(MPI_Query_thread(&provided), "MPI_Query_thread");
  require(provided >= MPI_THREAD_FUNNELED,
          "MPI was initialised with thread level {}, shiftop needs at least MPI_THREAD_FUNNELED "
          "(mpi4py.rc.thread_level = 'funneled' or higher before importing mpi4py.MPI)",
          provided);
  const MPI_Comm comm = MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_handle));
  require(comm != MPI_COMM_NULL, "comm: the communicator is MPI_COMM_NULL");
  return comm;
}

// The grid and the plan that refers to it, kept together so that the grid outlives the plan.
struct GridOperator {
  GridOperator(GridShape shape, MPI_Comm comm, const std::string& path,
               const btt::PlanOptions& options)
      : grid(shape, comm), plan(distributed::read_distributed_plan(grid, path, options)) {}

  Grid grid;
  DistributedPlan plan;
};

btt::PlanOptions plan_options(const std::string& precision, const std::string& backend,
                              index_t max_rhs, int threads, const std::string& planning) {
  btt::PlanOptions options;
  // Each rank runs on the GPU node_rank() modulo those it sees (DistributedPlan::create): GPU 0
  // must be there.
  options.backend = parse_backend(backend, 0, "backend", "device");
  options.planning = parse_name<Planning>(planning, "planning");
  options.precision = precision;
  options.max_rhs = max_rhs;
  options.cpu.threads = threads;
  return options;
}

std::tuple<index_t, index_t> range(distributed::IndexRange r) {
  return {r.begin, r.end};
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  check(MPI_Get_library_version(text, &length), "MPI_Get_library_version");
  return std::string(text, static_cast<std::size_t>(std::max(length, 0)));
}

constexpr const char* kPlanDoc =
    "A block Toeplitz operator partitioned over a pr x pc process grid (Venkat et al., "
    "Algorithms 2-3).\n\nLow-level: shiftop.distributed.read wraps it. Every method is collective "
    "over the grid.";

}  // namespace

void bind_distributed(nb::module_& m) {
  m.def("mpi_library_version", &mpi_library_version,
        "MPI_Get_library_version of the MPI library this module was built with.");
  nb::class_<GridOperator>(m, "DistributedPlan", kPlanDoc)
      .def_static(
          "read",
          [](const std::string& path, std::int64_t comm_handle, const std::string& grid,
             const std::string& precision, const std::string& backend, index_t max_rhs, int threads,
             const std::string& planning) {
            const MPI_Comm comm = communicator(comm_handle);
            const auto options = plan_options(precision, backend, max_rhs, threads, planning);
            nb::gil_scoped_release unlocked;
            const GridShape shape = grid_shape(grid, path, comm);
            return std::make_shared<GridOperator>(shape, comm, path, options);
          },
          "path"_a, "comm_handle"_a, "grid"_a, nb::kw_only(), "precision"_a = "DDDDD",
          "backend"_a = "cpu", "max_rhs"_a = 16, "threads"_a = 0, "planning"_a = "measure",
          "Collective over the communicator whose Fortran handle (mpi4py's comm.py2f()) is "
          "comm_handle: every rank reads its slice of the operator file `path` onto a grid "
          "'PRxPC' or 'auto' (Algorithm 4).")
      .def(
          "apply",
          [](GridOperator& g, const std::string& op, const InputArray& x, OutputArray& y,
             index_t nrhs) {
            g.plan.apply(parse_name<btt::Op>(op, "op"), std::span<const double>(x.data(), x.size()),
                         std::span<double>(y.data(), y.size()), nrhs);
          },
          "op"_a, "x"_a.noconvert(), "y"_a.noconvert(), "nrhs"_a,
          nb::call_guard<nb::gil_scoped_release>(),
          "Collective: y = op(F) x on this rank's blocks (C-contiguous float64; empty arrays on "
          "ranks that hold none of the vector).")
      .def(
          "input_blocks",
          [](const GridOperator& g, const std::string& op) {
            return range(g.plan.local_input_blocks(parse_name<btt::Op>(op, "op")));
          },
          "op"_a, "(begin, end): the global blocks of op's input that this rank holds.")
      .def(
          "output_blocks",
          [](const GridOperator& g, const std::string& op) {
            return range(g.plan.local_output_blocks(parse_name<btt::Op>(op, "op")));
          },
          "op"_a, "(begin, end): the global blocks of op's output that this rank holds.")
      .def_prop_ro(
          "shape",
          [](const GridOperator& g) {
            const Shape& s = g.plan.shape();
            return std::make_tuple(s.nd, s.nm, s.nt);
          },
          "(Nd, Nm, Nt) of the whole operator.")
      .def_prop_ro(
          "grid",
          [](const GridOperator& g) {
            return std::make_tuple(g.grid.shape().rows, g.grid.shape().cols);
          },
          "(pr, pc): the process grid.")
      .def_prop_ro(
          "coordinates",
          [](const GridOperator& g) { return std::make_tuple(g.grid.row(), g.grid.col()); },
          "(i, j): this rank's place in the grid.")
      .def_prop_ro(
          "triangular", [](const GridOperator& g) { return g.plan.triangular(); },
          "True for a block lower-triangular operator.")
      .def_prop_ro(
          "backend", [](const GridOperator& g) { return std::string(name_of(g.plan.backend())); },
          "'cpu' or 'cuda'.")
      .def_prop_rw(
          "precision", [](const GridOperator& g) { return g.plan.precision().str(); },
          [](GridOperator& g, const std::string& text) {
            nb::gil_scoped_release unlocked;
            g.plan.set_precision(text);
          },
          "The five-phase precision string; setting it is collective.");
}

}  // namespace shiftop::python

NB_MODULE(_distributed, m) {
  m.doc() = "The distributed plan over MPI; use shiftop.distributed.";
  // shiftop::Error surfaces as shiftop._core.Error (a ValueError), as from shiftop._core.
  nb::object error = nb::module_::import_("shiftop._core").attr("Error");
  nb::register_exception_translator(
      [](const std::exception_ptr& p, void* type) {
        try {
          std::rethrow_exception(p);
        } catch (const shiftop::Error& e) {
          PyErr_SetString(static_cast<PyObject*>(type), e.what());
        }
      },
      error.release().ptr());
  shiftop::python::bind_distributed(m);
}
