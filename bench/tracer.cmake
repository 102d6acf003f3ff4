# tracer_call_cost: CPU cost of one traced MPI call (run by bench/tracer_overhead.sh with and
# without the tracer). A plain MPI program, like the applications the tracer is preloaded into.
add_executable(tracer_call_cost ${CMAKE_CURRENT_SOURCE_DIR}/tracer_call_cost.c)
target_compile_options(tracer_call_cost PRIVATE -Wall -Wextra -Wpedantic -O2)
target_link_libraries(tracer_call_cost PRIVATE MPI::MPI_C)
