// `shiftop matvec`: what its single-process run (matvec.cpp) and its run on a process grid under
// mpiexec (matvec_distributed.cpp) share.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shiftop/btt/plan.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"

namespace shiftop::app {

struct MatvecOptions {
  std::string operator_path, row_path, input_path, output_path;
  /// --aux: the second operator G of an operator pair (matvec_pair.cpp); empty for none.
  std::string aux_path;
  std::string op = "F", precision = "DDDDD", output_format = "auto", backend = "cpu";
  int threads = 0;
  bool json = false, allow_nonfinite = false;
  /// Under MPI: the process grid, "PRxPC" or "auto" (empty is auto).
  std::string grid;
};

using Metadata = std::vector<std::pair<std::string, std::string>>;

/// The plan options the flags ask for, for `nrhs` right-hand sides.
btt::PlanOptions matvec_plan_options(const MatvecOptions& o, index_t nrhs);

/// FFTMatvec's own checks of an input vector against the operator of `shape` and `metadata`
/// (io/fftmatvec_format.hpp): the space, the qoi mark of a parameter-to-QoI map's data, and the
/// checksum.
void check_input(const io::VectorData& x, const Shape& shape, const Metadata& metadata, btt::Op op,
                 const MatvecOptions& o);

io::VectorFormat output_format(const MatvecOptions& o);

/// Where the summary goes: stdout, or stderr when the output vector itself goes to stdout.
std::FILE* summary_stream(const MatvecOptions& o);

/// The output of op for input x, with no values yet: its shape, space and FFTMatvec marks.
io::VectorData output_vector(const io::VectorData& x, const Shape& shape, const Metadata& metadata,
                             btt::Op op);

/// y = op x for the operator pair of F (read from --operator) and G (--aux), op one of G, Gadj,
/// GadjF, FGadj (matvec_pair.cpp).
void run_pair_matvec(const MatvecOptions& o, const io::OperatorData& f);

/// The run on a process grid (MPI_Init to MPI_Finalize inside).
void run_distributed_matvec(const MatvecOptions& o);

}  // namespace shiftop::app
