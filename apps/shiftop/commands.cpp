#include "commands.hpp"

#include "shiftop/core/error.hpp"

namespace shiftop::app {

btt::Backend parse_backend(const std::string& text) {
  if (text == "cpu") return btt::Backend::Cpu;
  if (text == "cuda") return btt::Backend::Cuda;
  fail("--backend: expected {}, got '{}'", kBackendNames, text);
}

void add_backend_option(CLI::App* cmd, std::string& backend) {
  cmd->add_option("--backend", backend, kBackendNames)->capture_default_str();
}

void add_device_option(CLI::App* cmd, int& device) {
  add_count_option(cmd, "--device", device, "CUDA device index", kNonNegative);
}

void add_threads_option(CLI::App* cmd, int& threads) {
  add_count_option(cmd, "--threads", threads, "CPU threads (0: all)", kNonNegative);
}

void add_json_flag(CLI::App* cmd, bool& json) {
  cmd->add_flag("--json", json, "print one JSON object on stdout");
}

}  // namespace shiftop::app
