// R-parallel_{2o}, o odd, tabulated by Algorithm 1 (svd/strategy_search.hpp); other even orders
// come from these by Algorithm 2 (svd/strategy_expansion.hpp). strategy_tables.cpp is generated
// by tests/svd/generate_strategy_tables.cpp; its header says how.
#pragma once

#include <cstdint>
#include <span>

#include "shiftop/core/shape.hpp"

namespace shiftop::svd::detail {

/// The largest tabulated base order.
index_t largest_tabulated_base_order();

/// R-parallel_order as (p, q) bytes, step after step, each step sorted by p; empty unless order
/// is 2o, o odd, and order <= largest_tabulated_base_order().
std::span<const std::uint8_t> tabulated_row_cyclic_closest(index_t order);

}  // namespace shiftop::svd::detail
