// shiftop::gpu::Context — one GPU and the resources every GPU object of shiftop shares on it (the
// role of Ginkgo's executor): the device, one stream on which all their work is queued in order,
// the cuBLAS handle bound to that stream with a workspace of its own, the events that order the
// stream against a caller's stream, and an account of the device memory allocated through it.
// A block-Toeplitz plan, a distributed plan and (later) an SVD made with the same context run on
// one stream with one set of handles; a plan made without one creates its own. Declared without
// CUDA types (streams are void*) so that host code includes it freely; built without CUDA,
// create() refuses with a clear error.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>

#include "shiftop/core/backend.hpp"

namespace shiftop::gpu {

class Context {
 public:
  /// A context on CUDA device `device` with a new non-blocking stream; throws shiftop::Error when
  /// shiftop was built without CUDA or the device is not there.
  static std::shared_ptr<Context> create(int device = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  int device() const;
  /// The stream (a cudaStream_t) on which the objects made with this context queue their work.
  void* stream() const;
  int multiprocessors() const;
  /// Makes this context's device the calling thread's current CUDA device.
  void activate() const;
  /// Orders the context's stream after the work queued so far on `user` (a cudaStream_t; null is
  /// the default stream); signal() orders `user` after the work queued so far on the context's.
  /// A context, like its cuBLAS handle, is driven by one host thread at a time.
  void wait_for(void* user) const;
  void signal(void* user) const;
  /// Returns once all work queued on the context's stream is done.
  void synchronize() const;
  /// Device bytes allocated through this context and not yet freed (plans' arrays, workspaces).
  std::size_t allocated_bytes() const;

  /// The CUDA handles behind the context (src/backend/cuda/context.cuh); internal.
  struct Handles;
  Handles& handles() const { return *handles_; }

 private:
  explicit Context(std::unique_ptr<Handles> handles);
  std::unique_ptr<Handles> handles_;
};

/// The context of GPU `device` that calls without one of their own share (the Python package's
/// calls, the single-matrix SVDs): one per device, made on first use and kept for the life of the
/// process (never destroyed: at exit, static destructors may run after the CUDA runtime has shut
/// down). A context is driven by one host thread at a time: hold the returned lock while queueing
/// work on it and until that work is done.
struct SharedContext {
  std::shared_ptr<Context> context;
  std::unique_lock<std::mutex> lock;
};
SharedContext shared_context(int device);

/// options.context when given, else a new context on options.device.
std::shared_ptr<Context> context_for(const GpuOptions& options);

}  // namespace shiftop::gpu
