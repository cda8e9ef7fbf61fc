// shiftop._core.OperatorPair: btt::OperatorPair (include/shiftop/btt/pair.hpp) of two
// shiftop._core.Plan objects (held by std::shared_ptr, shared with their shiftop.Operator),
// applied to C-contiguous float64 NumPy arrays with the GIL released. shiftop.OperatorPair
// (python/shiftop/pair.py) does the NumPy-side checks, casts and shapes.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <span>
#include <string>

#include "bindings.hpp"
#include "shiftop/btt/pair.hpp"
#include "shiftop/btt/plan.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace shiftop::python {
namespace {

using btt::OperatorPair;
using InputArray = nb::ndarray<const double, nb::c_contig, nb::device::cpu>;
using OutputArray = nb::ndarray<double, nb::c_contig, nb::device::cpu>;

void apply(OperatorPair& pair, const std::string& op, const InputArray& x, OutputArray& y,
           index_t nrhs) {
  pair.apply(parse_name<btt::PairOp>(op, "op"), std::span<const double>(x.data(), x.size()),
             std::span<double>(y.data(), y.size()), nrhs);
}

constexpr const char* kPairDoc =
    "F and a second block Toeplitz operator G on the same time grid (FFTMatvec's auxiliary\n"
    "matrix), each with its own plan, applied as 'G', 'Gadj', 'GadjF' (G*F) or 'FGadj' (FG*).\n"
    "The mixed products run two exact passes in one call, sharing one middle buffer.\n\n"
    "Low-level: shiftop.OperatorPair wraps it for NumPy users.";

}  // namespace

void bind_pair(nb::module_& m) {
  nb::class_<OperatorPair>(m, "OperatorPair", kPairDoc)
      .def_static(
          "create",
          [](std::shared_ptr<btt::Plan> f, std::shared_ptr<btt::Plan> g, index_t max_rhs,
             int device) {
            return OperatorPair::create(std::move(f), std::move(g),
                                        {.max_rhs = max_rhs, .gpu = {.device = device}});
          },
          "f"_a, "g"_a, nb::kw_only(), "max_rhs"_a = 16, "device"_a = 0,
          "The pair of plans F and G (one backend, one Nt; CUDA plans on GPU `device`); "
          "max_rhs right-hand sides per group share the middle buffer.")
      .def("apply", &apply, "op"_a, "x"_a.noconvert(), "y"_a.noconvert(), "nrhs"_a = 1,
           nb::call_guard<nb::gil_scoped_release>(),
           "y = op x for nrhs vectors, op one of 'G', 'Gadj', 'GadjF', 'FGadj'; x and y are "
           "C-contiguous float64 arrays of nrhs*blocks*Nt values that do not overlap.")
      .def(
          "supports",
          [](const OperatorPair& p, const std::string& op) {
            return p.supports(parse_name<btt::PairOp>(op, "op"));
          },
          "op"_a, "Whether the shapes allow op: G*F needs Nq = Nd, FG* needs G's Nm = F's Nm.")
      .def(
          "input_blocks",
          [](const OperatorPair& p, const std::string& op) {
            return p.input_blocks(parse_name<btt::PairOp>(op, "op"));
          },
          "op"_a, "Blocks of op's input vector.")
      .def(
          "output_blocks",
          [](const OperatorPair& p, const std::string& op) {
            return p.output_blocks(parse_name<btt::PairOp>(op, "op"));
          },
          "op"_a, "Blocks of op's output vector.")
      .def_prop_ro("max_rhs", &OperatorPair::max_rhs, "Right-hand sides per group.");
}

}  // namespace shiftop::python
