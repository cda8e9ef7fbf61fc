// Built instead of circ/cuda/*.cu when shiftop is configured without CUDA.
#include "circ/engine.hpp"
#include "shiftop/core/error.hpp"

namespace shiftop::circ {

template <class T>
std::unique_ptr<Engine<T>> make_cuda_engine(Layout<T>, const Options&) {
  fail("this shiftop was built without CUDA (SHIFTOP_ENABLE_CUDA=OFF); use the CPU backend");
}

template std::unique_ptr<Engine<float>> make_cuda_engine(Layout<float>, const Options&);
template std::unique_ptr<Engine<double>> make_cuda_engine(Layout<double>, const Options&);

}  // namespace shiftop::circ
