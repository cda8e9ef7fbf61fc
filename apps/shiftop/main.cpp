// shiftop: fast actions of block Toeplitz operators (see README.md). Every failure is reported as
// one line "shiftop: error: ..." (once under mpiexec: mpi_launch.hpp) with the exit status
// --help lists.
#include <fmt/core.h>

#include <exception>

#include "commands.hpp"
#include "mpi_launch.hpp"
#include "shiftop/core/error.hpp"
#include "signal_cleanup.hpp"

namespace {

// Parses the command line and runs the subcommand; every failure becomes an Outcome.
shiftop::app::Outcome run(CLI::App& app, int argc, char** argv) {
  try {
    shiftop::app::require_known_subcommand(app, argc, argv);
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help, --help-all, --version
    return {.status = app.exit(e), .message = {}, .internal = false};
  } catch (const CLI::ParseError& e) {
    return {.status = e.get_exit_code(),
            .message = fmt::format("{} (see --help)", e.what()),
            .internal = false};
  } catch (const shiftop::Error& e) {
    return {.status = 1, .message = e.what(), .internal = false};
  } catch (const std::exception& e) {
    return {.status = 2, .message = e.what(), .internal = true};
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  shiftop::app::install_signal_cleanup();  // first: before any thread starts
  CLI::App app{
      "shiftop: fast linear algebra with shift-invariant operators: block-Toeplitz operators, "
      "block-circulant operators and CT, Jacobi SVD/HSVD and GSVD, inverse problems"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "shiftop 0.1.0");
  app.footer(shiftop::app::kExitCodesHelp);  // before the subcommands, which copy it
  shiftop::app::add_demo_command(app);
  shiftop::app::add_matvec_command(app);
  shiftop::app::add_bench_command(app);
  shiftop::app::add_info_command(app);
  shiftop::app::add_grid_command(app);
  shiftop::app::add_convert_command(app);
  shiftop::app::add_model_command(app);
  shiftop::app::add_tune_command(app);
  shiftop::app::add_solve_command(app);
  shiftop::app::add_svd_command(app);
  shiftop::app::add_spectrum_command(app);
  shiftop::app::add_circ_command(app);
  shiftop::app::add_ct_recon_command(app);
  shiftop::app::add_gsvd_command(app);
  shiftop::app::add_regpath_command(app);
  shiftop::app::refuse_options_as_values(app);
  shiftop::app::Run process;
  return process.finish(run(app, argc, argv));
}
