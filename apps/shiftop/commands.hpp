// The subcommands of the `shiftop` tool; each file registers one on the CLI11 application.
#pragma once

#include <CLI/CLI.hpp>

#include <charconv>
#include <string>

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

void add_demo_command(CLI::App& app);
void add_matvec_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_grid_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_tune_command(CLI::App& app);

}  // namespace shiftop::app
