# Helpers to register tests.
#
# plx_add_mpi_test(NAME <name> SOURCES <files...> NP <n...> [ARGS <args...>]
#                  [TIMEOUT <seconds>] [ENV <VAR=VALUE...>] [LABELS <labels...>] [HYDRA])
#   Builds an MPI program against libmpi and registers one CTest test per
#   process count: mpi.<name>.np<N>, run by our own mpiexec with --timeout, so
#   a hang ends the job and prints what every rank was waiting for.
#   The program must exit 0 only when every check passed. With HYDRA, each
#   count also runs under MPICH's mpiexec.hydra (hydra.<name>.np<N>).
#
# plx_add_unit_test(NAME <name> SOURCES <files...>)
#   A plain C test of internal components, linked with the static library.

set(PLX_MPIEXEC ${CMAKE_BINARY_DIR}/bin/mpiexec)
# MPICH's Hydra, when installed (scripts/install-deps.sh installs it): tests
# registered with HYDRA also run under it.
find_program(PLX_HYDRA mpiexec.hydra)

function(plx_add_mpi_test)
  cmake_parse_arguments(T "HYDRA" "NAME;TIMEOUT" "SOURCES;NP;ARGS;ENV;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(exe mpitest_${T_NAME})
  if(NOT TARGET ${exe})
    add_executable(${exe} ${T_SOURCES})
    target_link_libraries(${exe} PRIVATE mpi)
    target_include_directories(${exe} PRIVATE ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/tests/mpi)
    set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/mpi)
  endif()
  # CTest's own limit leaves mpiexec time to print every rank's hang dump
  math(EXPR ctest_timeout "${T_TIMEOUT} + 15")
  foreach(np ${T_NP})
    set(tname mpi.${T_NAME}.np${np})
    add_test(NAME ${tname}
             COMMAND ${PLX_MPIEXEC} --timeout ${T_TIMEOUT} -n ${np} $<TARGET_FILE:${exe}> ${T_ARGS})
    if(T_HYDRA AND PLX_HYDRA)
      # the same binary under MPICH's launcher (PMI-1 from Hydra)
      add_test(NAME hydra.${T_NAME}.np${np}
               COMMAND timeout -k 5 ${T_TIMEOUT} ${PLX_HYDRA} -n ${np} $<TARGET_FILE:${exe}> ${T_ARGS})
      set_tests_properties(hydra.${T_NAME}.np${np} PROPERTIES TIMEOUT ${ctest_timeout}
                           LABELS "mpi;hydra;${T_LABELS}" ENVIRONMENT "${T_ENV}")
    endif()
    set_tests_properties(${tname} PROPERTIES TIMEOUT ${ctest_timeout} LABELS "mpi;${T_LABELS}"
                         ENVIRONMENT "${T_ENV}")
  endforeach()
endfunction()

function(plx_add_unit_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES" ${ARGN})
  set(exe unittest_${T_NAME})
  add_executable(${exe} ${T_SOURCES})
  target_link_libraries(${exe} PRIVATE plexus_static)
  target_compile_definitions(${exe} PRIVATE _GNU_SOURCE)
  set_target_properties(${exe} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/unit)
  add_test(NAME unit.${T_NAME} COMMAND ${exe})
  set_tests_properties(unit.${T_NAME} PROPERTIES TIMEOUT 60 LABELS "unit")
endfunction()
