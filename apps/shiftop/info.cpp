// `shiftop info`: what an operator, vector or block-circulant operator file holds (every format
// shiftop reads, from metadata alone), and which CUDA devices this machine has.
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include <type_traits>
#include <utility>
#include <variant>

#include "commands.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/io/circulant_file.hpp"
#include "shiftop/io/file_kind.hpp"
#include "shiftop/io/npy.hpp"
#include "shiftop/io/operator_file.hpp"
#include "shiftop/io/vector_file.hpp"
#ifdef SHIFTOP_HAVE_CUDA
#include "shiftop/gpu/devices.hpp"
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

// What info found: the JSON document, and the details with their meanings for the text output.
struct Report {
  nlohmann::ordered_json json;
  io::Details details{};
};

// Numbers and flags as JSON numbers and booleans; none as null.
nlohmann::ordered_json details_json(const io::Details& details) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const io::Detail& d : details)
    std::visit([&](const auto& value) { out[d.key] = value; }, d.value);
  return out;
}

// "0 (parameter-to-observable)": flags as 0/1, as the files store them; none as "none".
std::string detail_text(const io::Detail& d) {
  const std::string value = std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>)
          return "none";
        else if constexpr (std::is_same_v<T, bool>)
          return v ? "1" : "0";
        else
          return fmt::format("{}", v);
      },
      d.value);
  return d.meaning.empty() ? value : fmt::format("{} ({})", value, d.meaning);
}

// .npy: the array's header, with what its shape can hold.
Report npy_report(const std::string& path) {
  const io::NpyHeader header = io::read_npy_header(path);
  const index_t itemsize = header.dtype == io::DType::Float64 ? 8 : 4;
  return {{{"file", path},
           {"format", "npy"},
           {"dtype", header.dtype == io::DType::Float64 ? "float64" : "float32"},
           {"shape", header.shape},
           {"bytes", header.count() * itemsize},
           {"holds", describe(header.shape)}}};
}

Report operator_report(const std::string& path) {
  io::OperatorInfo info = io::inspect_operator(path);
  return {{{"file", path},
           {"format", name_of(info.format)},
           {"kind", "operator"},
           {"shape", {{"nd", info.shape.nd}, {"nm", info.shape.nm}, {"nt", info.shape.nt}}},
           {"triangular", info.triangular},
           {"bytes", info.stored_bytes},
           {"details", details_json(info.details)}},
          std::move(info.details)};
}

Report vector_report(const std::string& path) {
  io::VectorInfo info = io::inspect_vector(path);
  return {{{"file", path},
           {"format", name_of(info.format)},
           {"kind", "vector"},
           {"nrhs", info.nrhs},
           {"blocks", info.blocks},
           {"nt", info.nt},
           {"batched", info.batched},
           {"space", name_of(info.space)},
           {"details", details_json(info.details)}},
          std::move(info.details)};
}

// A block-circulant operator: its shape and nonzeros, from the attributes and dataset headers
// (`shiftop circ info` reads the whole file for the counts per row).
Report circulant_report(const std::string& path) {
  const io::CirculantInfo info = io::inspect_circulant(path);
  return {{{"file", path},
           {"format", "shiftop"},
           {"kind", "circulant"},
           {"shape",
            {{"k", info.shape.k},
             {"mb", info.shape.mb},
             {"nb", info.shape.nb},
             {"rows", info.shape.rows()},
             {"cols", info.shape.cols()}}},
           {"nnz", info.nnz},
           {"dtype", info.value_type},
           {"index_type", fmt::format("int{}", info.index_bits)},
           {"bytes", info.stored_bytes}}};
}

void print_text(const Report& report) {
  const nlohmann::ordered_json& f = report.json;
  const std::string path = f["file"].get<std::string>();
  if (f["format"] == "npy") {
    fmt::print("{}: {} array of shape ({}), {} bytes\n  {}\n", path, f["dtype"].get<std::string>(),
               fmt::join(f["shape"].get<std::vector<index_t>>(), ", "), f["bytes"].get<index_t>(),
               f["holds"].get<std::string>());
    return;
  }
  if (f["kind"] == "circulant") {
    const auto& s = f["shape"];
    fmt::print(
        "{}: {} block-circulant operator k={} mb={} nb={} ({} x {}), first block row of {} "
        "nonzeros ({} values, {} indices), {} bytes\n",
        path, f["format"].get<std::string>(), s["k"].get<index_t>(), s["mb"].get<index_t>(),
        s["nb"].get<index_t>(), s["rows"].get<index_t>(), s["cols"].get<index_t>(),
        f["nnz"].get<index_t>(), f["dtype"].get<std::string>(), f["index_type"].get<std::string>(),
        f["bytes"].get<index_t>());
  } else if (f["kind"] == "operator") {
    const auto& s = f["shape"];
    fmt::print("{}: {} operator (Nd={}, Nm={}, Nt={}), {}, {} bytes of kernels\n", path,
               f["format"].get<std::string>(), s["nd"].get<index_t>(), s["nm"].get<index_t>(),
               s["nt"].get<index_t>(),
               f["triangular"].get<bool>() ? "block lower-triangular" : "general (first block row)",
               f["bytes"].get<index_t>());
  } else {
    fmt::print("{}: {} vector, {}{} blocks x {} time steps, {} space\n", path,
               f["format"].get<std::string>(),
               f["batched"].get<bool>()
                   ? fmt::format("{} right-hand sides x ", f["nrhs"].get<index_t>())
                   : "",
               f["blocks"].get<index_t>(), f["nt"].get<index_t>(), f["space"].get<std::string>());
  }
  for (const io::Detail& d : report.details)
    fmt::print("  {}: {}\n", d.key, detail_text(d));
}

void run(const InfoOptions& o) {
  require(!o.path.empty() || o.devices, "info needs a FILE or --devices");
  Report report;
  if (!o.path.empty()) {
    if (io::detect_operator_format(o.path) == io::OperatorFormat::Npy) {
      report = npy_report(o.path);
    } else {
      switch (io::detect_file_kind(o.path)) {
        case io::FileKind::Operator:
          report = operator_report(o.path);
          break;
        case io::FileKind::Vector:
          report = vector_report(o.path);
          break;
        case io::FileKind::Circulant:
          report = circulant_report(o.path);
          break;
      }
    }
  }
  nlohmann::ordered_json& out = report.json;
  if (o.devices) {
    out["cuda_devices"] = nlohmann::json::array();
#ifdef SHIFTOP_HAVE_CUDA
    for (const auto& d : gpu::visible_devices())
      out["cuda_devices"].push_back(
          {{"index", d.index},
           {"name", d.name},
           {"compute_capability",
            {{"major", d.compute_capability_major}, {"minor", d.compute_capability_minor}}},
           {"memory_bytes", d.total_memory_bytes},
           {"free_bytes", d.free_memory_bytes},
           {"multiprocessors", d.multiprocessors}});
#endif
  }
  if (o.json) {
    fmt::print("{}\n", out.dump());
    return;
  }
  if (!o.path.empty()) print_text(report);
  if (o.devices) {
    if (out["cuda_devices"].empty()) fmt::print("no CUDA device visible\n");
    for (const auto& d : out["cuda_devices"])
      fmt::print("GPU {}: {} (sm {}.{}), {:.1f} GiB\n", d["index"].get<int>(),
                 d["name"].get<std::string>(), d["compute_capability"]["major"].get<int>(),
                 d["compute_capability"]["minor"].get<int>(),
                 static_cast<double>(d["memory_bytes"].get<std::size_t>()) / (1 << 30));
  }
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  CLI::App* cmd = app.add_subcommand("info", "Describe an operator or vector file; list GPUs");
  cmd->add_option("file", o->path,
                  "file to describe: shiftop .h5 (operator, vector or block-circulant operator), "
                  "FFTMatvec matrix directory or vector file, or .npy");
  cmd->add_flag("--devices", o->devices, "list the CUDA devices this machine has");
  add_json_flag(cmd, o->json);
  cmd->callback([o] { run(*o); });
}

}  // namespace shiftop::app
