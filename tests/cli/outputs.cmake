# Outputs never destroy what they should not (tests/python/test_outputs.py has the rest): an
# output that is an input under another spelling, and "-" where no format streams, are refused
# before any work with one line naming both options.
shiftop_cli_test(output_is_input ON
  "--output '.*/data/\\.\\./data/m\\.npy' is the same file as --input '.*/data/m\\.npy'" matvec
  --operator ${data}/K.npy --input ${data}/m.npy --output ${data}/../data/m.npy)
shiftop_cli_test(output_is_operator ON "--output '.*K\\.npy' is the same file as --operator" matvec
  --operator ${data}/K.npy --input ${data}/m.npy --output ${data}/./K.npy)
shiftop_cli_test(output_dash_refused ON "output '-': this command does not write to standard output"
  convert ${data}/m.npy -)
shiftop_cli_test(input_dash_refused ON "--input '-': shiftop does not read standard input" matvec
  --operator ${data}/K.npy --input - --output ${data}/dash_in.npy)
