/* Point-to-point and completion families, at 4 ranks, in a fixed order so that the tracer
 * test (tracer_test.cc, P2P*) can check every event. Prints one deterministic line on
 * rank 0: the stdout test compares it with and without the tracer. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 4) {
    if (rank == 0) fprintf(stderr, "p2p_program needs 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  static char bsend_buffer[1 << 16];
  MPI_Buffer_attach(bsend_buffer, sizeof bsend_buffer);
  int ints[16] = {0};
  double doubles[8] = {0};
  long checksum = 0;

  /* A: blocking send modes 0 -> 1; rank 1 receives with wildcards. */
  if (rank == 0) {
    for (int i = 0; i < 10; ++i) ints[i] = i;
    MPI_Send(ints, 10, MPI_INT, 1, 100, MPI_COMM_WORLD);
    MPI_Ssend(ints, 10, MPI_INT, 1, 101, MPI_COMM_WORLD);
    MPI_Bsend(ints, 3, MPI_INT, 1, 102, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend(ints, 2, MPI_INT, 1, 103, MPI_COMM_WORLD);
    MPI_Request r;
    MPI_Irsend(ints, 1, MPI_INT, 1, 104, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Status st;
    MPI_Recv(ints, 16, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    checksum += ints[9];
    MPI_Recv(ints, 16, MPI_INT, MPI_ANY_SOURCE, 101, MPI_COMM_WORLD, &st);
    MPI_Recv(ints, 16, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    MPI_Request r[2];
    MPI_Irecv(ints, 2, MPI_INT, 0, 103, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(ints + 2, 1, MPI_INT, MPI_ANY_SOURCE, 104, MPI_COMM_WORLD, &r[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }

  /* B: non-blocking ring; the second receive is a wildcard. */
  {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    double out[5], in[5], in2[5];
    for (int i = 0; i < 5; ++i) out[i] = rank + i;
    MPI_Request r[4];
    MPI_Irecv(in, 5, MPI_DOUBLE, left, 200, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(in2, 5, MPI_DOUBLE, MPI_ANY_SOURCE, 201, MPI_COMM_WORLD, &r[1]);
    MPI_Isend(out, 5, MPI_DOUBLE, right, 200, MPI_COMM_WORLD, &r[2]);
    MPI_Issend(out, 5, MPI_DOUBLE, left, 201, MPI_COMM_WORLD, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    checksum += (long)(in[4] + in2[0]);
  }

  /* C: waitany and waitsome (2 -> 0), failed tests (3 waits for 1). */
  if (rank == 2) {
    MPI_Request r[5];
    for (int t = 0; t < 3; ++t) MPI_Isend(ints, t + 1, MPI_INT, 0, 300 + t, MPI_COMM_WORLD, &r[t]);
    MPI_Ibsend(ints, 4, MPI_INT, 0, 310, MPI_COMM_WORLD, &r[3]);
    MPI_Isend(ints, 5, MPI_INT, 0, 311, MPI_COMM_WORLD, &r[4]);
    MPI_Waitall(5, r, MPI_STATUSES_IGNORE);
  } else if (rank == 0) {
    MPI_Request r[3];
    int buf[3][8];
    for (int t = 0; t < 3; ++t) MPI_Irecv(buf[t], 8, MPI_INT, 2, 300 + t, MPI_COMM_WORLD, &r[t]);
    for (int k = 0; k < 3; ++k) {
      int index;
      MPI_Status st;
      MPI_Waitany(3, r, &index, &st);
    }
    int index;
    MPI_Waitany(3, r, &index, MPI_STATUS_IGNORE); /* all null: index = MPI_UNDEFINED */
    MPI_Request s[2];
    MPI_Irecv(buf[0], 8, MPI_INT, 2, 310, MPI_COMM_WORLD, &s[0]);
    MPI_Irecv(buf[1], 8, MPI_INT, MPI_ANY_SOURCE, 311, MPI_COMM_WORLD, &s[1]);
    int done = 0;
    while (done < 2) {
      int outcount, indices[2];
      MPI_Waitsome(2, s, &outcount, indices, MPI_STATUSES_IGNORE);
      done += outcount;
    }
  } else if (rank == 3) {
    char msg[8];
    MPI_Request r;
    int flag = 0, index = 0, outcount = 0, indices[1];
    MPI_Irecv(msg, 8, MPI_CHAR, 1, 400, MPI_COMM_WORLD, &r);
    /* Rank 1 sends only after our "go": these four tests must fail. */
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    MPI_Testall(1, &r, &flag, MPI_STATUSES_IGNORE);
    MPI_Testany(1, &r, &index, &flag, MPI_STATUS_IGNORE);
    MPI_Testsome(1, &r, &outcount, indices, MPI_STATUSES_IGNORE);
    MPI_Send(&flag, 1, MPI_INT, 1, 401, MPI_COMM_WORLD);
    flag = 0;
    while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    checksum += msg[0];
  } else if (rank == 1) {
    int go;
    MPI_Recv(&go, 1, MPI_INT, 3, 401, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char msg[7] = "pas2p!";
    MPI_Send(msg, 7, MPI_CHAR, 3, 400, MPI_COMM_WORLD);
  }

  /* D: sendrecv with the partner (wildcard receive), sendrecv_replace around the ring. */
  {
    const int partner = rank ^ 1;
    int out[3] = {rank, rank, rank}, in[3];
    MPI_Sendrecv(out, 3, MPI_INT, partner, 500, in, 3, MPI_INT, MPI_ANY_SOURCE, 500, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 4; ++i) doubles[i] = rank;
    MPI_Sendrecv_replace(doubles, 4, MPI_DOUBLE, (rank + 1) % size, 501, (rank + size - 1) % size,
                         501, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    checksum += in[0] + (long)doubles[0];
  }

  /* E: MPI_PROC_NULL. */
  MPI_Send(ints, 4, MPI_INT, MPI_PROC_NULL, 600, MPI_COMM_WORLD);
  MPI_Recv(ints, 4, MPI_INT, MPI_PROC_NULL, 600, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(ints, 4, MPI_INT, MPI_PROC_NULL, 601, ints, 3, MPI_INT, MPI_PROC_NULL, 602,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);

  long total = 0;
  MPI_Reduce(&checksum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("p2p_program checksum %ld\n", total);
  void* detached;
  int detached_size;
  MPI_Buffer_detach(&detached, &detached_size);
  MPI_Finalize();
  return 0;
}
