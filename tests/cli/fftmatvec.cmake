# FFTMatvec's own files unchanged (interoperability), on the fixtures of make_io_fixtures.cpp:
# an eight-line meta_adj, block-row attributes carried or named when dropped, typed info --json,
# and a shiftop .h5 of a later layout refused.
shiftop_io_test(fftmatvec.eight_line_info
  "eight_line_dir: fftmatvec operator \\(Nd=3, Nm=4, Nt=5\\).*checksum: 0 \\(none\\)"
  info ${io}/eight_line_dir)
shiftop_io_test(fftmatvec.eight_line_convert
  "fm_eight.h5: wrote the shiftop operator \\(Nd=3, Nm=4, Nt=5\\) from .*eight_line_dir \\(fftmatvec\\)"
  convert ${io}/eight_line_dir ${io}/fm_eight.h5)
shiftop_io_refusal(fftmatvec.crlf
  "crlf_dir/binary/meta_adj: line 4: expected the file-name prefix .*found 'adj/vec_' and a carriage return \\(Windows line ends, which FFTMatvec refuses"
  fm_crlf convert ${io}/crlf_dir ${io}/fm_crlf.h5)
shiftop_io_test(fftmatvec.attributes_to_h5 "fm_attributes.h5: wrote the shiftop operator [^;]*$"
  convert ${io}/attributes_dir ${io}/fm_attributes.h5)
shiftop_io_test(fftmatvec.attributes_to_npy
  "dropped: .*FFTMatvec attribute prior_solved, FFTMatvec attribute dt, FFTMatvec attribute grid, FFTMatvec attribute sensor_x"
  convert ${io}/attributes_dir ${io}/fm_attributes.npy)
shiftop_io_test(fftmatvec.vector_to_npy
  "fm_fq.npy: wrote the npy vector .*dropped: space, qoi"
  convert ${io}/fq.h5 ${io}/fm_fq.npy)
shiftop_io_test(fftmatvec.info_vector_json "\"details\":\\{\"qoi\":true\\}" info ${io}/fq.h5 --json)
shiftop_io_test(fftmatvec.info_checksum_json "\"space\":\"parameter\",\"details\":\\{\"checksum\":7\\}"
  info ${io}/fmc.h5 --json)
shiftop_io_test(fftmatvec.info_h5_json "\"triangular\":true,\"bytes\":480,\"details\":\\{\"format_version\":1,\"units\":\"K per W\"\\}"
  info ${io}/F.h5 --json)
shiftop_io_refusal(fftmatvec.format_version
  "v99.h5: attribute 'format_version' is 99: expected 1, the only version of shiftop's file layout"
  fm_v99 convert ${io}/v99.h5 ${io}/fm_v99.npy)
shiftop_io_refusal(fftmatvec.format_version_info "v99.h5: attribute 'format_version' is 99: expected 1"
  fm_v99_info info ${io}/v99.h5)
