# The fuzz targets, fuzz/<Name>Fuzz.cpp each, with their corpora in
# fuzz/corpus/<target>/. tools/fuzz reads the list from here.
set(CATALYST_REMOTE_FUZZERS frames launch-plan zerocopy-result shared-result batched-reply
  naive-reply memref-layout npy-file residents)
