// The one table per enum (core/enum_names.hpp) and the one backend parser (core/backend.hpp).
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>

#include "shiftop/btt/op.hpp"
#include "shiftop/btt/pair.hpp"
#include "shiftop/btt/plan.hpp"
#include "shiftop/circ/operator.hpp"
#include "shiftop/circ/reconstruct.hpp"
#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/distributed/bus_bandwidth.hpp"
#include "shiftop/gpu/devices.hpp"
#include "shiftop/inverse/map_cg.hpp"
#include "shiftop/io/npy.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"
#include "shiftop/svd/jacobi.hpp"
#include "shiftop/svd/strategy.hpp"

namespace shiftop {
namespace {

std::string message_of(auto&& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(EnumNames, EveryValueRoundTripsThroughItsName) {
  for (const Planning p : {Planning::Estimate, Planning::Measure})
    EXPECT_EQ(parse_name<Planning>(name_of(p), "planning"), p);
  EXPECT_EQ(name_of(Backend::Cuda), "cuda");
  EXPECT_EQ(choices_of<Backend>(), "cpu or cuda");
}

// Every enum with names: each value once, each name once and not empty, and name_of and
// parse_name inverse to each other. No enumerator is given a number, so the values are 0..N-1:
// a table that holds exactly 0..N-1 misses none but the last, which the pinned names below catch
// when one is removed (a new enumerator missing from its table throws in name_of).
template <class E>
class EveryTable : public ::testing::Test {};
using NamedEnums =
    ::testing::Types<Backend, Planning, btt::Op, btt::PairOp, btt::GemvImplementation,
                     btt::FftImplementation, btt::ApplyPhase, btt::Transforms, btt::Gemv, circ::Op,
                     circ::CpuKernel, circ::TransposeMethod, svd::StrategyKind, svd::Variant,
                     circ::ReconMethod, inverse::Preconditioner, io::Element, io::OperatorFormat,
                     io::VectorFormat, io::VectorSpace, distributed::Collective>;
TYPED_TEST_SUITE(EveryTable, NamedEnums);

TYPED_TEST(EveryTable, NamesEachValueOnceAndParsesItsNamesBack) {
  using E = TypeParam;
  std::set<int> values;
  std::set<std::string_view> names;
  for (const auto& [value, name] : EnumNames<E>::table) {
    EXPECT_TRUE(values.insert(static_cast<int>(value)).second) << "a second name: " << name;
    EXPECT_TRUE(names.insert(name).second) << "named twice: " << name;
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(name_of(value), name);
    EXPECT_EQ(parse_name<E>(name, "what"), value) << name;
  }
  ASSERT_FALSE(values.empty());
  EXPECT_EQ(*values.begin(), 0);
  EXPECT_EQ(*values.rbegin(), static_cast<int>(values.size()) - 1) << "a value is missing";
}

// The names are what the tool and Python accept and what files and JSON hold: renaming one
// breaks users' scripts, so each is pinned.
TEST(EnumNames, TheNamesUsersType) {
  EXPECT_EQ(choices_of<btt::Op>(), "F, Fadj, FadjF or FFadj");
  EXPECT_EQ(choices_of<btt::PairOp>(), "G, Gadj, GadjF or FGadj");
  EXPECT_EQ(choices_of<btt::GemvImplementation>(), "auto, fused or cublas");
  EXPECT_EQ(choices_of<btt::FftImplementation>(), "auto, fused or cufft");
  EXPECT_EQ(choices_of<btt::ApplyPhase>(), "pad, fft, layout, gemv, ifft or unpad");
  EXPECT_EQ(choices_of<btt::Transforms>(), "fftw, cufft or fused");
  EXPECT_EQ(choices_of<btt::Gemv>(), "cpu, fused or cublas");
  EXPECT_EQ(choices_of<circ::Op>(), "C or Ct");
  EXPECT_EQ(choices_of<circ::CpuKernel>(), "auto, block-spmv, mm, mm2 or mm2s");
  EXPECT_EQ(choices_of<circ::TransposeMethod>(), "auto, index or atomic");
  EXPECT_EQ(choices_of<svd::StrategyKind>(), "rc-closest-rev, rc-closest, modmod or rc");
  EXPECT_EQ(choices_of<svd::Variant>(), "auto, pointwise, block-oriented or full-block");
  EXPECT_EQ(choices_of<circ::ReconMethod>(), "mlem, sirt or cgls");
  EXPECT_EQ(choices_of<inverse::Preconditioner>(), "prior or circulant");
  EXPECT_EQ(choices_of<io::Element>(), "float64, float32, complex128 or complex64");
  EXPECT_EQ(choices_of<io::OperatorFormat>(), "auto, shiftop, fftmatvec or npy");
  EXPECT_EQ(choices_of<io::VectorFormat>(), "auto, shiftop, fftmatvec or npy");
  EXPECT_EQ(choices_of<io::VectorSpace>(), "unknown, parameter or data");
  EXPECT_EQ(choices_of<distributed::Collective>(), "broadcast, reduce or allreduce");
}

TEST(EnumNames, AnUnknownNameIsRefusedNamingTheInputAndTheChoices) {
  EXPECT_EQ(message_of([] { parse_name<Planning>("Measure", "--planning"); }),
            "--planning: expected estimate or measure, got 'Measure'");
  EXPECT_EQ(message_of([] { parse_name<Planning>("", "planning"); }),
            "planning: expected estimate or measure, got ''");
}

TEST(ParseBackend, CpuIsAlwaysThere) {
  EXPECT_EQ(parse_backend("cpu", 7, "--backend"), Backend::Cpu);
  EXPECT_EQ(message_of([] { parse_backend("gpu", 0, "--backend"); }),
            "--backend: expected cpu or cuda, got 'gpu'");
}

TEST(ParseBackend, CudaNeedsABuildWithCudaAndTheDevice) {
  const int count = gpu::device_count();
  if (count > 0) {
    EXPECT_EQ(parse_backend("cuda", count - 1, "--backend"), Backend::Cuda);
    EXPECT_NE(message_of([&] {
                parse_backend("cuda", count, "--backend", "--device");
              }).find(fmt::format("--device {}: this machine has {} CUDA device", count, count)),
              std::string::npos);
    return;
  }
  const std::string message = message_of([] { parse_backend("cuda", 0, "--backend"); });
#ifdef SHIFTOP_HAVE_CUDA
  EXPECT_EQ(message,
            "--backend cuda: no CUDA device: the CUDA driver sees no GPU on this machine; use "
            "--backend cpu");
#else
  EXPECT_EQ(message,
            "--backend cuda: this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use "
            "--backend cpu");
#endif
}

}  // namespace
}  // namespace shiftop
