/* cancel_recv: receives that are cancelled. Every iteration each rank posts a receive from
 * MPI_ANY_SOURCE (tag 7) that no rank sends to, as codes do that listen for requests which may
 * not come (remote updates, termination messages), exchanges with its ring neighbours with
 * MPI_Sendrecv, then cancels the listening receive (MPI_Cancel, MPI_Wait) and checks with
 * MPI_Test_cancelled that it was. Ends with an MPI_Allreduce of a checksum.
 * Usage: cancel_recv [ITERATIONS [BYTES]]  (default 20 iterations of 4096 bytes). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const long iterations = argc > 1 ? atol(argv[1]) : 20;
  const int bytes = argc > 2 ? atoi(argv[2]) : 4096;
  char* out = calloc((size_t)bytes, 1);
  char* in = calloc((size_t)bytes, 1);
  char listen[64];
  double sum = 0;
  for (long it = 0; it < iterations; ++it) {
    MPI_Request req;
    MPI_Irecv(listen, (int)sizeof listen, MPI_CHAR, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &req);
    for (int i = 0; i < bytes; ++i) out[i] = (char)(rank + it + i);
    MPI_Sendrecv(out, bytes, MPI_CHAR, (rank + 1) % size, 1, in, bytes, MPI_CHAR,
                 (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < bytes; ++i) sum += in[i];
    MPI_Cancel(&req);
    MPI_Status status;
    MPI_Wait(&req, &status);
    int cancelled = 0;
    MPI_Test_cancelled(&status, &cancelled);
    if (!cancelled) {
      fprintf(stderr, "cancel_recv: rank %d: iteration %ld: the receive was not cancelled\n", rank,
              it);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  double total = 0;
  MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("cancel_recv: %d ranks, checksum %.0f\n", size, total);
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
