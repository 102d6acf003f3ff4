/* A non-blocking consensus (NBX, Hoefler et al. 2010), as DOLFINx and PETSc discover who
 * sends to whom: every rank sends one message to each of its partners with MPI_Issend,
 * receives whatever arrives (MPI_Iprobe from any source, then MPI_Recv), and once its own
 * sends are matched starts an MPI_Ibarrier, receiving on until the barrier completes. Rank 0
 * sends late (it sleeps first), so its partners receive its message after their MPI_Ibarrier
 * has started. Partners of rank r: r + 1 and r + 2 (mod P). Each round has a tag of its own
 * (as PETSc takes a new tag for each): a message of the next round, which a partner may send
 * as soon as its own barrier completed, is not taken for this one's. Rank 0 prints a
 * checksum.
 *   nbx_consensus [ROUNDS]   (default 3) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank, size, round, rounds = argc > 1 ? atoi(argv[1]) : 3;
  long checksum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (round = 0; round < rounds; ++round) {
    int value[2], got, k, flag, done = 0, barrier_active = 0;
    MPI_Request sends[2], barrier;
    MPI_Status status;
    if (rank == 0) usleep(100000);
    for (k = 0; k < 2; ++k) {
      value[k] = 100 * round + 10 * rank + k;
      MPI_Issend(&value[k], 1, MPI_INT, (rank + 1 + k) % size, 5 + round, MPI_COMM_WORLD,
                 &sends[k]);
    }
    while (!done) {
      MPI_Iprobe(MPI_ANY_SOURCE, 5 + round, MPI_COMM_WORLD, &flag, &status);
      if (flag) {
        MPI_Recv(&got, 1, MPI_INT, status.MPI_SOURCE, 5 + round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        checksum += got;
      }
      if (barrier_active) {
        MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      } else {
        MPI_Testall(2, sends, &flag, MPI_STATUSES_IGNORE);
        if (flag) {
          MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
          barrier_active = 1;
        }
      }
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, &checksum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("nbx checksum %ld\n", checksum);
  MPI_Finalize();
  return 0;
}
