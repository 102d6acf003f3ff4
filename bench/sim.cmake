# sim_bench: replay speed and memory of the simulator on a synthetic ring + allreduce trace,
# and the same trace exported for `smpirun -replay` (run by bench/sim_bench.sh).
add_executable(sim_bench ${CMAKE_CURRENT_SOURCE_DIR}/sim_bench.cc)
pas2p_target_defaults(sim_bench)
target_link_libraries(sim_bench PRIVATE pas2p::simulator)

# phase_sim_bench: the critical path of a large prediction (one phase, K occurrences, at the
# target), synthesis alone against synthesis + simulation (run by bench/phase_sim_bench.sh).
add_executable(phase_sim_bench ${CMAKE_CURRENT_SOURCE_DIR}/phase_sim_bench.cc)
pas2p_target_defaults(phase_sim_bench)
target_link_libraries(phase_sim_bench PRIVATE pas2p::synthesis pas2p::simulator)
