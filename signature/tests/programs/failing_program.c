/* A program that fails on rank 1 after some communication, as argv[1] says:
 *   abort  MPI_Abort(MPI_COMM_WORLD, 3)
 *   segv   a write through a null pointer (SIGSEGV)
 *   exit   exit(4) without MPI_Finalize
 * Rank 0 waits in a receive that never matches, until the launcher kills it.
 * The tracer test checks that each leaves a readable, cut trace marked incomplete. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "abort";
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int value = rank;
  for (int i = 0; i < 3; ++i)
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 1) {
    MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    if (strcmp(mode, "abort") == 0) {
      MPI_Abort(MPI_COMM_WORLD, 3);
    } else if (strcmp(mode, "segv") == 0) {
      volatile int* volatile nowhere = NULL;
      *nowhere = 1;
    } else {
      exit(4);
    }
  } else if (rank == 0) {
    MPI_Recv(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&value, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never sent */
  }
  MPI_Finalize();
  return 0;
}
