// The GsvdOptions of the keywords shiftop.gsvd and shiftop.regpath share (variant, strategy,
// threads, ...), checked with the messages Python users see.
#pragma once

#include <cstdint>
#include <string>

#include "shiftop/core/enum_names.hpp"
#include "shiftop/core/error.hpp"
#include "shiftop/gsvd/gsvd.hpp"
#include "shiftop/svd/strategy.hpp"

namespace shiftop::python {

inline svd::GsvdOptions gsvd_options(bool compute_vectors, const std::string& variant,
                                     const std::string& strategy, std::int64_t block_width,
                                     int threads, int max_sweeps) {
  require(block_width >= 0, "block_width: expected 0 (chosen from n) or a positive width, got {}",
          block_width);
  require(max_sweeps >= 0, "max_sweeps: expected 0 (the thesis' 50) or a positive count, got {}",
          max_sweeps);
  svd::GsvdOptions options;
  options.compute_vectors = compute_vectors;
  options.variant = parse_name<svd::Variant>(variant, "variant");
  options.strategy = parse_name<svd::StrategyKind>(strategy, "strategy");
  options.block_width = static_cast<index_t>(block_width);
  options.threads = threads;
  options.max_sweeps = max_sweeps;
  return options;
}

}  // namespace shiftop::python
