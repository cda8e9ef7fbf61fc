// The one table per enum (core/enum_names.hpp) and the one backend parser (core/backend.hpp).
#include <gtest/gtest.h>

#include <string>

#include "shiftop/core/backend.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/gpu/devices.hpp"

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
