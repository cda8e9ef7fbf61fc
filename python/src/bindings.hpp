// The Python module shiftop._core is bound one area per file: each python/src/<area>_bindings.cpp
// defines one bind_<area>() that module.cpp calls (the layout of issue 14's Python package).
#pragma once

#include <nanobind/nanobind.h>

namespace shiftop::python {

/// shiftop._core.Plan: the block Toeplitz operator (btt::Plan), held by std::shared_ptr.
void bind_operator(nanobind::module_& m);
/// Plan.apply_device and Plan.time_apply_device: PyTorch/CuPy device arrays by address.
void bind_device(nanobind::module_& m);
/// Plan.time_apply: C++-timed applies on NumPy arrays (bench/python_overhead.py).
void bind_timing(nanobind::module_& m);
/// Heat2d, Wave2d, smooth_source, add_relative_noise: the PDE models (shiftop.models).
void bind_models(nanobind::module_& m);
/// GaussianNoise, the priors, Hessian and map_cg: the inverse problem (shiftop.inverse).
void bind_inverse(nanobind::module_& m);
/// DataSpaceHessian: K = Gamma_noise + F Gamma_prior F*, its factor, MAP/QoI/samples.
void bind_data_space(nanobind::module_& m);
/// shiftop._core.OperatorPair: F and a second operator G (btt::OperatorPair).
void bind_pair(nanobind::module_& m);
/// jacobi_batched (the one-sided Jacobi (H)SVD of a batch) and spectrum: shiftop.svd, spectrum.
void bind_svd(nanobind::module_& m);
/// CircOperatorF32/F64, circ_assemble_*, circ_read_*/write_*, circ_inspect: shiftop.circ.
void bind_circ(nanobind::module_& m);
/// Ct2dGeometry, ct2d_*, mlem/sirt/cgls over a CircOperator (after bind_circ): shiftop.ct.
void bind_ct(nanobind::module_& m);
/// gsvd_batched (the Hari-Zimmermann GSVD of a batch of pairs): shiftop.gsvd.
void bind_gsvd(nanobind::module_& m);
/// RegularizationPath (one GSVD per frequency): shiftop.regpath.
void bind_regpath(nanobind::module_& m);
/// shiftop._core.tune_precision: the mixed-precision tuner on a plan.
void bind_tune(nanobind::module_& m);

}  // namespace shiftop::python
