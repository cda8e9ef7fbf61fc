// Where an operator runs and how hard its creation searches for the fastest way to apply it:
// shared by every operator family (btt::Plan, circ::Operator).
#pragma once

namespace shiftop {

enum class Backend { Cpu, Cuda };

/// How hard creation searches for the fastest way to apply: Estimate takes the defaults; Measure
/// times the candidates on the operator's own data and keeps the fastest.
enum class Planning { Estimate, Measure };

}  // namespace shiftop
