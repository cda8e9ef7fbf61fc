// The subcommands of the `shiftop` tool; each file registers one on the CLI11 application. Also the
// options several subcommands share, registered and read here so that each is written once: the
// names of the backends come from the library's one table (core/backend.hpp).
#pragma once

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <charconv>
#include <limits>
#include <string>

#include "shiftop/btt/plan.hpp"
#include "shiftop/core/enum_names.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::app {

/// Validators whose messages say what is expected, e.g. "--nm: must be a positive integer, got 0".
inline CLI::Validator integer_between(long long minimum, long long maximum,
                                      const std::string& what) {
  return CLI::Validator(
      [minimum, maximum, what](std::string& text) -> std::string {
        long long value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < minimum ||
            value > maximum)
          return "must be " + what + ", got '" + text + "'";
        return {};
      },
      what);
}
inline CLI::Validator integer_at_least(long long minimum, const std::string& what) {
  return integer_between(minimum, std::numeric_limits<long long>::max(), what);
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

/// An option whose value is one of E's names (core/enum_names.hpp), in `value` as text for the
/// command to parse_name. `description` is a format string whose {} is replaced by the names
/// ("the method: {}" -> "the method: mlem, sirt or cgls"), so that --help lists what the library
/// accepts; any other value is refused while parsing, in parse_name's words ("--method: expected
/// mlem, sirt or cgls, got 'art' (see --help)", status 105).
template <class E>
CLI::Option* add_choice_option(CLI::App* cmd, const std::string& name, std::string& value,
                               const std::string& description) {
  CLI::Option* option =
      cmd->add_option(name, value, fmt::format(fmt::runtime(description), choices_of<E>()))
          ->capture_default_str();
  const std::string what = option->get_name();
  // CLI11 puts "<name>: " before a check's message itself (CLI::ValidationError).
  return option->check(CLI::Validator(
      [what](const std::string& text) -> std::string {
        try {
          (void)parse_name<E>(text, what);
          return {};
        } catch (const Error& e) {
          return std::string(e.what()).substr(what.size() + 2);
        }
      },
      ""));
}

/// The flag of matvec, convert and tune that accepts NaN and infinity in the files they read,
/// which the refusal of such a value names (io::OperatorReadOptions::allow_nonfinite_name); the
/// commands without it leave the name empty.
inline constexpr const char* kAllowNonfinite = "--allow-nonfinite";

/// The backend --backend names, read by the library's one parser (shiftop::parse_backend) with
/// the tool's option names; shiftop::Error "--backend: expected cpu or cuda, got '...'" for
/// any other text, and for cuda in user words when it cannot run: a build without CUDA, no CUDA
/// device ("no CUDA device: ..."), or no device `device` ("--device 7: this machine has 1 CUDA
/// device (0)").
Backend backend_option(const std::string& text, int device = 0);

/// --backend (the backend's name, parsed by parse_backend), --device (the GPU), --threads (CPU
/// threads, 0: OpenMP's default, at most shiftop::hardware_threads()) and --json (one JSON object
/// on stdout), the same in every command that takes them.
void add_backend_option(CLI::App* cmd, std::string& backend);
void add_device_option(CLI::App* cmd, int& device);
void add_threads_option(CLI::App* cmd, int& threads);
void add_json_flag(CLI::App* cmd, bool& json);

/// Makes every option of every subcommand that takes a value refuse a value that is itself an
/// option ("--truth: expected a value, got the option '--data'"), so that a forgotten value never
/// swallows the next option (`model ... --truth --data d.h5` would write the truth to '--data').
/// Negative numbers ("-1") and "-" still reach the option's own checks. An empty value is refused
/// too, positional ones included ("--vectors: expected a value, got an empty string"). Call it
/// once after every subcommand is registered.
void refuse_options_as_values(CLI::App& app);

/// Throws CLI11's ExtrasError naming the subcommands when the first word of the command line is
/// none of them (CLI11 itself says only "A subcommand is required").
void require_known_subcommand(const CLI::App& app, int argc, const char* const* argv);

/// The exit statuses, as --help lists them and README.md documents them.
extern const char* const kExitCodesHelp;

void add_demo_command(CLI::App& app);
void add_matvec_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_grid_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_model_command(CLI::App& app);
void add_tune_command(CLI::App& app);
void add_solve_command(CLI::App& app);
void add_svd_command(CLI::App& app);
void add_spectrum_command(CLI::App& app);
void add_circ_command(CLI::App& app);
void add_ct_recon_command(CLI::App& app);
void add_gsvd_command(CLI::App& app);
void add_regpath_command(CLI::App& app);

}  // namespace shiftop::app
