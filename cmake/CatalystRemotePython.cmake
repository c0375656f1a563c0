# catalyst_remote_find_python(OUT MODULES): the first python3 on PATH that
# imports MODULES (a comma list, e.g. "numpy, pybind11"), else "". Where
# the first python3 on PATH is a separate installation without Debian's
# packages, the interpreter that has them is still found.
function(catalyst_remote_find_python out modules)
  string(REPLACE ":" ";" dirs "$ENV{PATH}")
  # Debian's own, where PATH leaves it out.
  list(APPEND dirs /usr/bin)
  foreach(dir IN LISTS dirs)
    foreach(name python3 python3.11 python3.12 python3.13)
      if(EXISTS "${dir}/${name}")
        execute_process(COMMAND "${dir}/${name}" -c "import ${modules}"
          RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
        if(rc EQUAL 0)
          set(${out} "${dir}/${name}" PARENT_SCOPE)
          return()
        endif()
      endif()
    endforeach()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()
