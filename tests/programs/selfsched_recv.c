/* selfsched_recv: a self-scheduled master/worker whose master receives with a blocking
 * MPI_Recv(MPI_ANY_SOURCE) (no requests), for the end-to-end test of self-scheduling.
 * Usage: selfsched_recv [TASKS [UNIT [HOW [ROUNDS [SYNC]]]]]  (default 120 tasks, 20000 loop
 * trips per unit, 1 round). ROUNDS > 1 hands the TASKS out that many times (a new pool per
 * round, as once per time step); SYNC 1 ends every round with an MPI_Allreduce.
 * HOW says how the master finds the next result: "recv" (default) MPI_Recv(MPI_ANY_SOURCE);
 * "probe" MPI_Probe(MPI_ANY_SOURCE) then MPI_Recv from the source it found; "iprobe" polls
 * MPI_Iprobe(MPI_ANY_SOURCE) until a result is there, then MPI_Recv from that source.
 * Task t costs 1 + (t * 5) % 11 units and is 8 * (1 + t % 7) bytes; the master sends one
 * task to every worker (tag 1), then answers each result (tag 3) with the next task or a
 * stop (tag 2, 0 bytes) to the worker it came from; workers receive with MPI_ANY_TAG. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kTask = 1, kStop = 2, kResult = 3 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long tasks = argc > 1 ? atol(argv[1]) : 120;
  const long unit = argc > 2 ? atol(argv[2]) : 20000;
  const char* how = argc > 3 ? argv[3] : "recv";
  const long rounds = argc > 4 ? atol(argv[4]) : 1;
  const int sync = argc > 5 ? atoi(argv[5]) : 0;
  if (strcmp(how, "recv") != 0 && strcmp(how, "probe") != 0 && strcmp(how, "iprobe") != 0) {
    if (rank == 0) fprintf(stderr, "selfsched_recv: HOW must be recv, probe or iprobe\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  double buf[8] = {0};
  double sum = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (long round = 0; round < rounds; ++round) {
    if (rank == 0) {
      long next = 0, busy = 0;
      for (int w = 1; w < size; ++w) {
        if (next < tasks) {
          buf[0] = (double)next;
          MPI_Send(buf, (int)(1 + next % 7), MPI_DOUBLE, w, kTask, MPI_COMM_WORLD);
          ++next;
          ++busy;
        } else {
          MPI_Send(NULL, 0, MPI_DOUBLE, w, kStop, MPI_COMM_WORLD);
        }
      }
      while (busy > 0) {
        MPI_Status st;
        double result[2];
        if (strcmp(how, "recv") == 0) {
          MPI_Recv(result, 2, MPI_DOUBLE, MPI_ANY_SOURCE, kResult, MPI_COMM_WORLD, &st);
        } else {
          if (strcmp(how, "probe") == 0) {
            MPI_Probe(MPI_ANY_SOURCE, kResult, MPI_COMM_WORLD, &st);
          } else {
            int found = 0;
            while (!found) MPI_Iprobe(MPI_ANY_SOURCE, kResult, MPI_COMM_WORLD, &found, &st);
          }
          MPI_Recv(result, 2, MPI_DOUBLE, st.MPI_SOURCE, kResult, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
        }
        sum += result[1];
        if (next < tasks) {
          buf[0] = (double)next;
          MPI_Send(buf, (int)(1 + next % 7), MPI_DOUBLE, st.MPI_SOURCE, kTask, MPI_COMM_WORLD);
          ++next;
        } else {
          MPI_Send(NULL, 0, MPI_DOUBLE, st.MPI_SOURCE, kStop, MPI_COMM_WORLD);
          --busy;
        }
      }
    } else {
      for (;;) {
        MPI_Status st;
        MPI_Recv(buf, 8, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == kStop) break;
        const long t = (long)buf[0];
        double x = 1.0;
        for (long k = 0; k < (1 + (t * 5) % 11) * unit; ++k) x = x * 0.999999 + 1e-7;
        double result[2] = {(double)t, x};
        MPI_Send(result, 2, MPI_DOUBLE, 0, kResult, MPI_COMM_WORLD);
      }
    }
    if (sync) MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Bcast(&sum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("selfsched_recv: %ld tasks on %d workers, checksum %.6f\n", tasks, size - 1, sum);
  MPI_Finalize();
  return 0;
}
