// shiftop: fast actions of block Toeplitz operators (see README.md). Every failure is reported as
// one line "shiftop: error: ..." with a non-zero exit status.
#include <fmt/core.h>

#include <exception>

#include "commands.hpp"
#include "shiftop/core/error.hpp"
#include "signal_cleanup.hpp"

int main(int argc, char** argv) {
  shiftop::app::install_signal_cleanup();  // first: before any thread starts
  CLI::App app{"shiftop: fast block-Toeplitz operator actions (p2o maps, adjoints, Hessians)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "shiftop 0.1.0");
  shiftop::app::add_demo_command(app);
  shiftop::app::add_matvec_command(app);
  shiftop::app::add_bench_command(app);
  shiftop::app::add_info_command(app);
  shiftop::app::add_grid_command(app);
  shiftop::app::add_convert_command(app);
  shiftop::app::add_model_command(app);
  shiftop::app::add_tune_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "shiftop: error: {} (see --help)\n", e.what());
    return e.get_exit_code();
  } catch (const shiftop::Error& e) {
    fmt::print(stderr, "shiftop: error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "shiftop: internal error: {}\n", e.what());
    return 2;
  }
  return 0;
}
