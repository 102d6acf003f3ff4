/* MPI calls that real applications use beyond the mini-apps: persistent requests, probes,
 * matched probes (MPI_Mprobe/Mrecv, MPI_Improbe/Imrecv), MPI_Comm_create_group, MPI_Cart_sub,
 * MPI_Comm_free, MPI_Sendrecv_replace. The C twin of
 * coverage_f.f90 (same MPI calls in the same order), so the tracer test can check that the
 * Fortran entry points are traced exactly like the C ones. 4 ranks. Rank 0 prints one
 * checksum line.
 * With the argument "sleep", rank 1 sleeps 300 ms before its probed message, so rank 0
 * waits inside MPI_Probe (the test checks that this wait is not recorded as compute). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char** argv) {
  int rank, size, i, it, flag = 0, count = 0;
  int sbuf[4], rbuf[4], probed[8], one = 1, sum = 0, row_value = 0;
  long checksum = 0;
  MPI_Request ring[2], sync_pair[2];
  MPI_Status st, stats[2];
  MPI_Group world_group, even_group;
  MPI_Comm even = MPI_COMM_NULL, cart, row;
  int dims[2] = {2, 2}, periods[2] = {1, 1}, remain[2] = {0, 1}, evens[2] = {0, 2};
  const int sleep_before_probe = argc > 1 && strcmp(argv[1], "sleep") == 0;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;

  /* Persistent ring: one receive from the left, one send to the right, started 3 times. */
  MPI_Recv_init(rbuf, 3, MPI_INT, left, 5, MPI_COMM_WORLD, &ring[0]);
  MPI_Send_init(sbuf, 3, MPI_INT, right, 5, MPI_COMM_WORLD, &ring[1]);
  for (it = 0; it < 3; ++it) {
    for (i = 0; i < 3; ++i) sbuf[i] = rank * 100 + it * 10 + i;
    MPI_Startall(2, ring);
    MPI_Waitall(2, ring, stats);
    checksum += rbuf[2];
  }
  /* A synchronous-mode persistent send and a receive, started one by one. */
  MPI_Ssend_init(sbuf, 2, MPI_INT, right, 6, MPI_COMM_WORLD, &sync_pair[0]);
  MPI_Recv_init(rbuf, 2, MPI_INT, left, 6, MPI_COMM_WORLD, &sync_pair[1]);
  MPI_Start(&sync_pair[1]);
  MPI_Start(&sync_pair[0]);
  MPI_Wait(&sync_pair[0], MPI_STATUS_IGNORE);
  MPI_Wait(&sync_pair[1], &st);
  checksum += rbuf[1];
  for (i = 0; i < 2; ++i) {
    MPI_Request_free(&ring[i]);
    MPI_Request_free(&sync_pair[i]);
  }

  /* Probes: rank 0 probes for any source (tag 40) and receives what the probe found. */
  if (rank == 0) {
    for (i = 1; i < size; ++i) {
      MPI_Probe(MPI_ANY_SOURCE, 40, MPI_COMM_WORLD, &st);
      MPI_Get_count(&st, MPI_INT, &count);
      MPI_Recv(probed, count, MPI_INT, st.MPI_SOURCE, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      checksum += probed[count - 1];
    }
    MPI_Send(&one, 1, MPI_INT, 1, 41, MPI_COMM_WORLD);
  } else {
    for (i = 0; i <= rank; ++i) probed[i] = rank + i;
    if (rank == 1 && sleep_before_probe) {
      struct timespec ts = {0, 300000000L};
      nanosleep(&ts, NULL);
    }
    MPI_Send(probed, rank + 1, MPI_INT, 0, 40, MPI_COMM_WORLD);
    if (rank == 1) {
      while (!flag) MPI_Iprobe(0, 41, MPI_COMM_WORLD, &flag, &st);
      MPI_Recv(&count, 1, MPI_INT, 0, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }

  /* Matched probes: rank 3 receives rank 2's two messages through MPI_Mprobe + MPI_Mrecv
   * and MPI_Improbe (any source) + MPI_Imrecv. */
  if (rank == 2) {
    MPI_Send(probed, 3, MPI_INT, 3, 60, MPI_COMM_WORLD);
    MPI_Send(probed, 2, MPI_INT, 3, 61, MPI_COMM_WORLD);
  } else if (rank == 3) {
    MPI_Message message;
    MPI_Request matched;
    MPI_Mprobe(2, 60, MPI_COMM_WORLD, &message, &st);
    MPI_Mrecv(probed, 3, MPI_INT, &message, MPI_STATUS_IGNORE);
    checksum += probed[2];
    flag = 0;
    while (!flag) MPI_Improbe(MPI_ANY_SOURCE, 61, MPI_COMM_WORLD, &flag, &message, &st);
    MPI_Imrecv(probed, 2, MPI_INT, &message, &matched);
    MPI_Wait(&matched, MPI_STATUS_IGNORE);
    checksum += probed[1];
  }

  /* A communicator made by its members only (world ranks 0 and 2). */
  MPI_Comm_group(MPI_COMM_WORLD, &world_group);
  MPI_Group_incl(world_group, 2, evens, &even_group);
  if (rank % 2 == 0) {
    MPI_Comm_create_group(MPI_COMM_WORLD, even_group, 7, &even);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, even);
    MPI_Comm_free(&even);
  }
  MPI_Group_free(&even_group);
  MPI_Group_free(&world_group);

  /* A 2x2 torus and its rows; bcast from each row's rank 0. */
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  MPI_Cart_sub(cart, remain, &row);
  row_value = rank;
  MPI_Bcast(&row_value, 1, MPI_INT, 0, row);
  MPI_Comm_free(&row);
  MPI_Comm_free(&cart);

  /* Exchange in place with the partner. */
  sbuf[0] = rank;
  sbuf[1] = row_value;
  MPI_Sendrecv_replace(sbuf, 2, MPI_INT, rank ^ 1, 50, rank ^ 1, 50, MPI_COMM_WORLD, &st);
  checksum += sbuf[0] + sbuf[1];

  /* Fire and forget: a send whose request is freed at once (never completed by a wait). */
  {
    MPI_Request freed;
    MPI_Isend(&rank, 1, MPI_INT, right, 70, MPI_COMM_WORLD, &freed);
    MPI_Request_free(&freed);
    MPI_Recv(&count, 1, MPI_INT, left, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    checksum += count;
  }

  MPI_Allreduce(MPI_IN_PLACE, &checksum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("coverage checksum %ld %d\n", checksum, sum);
  MPI_Finalize();
  return 0;
}
