# patterns_bench: fitting communication equations and evaluating them at 2^20 ranks.
add_executable(patterns_bench ${CMAKE_CURRENT_SOURCE_DIR}/patterns_bench.cc)
pas2p_target_defaults(patterns_bench)
target_link_libraries(patterns_bench PRIVATE pas2p::patterns benchmark::benchmark)
