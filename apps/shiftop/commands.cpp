#include "commands.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string>
#include <vector>

#include "shiftop/core/error.hpp"
#include "shiftop/core/threads.hpp"
#ifdef SHIFTOP_HAVE_CUDA
#include "shiftop/gpu/devices.hpp"
#endif

namespace shiftop::app {

Backend backend_option(const std::string& text, int device) {
  return parse_backend(text, device, "--backend", "--device");
}

void add_backend_option(CLI::App* cmd, std::string& backend) {
  cmd->add_option("--backend", backend, choices_of<Backend>())->capture_default_str();
}

void add_device_option(CLI::App* cmd, int& device) {
  add_count_option(cmd, "--device", device, "CUDA device index", kNonNegative);
}

void add_threads_option(CLI::App* cmd, int& threads) {
  // At most the hardware threads, as Python's threads=: more only oversubscribes the cores (on 2
  // cores a 2x3x4 apply took 0.007 ms with 2 threads, 0.35 ms with 8; bench/NOTES.md).
  const int hardware = hardware_threads();
  add_count_option(
      cmd, "--threads", threads,
      fmt::format("CPU threads (0: OpenMP's default, OMP_NUM_THREADS or all; at most the {} "
                  "hardware threads)",
                  hardware),
      integer_between(0, hardware,
                      fmt::format("between 0 (OpenMP's default) and {}, the hardware threads this "
                                  "process may run on",
                                  hardware)));
}

void add_json_flag(CLI::App* cmd, bool& json) {
  cmd->add_flag("--json", json, "print one JSON object on stdout");
}

void refuse_options_as_values(CLI::App& app) {
  for (CLI::App* cmd : app.get_subcommands([](CLI::App*) { return true; })) {
    // Any "--word", and the command's own short options ("-o"): negative numbers and "-" still
    // reach the option's own check.
    std::vector<std::string> short_names;
    for (const CLI::Option* option : cmd->get_options())
      for (const std::string& name : option->get_snames())
        short_names.push_back("-" + name);
    // A transform runs before the option's other validators, so that "--threads --json" is
    // refused as a swallowed option rather than as a bad number; the empty description keeps
    // --help as is.
    const CLI::Validator not_an_option(
        [short_names](std::string& text) -> std::string {
          if (text.starts_with("--") ||
              std::find(short_names.begin(), short_names.end(), text) != short_names.end())
            return "expected a value, got the option '" + text + "'";
          return {};
        },
        "");
    // An empty value names nothing: `--vectors ""` once silently wrote no vectors.
    const CLI::Validator not_empty(
        [](std::string& text) -> std::string {
          return text.empty() ? "expected a value, got an empty string" : "";
        },
        "");
    for (CLI::Option* option : cmd->get_options()) {
      if (option->get_type_size_max() == 0) continue;
      option->transform(not_empty);
      if (option->nonpositional()) option->transform(not_an_option);
    }
    refuse_options_as_values(*cmd);
  }
}

void require_known_subcommand(const CLI::App& app, int argc, const char* const* argv) {
  // The top-level options (--help, --version) take no value, so the first word that is not an
  // option is the subcommand; any other option before it belongs to a subcommand.
  const auto first =
      std::find_if(argv + 1, argv + argc, [](const char* word) { return word[0] != '-'; });
  for (const char* const* word = argv + 1; word != first; ++word) {
    const std::string option = std::string(*word).substr(0, std::string(*word).find('='));
    if (app.get_option_no_throw(option) == nullptr)
      throw CLI::ExtrasError(fmt::format("'{}' is not an option of shiftop itself: options follow "
                                         "the subcommand (shiftop SUBCOMMAND {} ...)",
                                         *word, *word),
                             CLI::ExitCodes::ExtrasError);
  }
  if (first == argv + argc) return;
  std::vector<std::string> names;
  for (const CLI::App* cmd : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(cmd->get_name());
  if (std::find(names.begin(), names.end(), *first) != names.end()) return;
  throw CLI::ExtrasError(
      fmt::format("unknown subcommand '{}': expected one of {}", *first, fmt::join(names, ", ")),
      CLI::ExitCodes::ExtrasError);
}

const char* const kExitCodesHelp =
    "Exit status: 0 success; 1 a user error (bad input, option or file; one line \"shiftop: "
    "error: ...\" on stderr); 2 an internal error (a bug or a failed library call); 104-114 a "
    "command line the parser refuses (CLI11's codes: 104 a value of the wrong type, 105 a value "
    "an option's check refuses, 106 a required option missing, 109 an unknown argument or "
    "subcommand); 130 interrupted (SIGINT), "
    "143 terminated (SIGTERM).";

}  // namespace shiftop::app
