// The subcommands of the `shiftop` tool; each file registers one on the CLI11 application. Also the
// options several subcommands share, registered and read here so that each is written once: the
// name of a new backend, for one, goes into parse_backend() and kBackendNames only.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

#include "shiftop/btt/plan.hpp"

namespace shiftop::app {

/// Validators whose messages say what is expected, e.g. "--nm: must be a positive integer, got 0".
inline CLI::Validator integer_at_least(long long minimum, const std::string& what) {
  return CLI::Validator(
      [minimum, what](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < minimum)
          return "must be " + what + ", got '" + text + "'";
        return {};
      },
      what);
}
inline const CLI::Validator kPositive = integer_at_least(1, "a positive integer");
inline const CLI::Validator kNonNegative = integer_at_least(0, "a non-negative integer");

/// An integer option whose default shows in --help, checked by `check` (kPositive, kNonNegative).
template <typename T>
CLI::Option* add_count_option(CLI::App* cmd, const std::string& name, T& value,
                              const std::string& description,
                              const CLI::Validator& check = kPositive) {
  return cmd->add_option(name, value, description)->capture_default_str()->check(check);
}

/// The values --backend takes, as its help and its error message list them.
inline constexpr const char* kBackendNames = "cpu or cuda";

/// The backend --backend names; shiftop::Error "--backend: expected cpu or cuda, got '...'" for
/// any other text.
btt::Backend parse_backend(const std::string& text);

/// --backend (the backend's name, parsed by parse_backend), --device (the GPU), --threads (CPU
/// threads, 0: all) and --json (one JSON object on stdout), the same in every command that takes
/// them.
void add_backend_option(CLI::App* cmd, std::string& backend);
void add_device_option(CLI::App* cmd, int& device);
void add_threads_option(CLI::App* cmd, int& threads);
void add_json_flag(CLI::App* cmd, bool& json);

void add_demo_command(CLI::App& app);
void add_matvec_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_grid_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_tune_command(CLI::App& app);

}  // namespace shiftop::app
