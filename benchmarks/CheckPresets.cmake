# The presets are written twice, as code and in TransferBench.cpp's header,
# where tools and people read them. This keeps the two the same, checks
# that each preset selects something, and that every launch, fan-out,
# kernel and pool benchmark is named as the tools that read the results expect.
#
#   cmake -DBENCH=catalyst-remote-bench -DSOURCE=TransferBench.cpp -P CheckPresets.cmake
cmake_minimum_required(VERSION 3.20)

set(launch_name "^launch/(naive|batched|zerocopy|local)/[0-9]+(B|KiB|MiB|GiB)/[0-9]+in/rank(1/into|1|3/strided)/")
set(fanout_name "^fanout/zerocopy/[0-9]+(B|KiB|MiB|GiB)/[0-9]+exec/")
set(kernel_name "^kernel/scale/[0-9]+(B|KiB|MiB|GiB)/(tcp|local)/")
set(pool_name "^pool/((tiny|sweep)/[0-9]+members/depth[0-9]+|[0-9]+(B|KiB|MiB|GiB)/[0-9]+members)/")

function(check_names preset_flag)
  execute_process(COMMAND ${BENCH} --benchmark_list_tests ${preset_flag}
    OUTPUT_VARIABLE listed RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "listing '${preset_flag}' failed (${rc})")
  endif()
  string(REPLACE "\n" ";" names "${listed}")
  list(FILTER names EXCLUDE REGEX "^$")
  list(LENGTH names count)
  if(count EQUAL 0)
    message(FATAL_ERROR "preset '${preset_flag}' selects no benchmark")
  endif()
  foreach(name IN LISTS names)
    if((name MATCHES "^launch/" AND NOT name MATCHES "${launch_name}") OR
       (name MATCHES "^fanout/" AND NOT name MATCHES "${fanout_name}") OR
       (name MATCHES "^kernel/" AND NOT name MATCHES "${kernel_name}") OR
       (name MATCHES "^pool/" AND NOT name MATCHES "${pool_name}"))
      message(FATAL_ERROR "badly named benchmark: ${name}")
    endif()
  endforeach()
  message(STATUS "preset '${preset_flag}': ${count} benchmarks")
endfunction()

execute_process(COMMAND ${BENCH} --list-presets OUTPUT_VARIABLE printed RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--list-presets failed (${rc})")
endif()
file(READ ${SOURCE} source)
string(REPLACE "\n" ";" lines "${printed}")
list(FILTER lines EXCLUDE REGEX "^$")
foreach(line IN LISTS lines)
  string(FIND "${line}" " " space)
  string(SUBSTRING "${line}" 0 ${space} name)
  math(EXPR start "${space} + 1")
  string(SUBSTRING "${line}" ${start} -1 regex)
  string(FIND "${source}" "//     ${regex}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "preset ${name}: ${SOURCE}'s header does not show its regex ${regex}")
  endif()
  if(name STREQUAL "default")
    check_names("")
  else()
    check_names("--${name}")
  endif()
endforeach()
