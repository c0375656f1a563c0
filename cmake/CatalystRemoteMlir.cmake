# Lowering MLIR files into relocatable objects with Debian's MLIR 22 tools,
# as Catalyst lowers its programs, so that tests can ship and run what that
# lowering really produces.
#
# catalyst_remote_mlir_object(NAME SOURCE [PASSES arg...] [OUTPUT_DIRECTORY dir])
#
# mlir-opt-22 runs PASSES on SOURCE (mlir-opt arguments; by default memref-
# based linalg, func, arith, scf and memref lowered to the LLVM dialect),
# mlir-translate-22 turns the result into LLVM IR and llc-22 into a
# position-independent relocatable object, OUTPUT_DIRECTORY/NAME.o
# (by default ${KERNEL_OBJ_DIR}, where the executor tests ship kernels from).
# The intermediate files stay in the build directory's mlir/, to be read when
# a lowering goes wrong. The function also defines the static library
# catalyst_remote_mlir_NAME holding that object, so that a program can link
# the very code it ships.

set(CATALYST_REMOTE_MLIR_DEFAULT_PASSES
  --convert-linalg-to-loops
  --convert-scf-to-cf
  # Subviews leave affine.apply behind.
  --expand-strided-metadata
  --lower-affine
  --finalize-memref-to-llvm
  --convert-arith-to-llvm
  --convert-func-to-llvm
  --convert-cf-to-llvm
  --reconcile-unrealized-casts)

# Sets VAR to the path of Debian's versioned TOOL, or stops naming PACKAGE.
function(_catalyst_remote_find_mlir_tool VAR TOOL PACKAGE)
  find_program(${VAR} ${TOOL})
  if(NOT ${VAR})
    message(FATAL_ERROR "${TOOL} not found: lowering MLIR files needs Debian's ${PACKAGE} "
      "(tools/bootstrap installs it)")
  endif()
endfunction()

function(catalyst_remote_mlir_object NAME SOURCE)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "OUTPUT_DIRECTORY" "PASSES")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "catalyst_remote_mlir_object: unexpected ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_PASSES)
    set(ARG_PASSES ${CATALYST_REMOTE_MLIR_DEFAULT_PASSES})
  endif()
  if(NOT ARG_OUTPUT_DIRECTORY)
    if(NOT KERNEL_OBJ_DIR)
      message(FATAL_ERROR "catalyst_remote_mlir_object: give OUTPUT_DIRECTORY or set KERNEL_OBJ_DIR")
    endif()
    set(ARG_OUTPUT_DIRECTORY ${KERNEL_OBJ_DIR})
  endif()
  _catalyst_remote_find_mlir_tool(CATALYST_REMOTE_MLIR_OPT mlir-opt-22 mlir-22-tools)
  _catalyst_remote_find_mlir_tool(CATALYST_REMOTE_MLIR_TRANSLATE mlir-translate-22 mlir-22-tools)
  _catalyst_remote_find_mlir_tool(CATALYST_REMOTE_LLC llc-22 llvm-22)

  get_filename_component(SOURCE ${SOURCE} ABSOLUTE)
  set(WORK ${CMAKE_CURRENT_BINARY_DIR}/mlir)
  set(OBJ ${ARG_OUTPUT_DIRECTORY}/${NAME}.o)
  file(MAKE_DIRECTORY ${WORK} ${ARG_OUTPUT_DIRECTORY})
  add_custom_command(OUTPUT ${OBJ}
    COMMAND ${CATALYST_REMOTE_MLIR_OPT} ${SOURCE} ${ARG_PASSES} -o ${WORK}/${NAME}.llvm.mlir
    COMMAND ${CATALYST_REMOTE_MLIR_TRANSLATE} --mlir-to-llvmir ${WORK}/${NAME}.llvm.mlir
            -o ${WORK}/${NAME}.ll
    COMMAND ${CATALYST_REMOTE_LLC} -filetype=obj -relocation-model=pic ${WORK}/${NAME}.ll -o ${OBJ}
    DEPENDS ${SOURCE}
    COMMENT "Lowering MLIR into ${NAME}.o"
    VERBATIM)
  set_source_files_properties(${OBJ} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  add_library(catalyst_remote_mlir_${NAME} STATIC ${OBJ})
  set_target_properties(catalyst_remote_mlir_${NAME} PROPERTIES LINKER_LANGUAGE C)
endfunction()
