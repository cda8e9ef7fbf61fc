#include "io/npy_slice.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <system_error>

#include "shiftop/core/error.hpp"

namespace shiftop::io {
namespace {

struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

std::string last_error() {
  return std::generic_category().message(errno);
}

}  // namespace

std::vector<double> read_npy_slice(const std::string& path, const NpyHeader& header, index_t r0,
                                   index_t r1, index_t c0, index_t c1) {
  require(header.shape.size() == 3, "{}: has shape ({}): expected a 3-D array", path,
          fmt::join(header.shape, ", "));
  const index_t nm = header.shape[1];
  const index_t nt = header.shape[2];
  const index_t itemsize = header.dtype == DType::Float64 ? 8 : 4;
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  require(!error, "{}: cannot read the file size: {}", path, error.message());
  const auto expected = static_cast<std::uintmax_t>(header.count() * itemsize);
  require(
      size - header.data_offset >= expected,
      "{}: .npy data section is truncated: expected {} bytes after the {}-byte header, found {}",
      path, expected, header.data_offset, size - header.data_offset);

  const std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (file == nullptr) fail("{}: cannot open for reading: {}", path, last_error());
  const index_t run = (c1 - c0) * nt;  // contiguous values per row
  std::vector<double> out(static_cast<std::size_t>((r1 - r0) * run));
  std::vector<float> single(header.dtype == DType::Float32 ? static_cast<std::size_t>(run) : 0);
  for (index_t r = r0; r < r1; ++r) {
    const auto offset =
        static_cast<off_t>(header.data_offset) + static_cast<off_t>((r * nm + c0) * nt * itemsize);
    double* row = out.data() + (r - r0) * run;
    void* buffer = single.empty() ? static_cast<void*>(row) : static_cast<void*>(single.data());
    const auto bytes = static_cast<std::size_t>(run * itemsize);
    if (::fseeko(file.get(), offset, SEEK_SET) != 0 ||
        std::fread(buffer, 1, bytes, file.get()) != bytes)
      fail("{}: read failed: {}", path,
           std::ferror(file.get()) ? last_error() : std::string("unexpected end of file"));
    if (!single.empty()) std::copy(single.begin(), single.end(), row);
  }
  return out;
}

}  // namespace shiftop::io
