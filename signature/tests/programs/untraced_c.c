/* MPI calls the tracer counts but does not trace: one-sided (a fence epoch with one MPI_Put
 * per rank) and MPI-IO (every rank writes its int at its offset of a shared file). 4 ranks.
 * argv[1]: the file to write. Rank 0 prints one checksum line. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank, size, got = -1, mine;
  MPI_Win win;
  MPI_File fh;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mine = 10 * rank;
  MPI_Win_create(&got, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  MPI_Put(&mine, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  if (argc > 1) {
    MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    MPI_File_write_at_all(fh, (MPI_Offset)(rank * sizeof(int)), &got, 1, MPI_INT,
                          MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
  }
  MPI_Allreduce(MPI_IN_PLACE, &got, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("untraced checksum %d\n", got);
  MPI_Finalize();
  return 0;
}
