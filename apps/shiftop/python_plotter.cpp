#include "python_plotter.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include <strings.h>

#include "shiftop/core/error.hpp"
#include "shiftop/io/atomic_output.hpp"

extern char** environ;

namespace shiftop::app {
namespace {

#ifndef SHIFTOP_DEFAULT_PYTHON
#define SHIFTOP_DEFAULT_PYTHON "python3"
#endif

constexpr std::string_view kInstall =
    "install the Python package with `pip install .` in the shiftop repository (README: Set-up), "
    "or set SHIFTOP_PYTHON to a Python that has it";

struct ChildResult {
  int spawn_error = 0;  // errno of a failed start (no such interpreter), else 0
  int exit_status = 0;  // the child's exit status, or 128 + the signal that ended it
  std::string output;   // its standard output, when captured
};

/// Runs argv[0] (found on PATH) with `argv`. The child starts with no signal blocked: the tool
/// blocks SIGINT, SIGTERM and SIGHUP in every thread for its clean-up thread (signal_cleanup.hpp),
/// and a blocked mask survives exec, so Ctrl-C would not reach the plotter. With `capture`, the
/// child's standard output is returned and its standard error discarded.
ChildResult run_child(const std::vector<std::string>& argv, bool capture) {
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::array<int, 2> pipe_ends{-1, -1};
  if (capture)
    require(::pipe2(pipe_ends.data(), O_CLOEXEC) == 0, "cannot create a pipe: {}",
            std::strerror(errno));
  posix_spawnattr_t attributes;
  posix_spawn_file_actions_t actions;
  posix_spawnattr_init(&attributes);
  posix_spawn_file_actions_init(&actions);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  if (capture) {
    posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  std::fflush(nullptr);  // what the tool printed so far comes before the child's output
  pid_t pid = 0;
  ChildResult result;
  result.spawn_error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (capture) {
    ::close(pipe_ends[1]);
    std::array<char, 4096> buffer{};
    ssize_t n = 0;
    while (
        result.spawn_error == 0 &&
        ((n = ::read(pipe_ends[0], buffer.data(), buffer.size())) > 0 || (n < 0 && errno == EINTR)))
      if (n > 0) result.output.append(buffer.data(), static_cast<std::size_t>(n));
    ::close(pipe_ends[0]);
  }
  if (result.spawn_error != 0) return result;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    require(errno == EINTR, "cannot wait for {}: {}", argv[0], std::strerror(errno));
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

}  // namespace

std::string plot_python() {
  const char* chosen = std::getenv("SHIFTOP_PYTHON");
  return chosen && *chosen ? chosen : SHIFTOP_DEFAULT_PYTHON;
}

std::string plot_format(std::string_view option, const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  for (const char* format : {"png", "svg", "pdf"})
    if (extension.size() == 4 && strcasecmp(extension.c_str() + 1, format) == 0) return format;
  fail("{} '{}': expected a name ending in .png, .svg or .pdf", option, path);
}

void require_python_plotter(std::string_view option) {
  const std::string python = plot_python();
  // Prints why the import failed, on one line ("ModuleNotFoundError: No module named 'shiftop'").
  const ChildResult probe =
      run_child({python, "-c",
                 "import sys\ntry:\n    import shiftop.plot\nexcept Exception as e:\n"
                 "    print(f'{type(e).__name__}: {e}')\n    sys.exit(1)\n"},
                true);
  if (probe.spawn_error != 0)
    fail("{}: cannot run the Python '{}' ({}): {}", option, python,
         std::strerror(probe.spawn_error), kInstall);
  if (probe.exit_status != 0) {
    const std::string why = first_line(probe.output);
    fail("{}: '{}' cannot import shiftop.plot ({}): {}", option, python,
         why.empty() ? fmt::format("exit status {}", probe.exit_status) : why, kInstall);
  }
}

PlotInputWriter text_input(std::string text) {
  return [text = std::move(text)](const std::string& path) {
    std::ofstream file(path, std::ios::binary);
    file << text;
    file.close();
    require(file.good(), "cannot write {}", path);
  };
}

void draw_plot(std::string_view option, const std::string& plot_path, std::string_view command,
               const PlotInputWriter& write_input, const std::vector<std::string>& arguments) {
  const std::string format = plot_format(option, plot_path);
  io::AtomicOutput input(plot_path, io::AtomicOutput::Kind::File);  // never committed
  try {
    write_input(input.path());
  } catch (const Error& e) {
    fail("{} {}: cannot write the plotter's input next to it: {}", option, plot_path, e.what());
  }
  io::AtomicOutput plot(plot_path, io::AtomicOutput::Kind::File);
  std::vector<std::string> argv{plot_python(),        "-m",         "shiftop.plot",
                                std::string(command), input.path(), "-o",
                                plot.path(),          "--format",   format};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  const ChildResult run = run_child(argv, false);
  if (run.spawn_error != 0)
    fail("{}: cannot run the Python '{}' ({}): {}", option, argv[0], std::strerror(run.spawn_error),
         kInstall);
  require(run.exit_status == 0, "{}: the plotter `{} -m shiftop.plot` failed (exit status {})",
          option, argv[0], run.exit_status);
  plot.commit();
}

}  // namespace shiftop::app
