# Warnings and sanitizers, applied per target with pas2p_target_defaults(target).
function(pas2p_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX,C>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter>)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 at -O2/-O3 reports `"literal" + std::string&&` as an overlapping memcpy
    # (-Wrestrict, GCC bug 105651, fixed in 13): a false positive inside libstdc++'s
    # basic_string, so it is off for C++ on GCC 12 only.
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
  endif()
  if(PAS2P_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(PAS2P_TSAN)
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=thread)
  endif()
endfunction()

# pas2p_add_test(NAME name SOURCES ... LIBS ... [LABELS ...])
# One GoogleTest executable, discovered test by test by ctest.
function(pas2p_add_test)
  cmake_parse_arguments(T "" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT PAS2P_BUILD_TESTS)
    return()
  endif()
  # While a module is being written its test list may name files that do not exist yet;
  # developers get a warning, PAS2P_STRICT builds (the test script, CI) an error.
  foreach(src ${T_SOURCES})
    if(NOT IS_ABSOLUTE ${src})
      set(src ${CMAKE_CURRENT_SOURCE_DIR}/${src})
    endif()
    if(NOT EXISTS ${src})
      if(PAS2P_STRICT)
        message(FATAL_ERROR "test ${T_NAME}: source ${src} does not exist")
      endif()
      message(WARNING "test ${T_NAME} skipped: source ${src} does not exist yet")
      return()
    endif()
  endforeach()
  add_executable(${T_NAME} ${T_SOURCES})
  pas2p_target_defaults(${T_NAME})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${T_NAME} PRIVATE
    PAS2P_SOURCE_DIR="${PROJECT_SOURCE_DIR}" PAS2P_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  set(props LABELS "${T_LABELS}")
  if("mpi" IN_LIST T_LABELS)
    # Two mpiruns that start at the same moment race to create Open MPI's session directory
    # (/tmp/ompi.<host>.<uid>: "mkdir ... File exists", orte_init fails): under `ctest -j` the
    # tests that launch mpirun take turns, the others still run beside them.
    list(APPEND props RESOURCE_LOCK mpirun)
  endif()
  if(PAS2P_SANITIZE)
    # Open MPI keeps what MPI_Init allocates until exit; suppress those leaks only (full
    # unwinding, so that a leak is attributed to the library that made it).
    list(APPEND props ENVIRONMENT
         "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/cmake/lsan-mpi.supp:fast_unwind_on_malloc=0:print_suppressions=0")
  endif()
  gtest_discover_tests(${T_NAME} PROPERTIES ${props} DISCOVERY_TIMEOUT 60)
endfunction()
