// `shiftop info`: what a file holds, and which CUDA devices this machine has.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "core/error.hpp"
#include "io/npy.hpp"
#ifdef SHIFTOP_HAVE_CUDA
#include "backend/cuda/device.hpp"
#endif

namespace shiftop::app {
namespace {

struct InfoOptions {
  std::string path;
  bool devices = false, json = false;
};

std::string describe(const std::vector<index_t>& shape) {
  if (shape.size() == 3)
    return fmt::format(
        "operator kernels (Nd={}, Nm={}, Nt={}), or {} vectors of {} blocks x {} "
        "steps",
        shape[0], shape[1], shape[2], shape[0], shape[1], shape[2]);
  if (shape.size() == 2)
    return fmt::format("one vector of {} blocks x {} time steps", shape[0], shape[1]);
  return "not an operator or vector layout shiftop reads (expected 2-D or 3-D)";
}

void run(const InfoOptions& o) {
  nlohmann::ordered_json out;
  if (!o.path.empty()) {
    const io::NpyHeader header = io::read_npy_header(o.path);
    out["file"] = o.path;
    out["format"] = "npy";
    out["dtype"] = header.dtype == io::DType::Float64 ? "float64" : "float32";
    out["shape"] = header.shape;
    out["bytes"] = header.count() * (header.dtype == io::DType::Float64 ? 8 : 4);
    out["holds"] = describe(header.shape);
  }
  if (o.devices) {
    out["cuda_devices"] = nlohmann::json::array();
#ifdef SHIFTOP_HAVE_CUDA
    for (const auto& d : cuda::visible_devices())
      out["cuda_devices"].push_back(
          {{"index", d.index},
           {"name", d.name},
           {"compute_capability",
            fmt::format("{}.{}", d.compute_capability_major, d.compute_capability_minor)},
           {"memory_bytes", d.total_memory_bytes},
           {"free_bytes", d.free_memory_bytes},
           {"multiprocessors", d.multiprocessors}});
#endif
  }
  require(!o.path.empty() || o.devices, "info needs a FILE or --devices");
  if (o.json) {
    fmt::print("{}\n", out.dump());
    return;
  }
  if (!o.path.empty())
    fmt::print("{}: {} array of shape ({}), {} bytes\n  {}\n", o.path,
               out["dtype"].get<std::string>(),
               fmt::join(out["shape"].get<std::vector<index_t>>(), ", "),
               out["bytes"].get<index_t>(), out["holds"].get<std::string>());
  if (o.devices) {
    if (out["cuda_devices"].empty()) fmt::print("no CUDA device visible\n");
    for (const auto& d : out["cuda_devices"])
      fmt::print("GPU {}: {} (sm {}), {:.1f} GiB\n", d["index"].get<int>(),
                 d["name"].get<std::string>(), d["compute_capability"].get<std::string>(),
                 static_cast<double>(d["memory_bytes"].get<std::size_t>()) / (1 << 30));
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Describe an operator or vector file; list GPUs");
  cmd->add_option("file", o->path, ".npy file to describe");
  cmd->add_flag("--devices", o->devices, "list the CUDA devices this machine has");
  cmd->add_flag("--json", o->json, "print one JSON object on stdout");
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
