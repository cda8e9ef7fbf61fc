# Messages and resource limits: every refusal one line naming the
# option or file and what was expected; included at the end of tests/cli/CMakeLists.txt.

# --threads: at most the hardware threads, one validator for every command (libgomp crashed on
# 100000 and a tiny run was 28x slower at twice the cores; test_cli_messages.py tries one more).
shiftop_cli_test(threads_too_many ON "--threads: must be between 0 \\(OpenMP's default\\) and [0-9]+, the hardware threads this process may run on, got '100000'"
  bench --nd 2 --nm 3 --nt 4 --threads 100000)
shiftop_cli_test(threads_billion ON "--threads: must be between 0 .*, got '1000000000'" matvec
  --operator ${data}/K.npy --input ${data}/m.npy --output ${data}/threads.npy --threads 1000000000)
# Huge sizes: the memory message before any allocation, never std::bad_alloc.
shiftop_cli_test(bench_memory ON "bench: F on \\(Nd=100000, Nm=100000, Nt=1000\\) needs [0-9]+ bytes \\([0-9.e+]+ GiB\\) but only [0-9]+ bytes"
  bench --nd 100000 --nm 100000 --nt 1000)
shiftop_cli_test(bench_memory_check ON "bench: Fadj on .* needs [0-9]+ bytes .* but only" bench
  --nd 50000 --nm 50000 --nt 2000 --op Fadj --check)
if(SHIFTOP_ENABLE_MPI)  # on a process grid: the rank's slice and the collectives' probe buffer
  shiftop_cli_test(bench_grid_probe_memory ON "rank 0: bench: F on the slice \\(Nd=3, Nm=4, Nt=5\\) needs 1000000000[0-9]+ bytes .* but only"
    bench --grid 1x1 --nd 3 --nm 4 --nt 5 --threads 1 --probe-bytes 1000000000000000)
endif()
shiftop_cli_test(tune_memory ON "tune on \\(Nd=100000, Nm=100000, Nt=1000\\) needs [0-9]+ bytes .* but only"
  tune --nd 100000 --nm 100000 --nt 1000)
# grid: a grid whose last rows or columns own no blocks says so (4 rows for Nd=2; 9 = 3+3+3+0).
shiftop_cli_test(grid_idle_ranks OFF "warning: grid 4x16 gives 58 of 64 ranks nothing to do" grid
  --nd 2 --nm 3 --nt 4 --ranks 64)
shiftop_cli_test(grid_idle_rank_ceil OFF "\"idle_ranks\":1.*warning: grid 4x1 gives 1 of 4 ranks nothing to do"
  grid --nd 9 --nm 1 --nt 4 --ranks 4 --json)
# A value that is an option is refused for every option (and --threads before its own check).
shiftop_io_refusal(option_as_value "--truth: expected a value, got the option '--data'" swallow
  model heat2d --grid 8 --sources 2 --sensors 1 --nt 4 -o ${io}/swallow_F.h5 --truth --data
  ${io}/swallow_d.h5)
shiftop_cli_test(option_as_value_threads ON "--threads: expected a value, got the option '--json'"
  bench --nd 2 --nm 3 --nt 4 --threads --json)
shiftop_cli_test(option_as_value_output ON "--output: expected a value, got the option '--op'" matvec
  --operator ${data}/K.npy --input ${data}/m.npy --output --op F)
# Inputs that are directories.
shiftop_cli_test(input_directory ON "data: is a directory, not a file: expected a vector file" matvec
  --operator ${data}/K.npy --input ${data} --output ${CMAKE_CURRENT_BINARY_DIR}/dir_in.npy)
shiftop_cli_test(operator_device ON "/dev/null: is a character device, not a file: expected an operator"
  matvec --operator /dev/null --input ${data}/m.npy --output ${data}/dev_op.npy)
# Unknown subcommands name the known ones.
shiftop_cli_test(unknown_subcommand ON "unknown subcommand 'mtavec': expected one of demo, matvec, bench, info, grid, convert, model, tune"
  mtavec --operator ${data}/K.npy)
# --backend cuda where it cannot run, in words: a build without CUDA, or no GPU (CI: CUDA built,
# no GPU); on a GPU machine --device 99 is the missing device.
shiftop_cli_test(cuda_unavailable ON "^shiftop: error: (--backend cuda: this shiftop was built without CUDA \\(SHIFTOP_ENABLE_CUDA=OFF\\); use --backend cpu|--backend cuda: no CUDA device: the CUDA driver sees no GPU on this machine; use --backend cpu|--device 99: this machine has [0-9]+ CUDA devices? \\(0(-[0-9]+)?\\))"
  bench --backend cuda --device 99 --nd 2 --nm 2 --nt 2)
shiftop_cli_test(cuda_unavailable_tune ON "^shiftop: error: (--backend cuda: this shiftop was built without CUDA|--backend cuda: no CUDA device|--device 99: this machine has)"
  tune --backend cuda --device 99 --nd 2 --nm 2 --nt 2)
# Exit statuses in --help, top level and per command.
shiftop_cli_test(help_exit_codes OFF "Exit status: 0 success; 1 a user error.*2 an internal error.*104-114.*105.*130 interrupted \\(SIGINT\\), 143 terminated \\(SIGTERM\\)"
  --help)
shiftop_cli_test(help_exit_codes_matvec OFF "Usage:.*matvec.*Exit status: 0 success" matvec --help)
# --allow-nonfinite says what a NaN does to the result.
shiftop_cli_test(help_allow_nonfinite OFF "--allow-nonfinite.*NaN.*every output" matvec --help)
# Under mpiexec a user error is printed once: tests/python/test_cli_messages.py (mpiexec adds
# its own lines on stderr, which expect.cmake's one-line rule cannot allow).
# The memory estimate behind those checks, against what plans hold.
shiftop_add_test(test_memory_needs)
target_sources(test_memory_needs PRIVATE ${PROJECT_SOURCE_DIR}/apps/shiftop/memory_needs.cpp)
target_include_directories(test_memory_needs PRIVATE ${PROJECT_SOURCE_DIR}/apps/shiftop)
