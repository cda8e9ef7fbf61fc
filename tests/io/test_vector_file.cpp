// Vectors in every format: bit-exact round trips, exactly the attributes FFTMatvec writes, files
// written by other tools, and every kind of bad input refused with the file and what was expected.
#include "shiftop/io/vector_file.hpp"

#include <gtest/gtest.h>

#include <array>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "io/hdf5.hpp"
#include "shiftop/io/npy.hpp"
#include "support/io_fixtures.hpp"
#include "support/io_test_support.hpp"

namespace shiftop::io {
namespace {

namespace fs = std::filesystem;
using shiftop::testing::contains;
using shiftop::testing::DatasetSpec;
using shiftop::testing::error_of;
using shiftop::testing::expect_bits_equal;
using shiftop::testing::FileSizeLimit;
using shiftop::testing::tricky_values;
using shiftop::testing::write_h5;

VectorData make_vector(index_t nrhs, index_t blocks, index_t nt, bool batched, VectorSpace space,
                       unsigned seed) {
  return {.nrhs = nrhs,
          .blocks = blocks,
          .nt = nt,
          .batched = batched,
          .values = tricky_values(static_cast<std::size_t>(nrhs * blocks * nt), seed, false),
          .space = space};
}

const VectorReadOptions kAllowNonfinite{.allow_nonfinite = true};

class VectorFileTest : public shiftop::testing::TempDirTest {
 protected:
  void expect_refused(const std::string& file, const std::string& words) const {
    SCOPED_TRACE(file + ": " + words);
    const std::string message = error_of([&] { read_vector(file); });
    EXPECT_TRUE(contains(message, file)) << message;
    EXPECT_TRUE(contains(message, words)) << message;
    EXPECT_TRUE(contains(message, "expected") || contains(message, "available")) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }

  // Name, value and stored byte size of every attribute of dataset "vec".
  std::vector<std::tuple<std::string, std::int64_t, std::size_t>> vec_attributes(
      const std::string& file) const {
    const h5::Handle f = h5::open_file(file);
    const h5::Handle dataset = h5::open_dataset(f.get(), "vec", file);
    std::vector<std::tuple<std::string, std::int64_t, std::size_t>> out;
    for (const auto& [name, value] : h5::read_attributes(dataset.get(), file)) {
      const h5::Handle attribute(H5Aopen(dataset.get(), name.c_str(), H5P_DEFAULT), H5Aclose);
      const h5::Handle type(H5Aget_type(attribute.get()), H5Tclose);
      out.emplace_back(name, std::get<std::int64_t>(value), H5Tget_size(type.get()));
    }
    std::ranges::sort(out);
    return out;
  }
};

TEST_F(VectorFileTest, RoundTripsEveryFormatBitExactly) {
  struct Case {
    std::string name;
    VectorFormat format;
    VectorData vector;
  };
  VectorData qoi = make_vector(1, 2, 9, false, VectorSpace::Data, 5);
  qoi.qoi = true;
  VectorData checksum = make_vector(1, 6, 9, false, VectorSpace::Parameter, 6);
  checksum.checksum = -17;
  VectorData with_metadata = make_vector(3, 6, 9, true, VectorSpace::Parameter, 7);
  with_metadata.metadata = {{"units", "K/s"}};
  const std::vector<Case> cases = {
      {"v.npy", VectorFormat::Npy, make_vector(1, 6, 9, false, VectorSpace::Unknown, 1)},
      {"b.npy", VectorFormat::Npy, make_vector(4, 6, 9, true, VectorSpace::Unknown, 2)},
      {"v.h5", VectorFormat::Shiftop, make_vector(1, 6, 9, false, VectorSpace::Unknown, 3)},
      {"one.h5", VectorFormat::Shiftop, make_vector(1, 6, 9, true, VectorSpace::Data, 4)},
      {"meta.h5", VectorFormat::Shiftop, with_metadata},
      {"qoi.h5", VectorFormat::Shiftop, qoi},
      {"m.h5", VectorFormat::FFTMatvec, make_vector(1, 6, 9, false, VectorSpace::Parameter, 8)},
      {"d.h5", VectorFormat::FFTMatvec, qoi},
      {"c.h5", VectorFormat::FFTMatvec, checksum},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    write_vector(path(c.name), c.vector, c.format);
    EXPECT_EQ(detect_vector_format(path(c.name)), c.format);
    const VectorData back = read_vector(path(c.name), kAllowNonfinite);
    EXPECT_EQ(back.nrhs, c.vector.nrhs);
    EXPECT_EQ(back.blocks, c.vector.blocks);
    EXPECT_EQ(back.nt, c.vector.nt);
    EXPECT_EQ(back.batched, c.vector.batched);
    expect_bits_equal(back.values, c.vector.values);
    if (c.format != VectorFormat::Npy) {
      EXPECT_EQ(back.space, c.vector.space);
      EXPECT_EQ(back.qoi, c.vector.qoi);
      EXPECT_EQ(back.checksum, c.vector.checksum);
    }
    if (c.format == VectorFormat::Shiftop) {
      EXPECT_EQ(back.metadata, c.vector.metadata);
    }
    const VectorInfo info = inspect_vector(path(c.name));
    EXPECT_EQ(info.blocks, c.vector.blocks);
    EXPECT_EQ(info.nrhs, c.vector.nrhs);
  }
}

// The attributes FFTMatvec's Vector::save writes (compared by name): C ints, and nothing else.
TEST_F(VectorFileTest, WritesExactlyFFTMatvecsAttributes) {
  using Attributes = std::vector<std::tuple<std::string, std::int64_t, std::size_t>>;
  VectorData m = make_vector(1, 6, 9, false, VectorSpace::Parameter, 9);
  write_vector(path("m.h5"), m, VectorFormat::FFTMatvec);
  EXPECT_EQ(vec_attributes(path("m.h5")),
            (Attributes{{"n_param", 6, 4}, {"param_steps", 9, 4}, {"reindex", 1, 4}}));
  m.checksum = 12;
  write_vector(path("mc.h5"), m, VectorFormat::FFTMatvec);
  EXPECT_EQ(vec_attributes(path("mc.h5")),
            (Attributes{
                {"checksum", 12, 4}, {"n_param", 6, 4}, {"param_steps", 9, 4}, {"reindex", 1, 4}}));
  VectorData d = make_vector(1, 2, 9, false, VectorSpace::Data, 10);
  write_vector(path("d.h5"), d, VectorFormat::FFTMatvec);
  EXPECT_EQ(vec_attributes(path("d.h5")),
            (Attributes{{"n_obs", 2, 4}, {"obs_steps", 9, 4}, {"reindex", 1, 4}}));
  d.qoi = true;
  write_vector(path("q.h5"), d, VectorFormat::FFTMatvec);
  EXPECT_EQ(vec_attributes(path("q.h5")),
            (Attributes{{"n_obs", 2, 4}, {"obs_steps", 9, 4}, {"qoi", 1, 4}, {"reindex", 1, 4}}));
  const h5::Handle file = h5::open_file(path("q.h5"));
  EXPECT_EQ(h5::link_names(file.get(), "q.h5"), std::vector<std::string>{"vec"});
  EXPECT_EQ(h5::dataset_dims(h5::open_dataset(file.get(), "vec", "q.h5").get(), "q.h5"),
            std::vector<index_t>{18});
}

TEST_F(VectorFileTest, ReadsFFTMatvecVectorsWithFloatAndExtraAttributes) {
  const std::vector<double> values = tricky_values(12, 11, true);
  write_h5(path("m.h5"), {{.name = "vec",
                           .dims = {12},
                           .values = values,
                           .attributes = {{"n_param", 3.0},
                                          {"param_steps", 4.0},
                                          {"reindex", 1.0},
                                          {"created_by", std::string("h5py")}}}});
  const VectorData m = read_vector(path("m.h5"));
  EXPECT_EQ(m.space, VectorSpace::Parameter);
  EXPECT_EQ(m.blocks, 3);
  EXPECT_EQ(m.nt, 4);
  expect_bits_equal(m.values, values);
}

// Attributes of "vec" that shiftop does not interpret (qoi on a parameter vector, qoi = 0, a
// solver's time metadata) travel with their types through shiftop .h5 and back; .npy cannot
// hold them.
TEST_F(VectorFileTest, CarriesUninterpretedFFTMatvecAttributes) {
  const std::vector<double> values = tricky_values(12, 15, true);
  const Attributes extra = {{"qoi", std::int64_t{0}},
                            {"t_final", 2.5},
                            {"units", std::string("Pa")},
                            {"sensors", std::vector<std::int64_t>{3, 9, 27}}};
  for (const auto& [name, size_attributes] :
       {std::pair<std::string, Attributes>{"m.h5",
                                           {{"n_param", std::int64_t{3}},
                                            {"param_steps", std::int64_t{4}},
                                            {"reindex", std::int64_t{1}}}},
        std::pair<std::string, Attributes>{"d.h5",
                                           {{"n_obs", std::int64_t{3}},
                                            {"obs_steps", std::int64_t{4}},
                                            {"reindex", std::int64_t{1}}}}}) {
    SCOPED_TRACE(name);
    Attributes attributes = size_attributes;
    attributes.insert(attributes.end(), extra.begin(), extra.end());
    write_h5(path(name),
             {{.name = "vec", .dims = {12}, .values = values, .attributes = attributes}});
    const VectorData v = read_vector(path(name));
    EXPECT_EQ(v.fftmatvec_attributes, extra);
    write_vector(path("via.h5"), v);
    const VectorData via = read_vector(path("via.h5"));
    EXPECT_EQ(via.fftmatvec_attributes, extra);
    write_vector(path("back.h5"), via, VectorFormat::FFTMatvec);
    const h5::Handle f = h5::open_file(path("back.h5"));
    Attributes back =
        h5::read_attributes(h5::open_dataset(f.get(), "vec", name).get(), path("back.h5"));
    std::ranges::sort(back);
    std::ranges::sort(attributes);
    EXPECT_EQ(back, attributes);
    std::filesystem::remove(path("via.h5"));
    std::filesystem::remove(path("back.h5"));
  }
}

// An attribute of a type shiftop cannot hold (here a 2-D array) is named, not silently lost.
TEST_F(VectorFileTest, NamesAttributesItCannotCarry) {
  write_h5(path("m.h5"), {{.name = "vec",
                           .dims = {12},
                           .values = tricky_values(12, 16, true),
                           .attributes = {{"n_param", std::int64_t{3}},
                                          {"param_steps", std::int64_t{4}},
                                          {"reindex", std::int64_t{1}}}}});
  {
    const h5::Handle file(H5Fopen(path("m.h5").c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
    const h5::Handle dataset(H5Dopen2(file.get(), "vec", H5P_DEFAULT), H5Dclose);
    const std::array<hsize_t, 2> dims = {2, 2};
    const h5::Handle space(H5Screate_simple(2, dims.data(), nullptr), H5Sclose);
    const h5::Handle attribute(
        H5Acreate2(dataset.get(), "mesh", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
        H5Aclose);
    const std::array<double, 4> values = {1, 2, 3, 4};
    ASSERT_GE(H5Awrite(attribute.get(), H5T_NATIVE_DOUBLE, values.data()), 0);
  }
  const VectorData v = read_vector(path("m.h5"));
  EXPECT_EQ(v.uncarried_attributes, std::vector<std::string>{"mesh"});
  EXPECT_TRUE(v.fftmatvec_attributes.empty());
}

TEST_F(VectorFileTest, RefusesBadVectorFiles) {
  const std::vector<double> v = tricky_values(12, 12, true);
  const auto vec = [&](const std::string& name, shiftop::testing::Attributes attributes,
                       std::vector<index_t> dims = {12}, hid_t type = H5T_IEEE_F64LE) {
    write_h5(path(name), {{.name = "vec",
                           .dims = std::move(dims),
                           .values = v,
                           .file_type = type,
                           .attributes = std::move(attributes)}});
    return path(name);
  };
  const shiftop::testing::Attributes good = {
      {"n_param", std::int64_t{3}}, {"param_steps", std::int64_t{4}}, {"reindex", std::int64_t{1}}};
  expect_refused(path("absent.h5"), "no such file: expected a vector file");
  expect_refused(vec("both.h5", {{"n_param", std::int64_t{3}},
                                 {"param_steps", std::int64_t{4}},
                                 {"n_obs", std::int64_t{3}},
                                 {"obs_steps", std::int64_t{4}},
                                 {"reindex", std::int64_t{1}}}),
                 "has both n_param and n_obs: expected n_param/param_steps");
  expect_refused(vec("neither.h5", {{"reindex", std::int64_t{1}}}),
                 "has neither n_param nor n_obs: expected n_param/param_steps (a parameter-space "
                 "vector) or n_obs/obs_steps (a data-space vector)");
  expect_refused(vec("length.h5", {{"n_param", std::int64_t{3}},
                                   {"param_steps", std::int64_t{5}},
                                   {"reindex", std::int64_t{1}}}),
                 "dataset 'vec': has length 12: expected 15 = 3*5 (n_param*param_steps)");
  expect_refused(vec("no_steps.h5", {{"n_obs", std::int64_t{3}}, {"reindex", std::int64_t{1}}}),
                 "no attribute 'obs_steps': expected one (FFTMatvec requires it)");
  expect_refused(
      vec("half.h5",
          {{"n_param", 1.5}, {"param_steps", std::int64_t{4}}, {"reindex", std::int64_t{1}}}),
      "attribute 'n_param': expected a non-negative integer count of at most "
      "1099511627776, got 1.5");
  expect_refused(vec("tosi.h5", {{"n_param", std::int64_t{3}},
                                 {"param_steps", std::int64_t{4}},
                                 {"reindex", std::int64_t{0}}}),
                 "attribute 'reindex' is 0: expected 1 (SOTI order; reindex = 0 is TOSI");
  expect_refused(
      vec("no_reindex.h5", {{"n_param", std::int64_t{3}}, {"param_steps", std::int64_t{4}}}),
      "no attribute 'reindex'");
  expect_refused(vec("qoi2.h5", {{"n_obs", std::int64_t{3}},
                                 {"obs_steps", std::int64_t{4}},
                                 {"reindex", std::int64_t{1}},
                                 {"qoi", std::int64_t{2}}}),
                 "attribute 'qoi' is 2: expected 0 or 1");
  expect_refused(vec("f32.h5", good, {12}, H5T_IEEE_F32LE),
                 "dataset 'vec': stores float32 values: expected float64");
  expect_refused(vec("rank2.h5", good, {3, 4}),
                 "dataset 'vec': has rank 2: expected a 1-D dataset");
  write_h5(path("other.h5"), {{.name = "kernels", .dims = {12}, .values = v}});
  expect_refused(path("other.h5"),
                 "no dataset 'vector' (shiftop) or 'vec' (FFTMatvec): expected a vector file; it "
                 "has kernels");
  write_h5(path("rank1.h5"), {{.name = "vector", .dims = {12}, .values = v}});
  expect_refused(path("rank1.h5"),
                 "dataset 'vector': has rank 1 (shape (12)): expected rank 2 or 3, shape (blocks, "
                 "Nt) or (nrhs, blocks, Nt)");
  write_h5(path("f32_vector.h5"),
           {{.name = "vector", .dims = {3, 4}, .values = v, .file_type = H5T_IEEE_F32BE}});
  expect_refused(path("f32_vector.h5"), "stores float32 values: expected float64");
  write_h5(path("space.h5"), {{.name = "vector", .dims = {3, 4}, .values = v}},
           {{"space", std::string("time")}});
  expect_refused(path("space.h5"), "attribute 'space' is 'time': expected 'parameter' or 'data'");
  write_h5(path("v99.h5"), {{.name = "vector", .dims = {3, 4}, .values = v}},
           {{"format_version", std::int64_t{99}}});
  expect_refused(path("v99.h5"),
                 "attribute 'format_version' is 99: expected 1, the only version of shiftop's "
                 "file layout this shiftop reads");
  write_npy(path("flat.npy"), v, std::vector<index_t>{12});
  expect_refused(path("flat.npy"),
                 "has shape (12): expected a vector of shape (blocks, Nt) or (nrhs, blocks, Nt)");
  write_vector(path("good.h5"), make_vector(5, 30, 40, true, VectorSpace::Unknown, 13));
  shiftop::testing::write_truncated(path("good.h5"), path("truncated.h5"), 0.5);
  expect_refused(path("truncated.h5"), "truncated or corrupt");
}

TEST_F(VectorFileTest, RefusesNonfiniteValuesNamingTheirLocation) {
  VectorData x = make_vector(3, 4, 5, true, VectorSpace::Unknown, 14);
  for (double& value : x.values)
    if (!std::isfinite(value)) value = 0;
  x.values[(2 * 4 + 1) * 5 + 3] = std::nan("");
  for (const std::string name : {"x.h5", "x.npy"}) {
    write_vector(path(name), x);
    // The option that accepts them is named in the caller's words, and only by a caller that
    // has one.
    const std::string where = "NaN at (right-hand side 2, block 1, time 3): expected finite values";
    expect_refused(path(name), where);
    EXPECT_TRUE(error_of([&] { read_vector(path(name)); }).ends_with(where));
    EXPECT_TRUE(error_of([&] {
                  read_vector(path(name), {.allow_nonfinite = false,
                                           .allow_nonfinite_name = "--allow-nonfinite"});
                }).ends_with(where + " (--allow-nonfinite accepts them)"));
    EXPECT_TRUE(std::isnan(read_vector(path(name), kAllowNonfinite).values[48]));
  }
  VectorData m = make_vector(1, 4, 5, false, VectorSpace::Parameter, 15);
  for (double& value : m.values)
    if (!std::isfinite(value)) value = 0;
  m.values[7] = -std::numeric_limits<double>::infinity();
  write_vector(path("m.h5"), m, VectorFormat::FFTMatvec);
  expect_refused(path("m.h5"), "dataset 'vec': infinity at (right-hand side 0, block 1, time 2)");
}

TEST_F(VectorFileTest, RefusesAbsurdSizesBeforeAllocating) {
  write_h5(path("huge.h5"),
           {{.name = "vector", .dims = {1000000, 1000000, 10000}, .unwritten = true}});
  expect_refused(path("huge.h5"), "needs 80000000000000000 bytes");
  write_h5(path("huge_vec.h5"), {{.name = "vec",
                                  .dims = {1000000000000},
                                  .unwritten = true,
                                  .attributes = {{"n_obs", std::int64_t{1000000}},
                                                 {"obs_steps", std::int64_t{1000000}},
                                                 {"reindex", std::int64_t{1}}}}});
  expect_refused(path("huge_vec.h5"),
                 "reading a vector of 1000000000000 values needs 8000000000000 bytes");
}

TEST_F(VectorFileTest, FailedWritesLeaveNothingBehind) {
  write_vector(path("keep.h5"), make_vector(1, 2, 3, false, VectorSpace::Unknown, 16));
  const std::vector<std::string> before = entries();
  const VectorData big = make_vector(2, 64, 1024, true, VectorSpace::Data, 17);
  for (const std::string name : {"keep.h5", "new.h5", "new.npy"}) {
    SCOPED_TRACE(name);
    std::string message;
    {
      const FileSizeLimit limit(1 << 16);
      message = error_of([&] { write_vector(path(name), big); });
    }
    EXPECT_TRUE(contains(message, path(name))) << message;
    EXPECT_EQ(entries(), before);
  }
  const std::vector<std::pair<VectorData, std::string>> refusals = {
      {big, "an FFTMatvec vector file holds one vector: expected 1 right-hand side, got 2"},
      {make_vector(1, 2, 3, false, VectorSpace::Unknown, 18),
       "must say whether it is a parameter- or data-space vector"},
      {VectorData{.blocks = 2, .nt = 3, .values = {1.0}},
       "the vector holds 1 values: expected nrhs*blocks*nt = 6"},
  };
  for (const auto& [vector, words] : refusals) {
    SCOPED_TRACE(words);
    const std::string message =
        error_of([&] { write_vector(path("v.h5"), vector, VectorFormat::FFTMatvec); });
    EXPECT_TRUE(contains(message, words)) << message;
    EXPECT_EQ(entries(), before);
  }
  EXPECT_EQ(read_vector(path("keep.h5"), kAllowNonfinite).blocks, 2);
}

}  // namespace
}  // namespace shiftop::io
