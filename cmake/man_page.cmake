# Writes the standard output of `BIN ARGS` to OUT (a man page rendered by
# the binary from its flag table); fails the build when BIN fails.
#   cmake -DBIN=path -DARGS="help --man" -DOUT=path -P man_page.cmake
separate_arguments(ARGS)
execute_process(COMMAND ${BIN} ${ARGS} OUTPUT_FILE ${OUT}.tmp RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(REMOVE ${OUT}.tmp)
  message(FATAL_ERROR "${BIN} ${ARGS} exited with ${rc}; no man page ${OUT}")
endif()
file(RENAME ${OUT}.tmp ${OUT})
