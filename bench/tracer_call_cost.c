/* Cost of the tracer per MPI call, in CPU time of the calling process (steady on a shared
 * machine, unlike wall time): N calls of MPI_Allreduce on MPI_COMM_SELF (almost free in MPI
 * itself) with `work` loop trips of computation between them, so the compute bursts around
 * each call are either short (work 0: under the tracer's 10 us clock-skip threshold) or long
 * (the thread CPU clock is read at entry and exit). Run it with and without the tracer;
 * bench/tracer_overhead.sh does. Prints "cpu_ns_per_call <x>" for the calls alone (the
 * work's own time measured separately and subtracted).
 * Usage: tracer_call_cost [CALLS [WORK_TRIPS]] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double CpuNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static volatile double sink;

static void Work(long trips) {
  double x = 1.0;
  for (long i = 0; i < trips; ++i) x = x * 1.0000001 + 1e-9;
  sink = x;
}

static int Compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long calls = argc > 1 ? atol(argv[1]) : 200000;
  const long work = argc > 2 ? atol(argv[2]) : 0;
  enum { kBlocks = 41 };
  const long per_block = calls / kBlocks > 0 ? calls / kBlocks : 1;
  double x = 1.0, y = 0.0, diff[kBlocks];
  /* Blocks of work alone and of work + calls, interleaved so that drift (other processes,
   * frequency) hits both alike; the median of the per-block differences is the calls' cost. */
  for (int b = 0; b < kBlocks; ++b) {
    const double t0 = CpuNs();
    for (long i = 0; i < per_block; ++i) Work(work);
    const double t1 = CpuNs();
    for (long i = 0; i < per_block; ++i) {
      Work(work);
      MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_SELF);
    }
    const double t2 = CpuNs();
    diff[b] = ((t2 - t1) - (t1 - t0)) / (double)per_block;
  }
  qsort(diff, kBlocks, sizeof diff[0], Compare);
  printf("cpu_ns_per_call %.1f\n", diff[kBlocks / 2]);
  MPI_Finalize();
  return 0;
}
