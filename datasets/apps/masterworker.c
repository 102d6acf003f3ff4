/* masterworker: a master hands out T tasks of uneven, deterministic cost to P - 1 workers
 * (P >= 2; any P).
 *
 * Task t costs cost(t) = 1 + (t * 7) % 13 work units (up to 13x imbalance) and its
 * description is 2 + 8 * cost(t) doubles (id, cost, input data). Its result is
 * 2 + 4 * (t % 5) doubles (id, value, output data), so results vary in size.
 * Master (rank 0):
 *   sends one task to each worker (MPI_Send, tag 1), or a stop message (tag 2, 0 doubles)
 *   if there are fewer tasks than workers, and posts one MPI_Irecv(MPI_ANY_SOURCE, tag 3)
 *   per busy worker into its own slot;
 *   then, until every task is answered: waits for any result with MPI_Waitany (every 4th
 *   time it first polls with MPI_Testany and only waits if that found nothing), reads the
 *   actual worker from the status, sends that worker the next task (or the stop message)
 *   and re-posts the slot's MPI_Irecv while tasks remain.
 * Worker: MPI_Recv(source 0, MPI_ANY_TAG) of a task or the stop message; computes; sends
 * the result with MPI_Send(tag 3).
 * The checksum adds the results in task order, so it does not depend on which worker ran
 * which task. The master checks that every task was answered exactly once.
 */
#include <math.h>

#include "miniapp.h"

enum { kTagTask = 1, kTagStop = 2, kTagResult = 3 };

static long task_cost(long t) { return 1 + (t * 7) % 13; }
static int task_doubles(long t) { return (int)(2 + 8 * task_cost(t)); }
static int result_doubles(long t) { return (int)(2 + 4 * (t % 5)); }
enum { kMaxTaskDoubles = 2 + 8 * 13, kMaxResultDoubles = 2 + 4 * 4 };

static void send_task(long t, int worker, double* buf) {
  buf[0] = (double)t;
  buf[1] = (double)task_cost(t);
  for (int i = 2; i < task_doubles(t); ++i) buf[i] = (double)((t * 31 + i * 17) % 101) / 101.0;
  MPI_Send(buf, task_doubles(t), MPI_DOUBLE, worker, kTagTask, MPI_COMM_WORLD);
}

static void send_stop(int worker) {
  MPI_Send(NULL, 0, MPI_DOUBLE, worker, kTagStop, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, nprocs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

  long iters = 1, size = 700, unit = 120000;
  int weak = 0;
  ma_option opts[] = {
      {"--iters", &iters, 0, 1000000L, "rounds: the task pool is handed out this many times"},
      {"--size", &size, 1, 100000000L, "tasks T per round"},
      {"--unit", &unit, 1, 1000000000L, "flops-ish loop trips per work unit"},
  };
  ma_parse(argc, argv, "masterworker",
           "Master hands out uneven tasks; workers reply; the master uses MPI_Irecv "
           "(MPI_ANY_SOURCE) + MPI_Waitany / MPI_Testany; P >= 2.",
           opts, 3, 1, &weak);
  if (nprocs < 2) ma_fail("masterworker", rank, "needs at least 2 processes, got %d", nprocs);
  const int workers = nprocs - 1;
  const long ntasks = weak ? size * workers : size;

  double task[kMaxTaskDoubles];
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  double checksum = 0.0;
  if (rank == 0) {
    double* value = ma_alloc("masterworker", sizeof(double) * (size_t)ntasks);
    int* answered = ma_alloc("masterworker", sizeof(int) * (size_t)ntasks);
    MPI_Request* req = ma_alloc("masterworker", sizeof(MPI_Request) * (size_t)workers);
    double* slot = ma_alloc("masterworker", sizeof(double) * (size_t)workers * kMaxResultDoubles);
    for (long round = 0; round < iters; ++round) {
      for (long t = 0; t < ntasks; ++t) answered[t] = 0;
      long next = 0, outstanding = 0, done = 0, polls = 0;
      for (int w = 0; w < workers; ++w) {
        req[w] = MPI_REQUEST_NULL;
        if (next < ntasks) {
          send_task(next++, w + 1, task);
          MPI_Irecv(slot + (size_t)w * kMaxResultDoubles, kMaxResultDoubles, MPI_DOUBLE,
                    MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &req[w]);
          ++outstanding;
        } else {
          send_stop(w + 1);
        }
      }
      while (outstanding > 0) {
        int idx = MPI_UNDEFINED, flag = 0;
        MPI_Status st;
        if (polls++ % 4 == 0) MPI_Testany(workers, req, &idx, &flag, &st);
        if (!flag) MPI_Waitany(workers, req, &idx, &st);
        const double* res = slot + (size_t)idx * kMaxResultDoubles;
        int count = 0;
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        const long t = (long)res[0];
        if (t < 0 || t >= ntasks || count != result_doubles(t) || answered[t]) {
          fprintf(stderr, "masterworker: rank 0: bad result from rank %d: task %ld, %d doubles%s\n",
                  st.MPI_SOURCE, t, count, (t >= 0 && t < ntasks && answered[t]) ? " (twice)" : "");
          MPI_Abort(MPI_COMM_WORLD, 4);
        }
        answered[t] = 1;
        value[t] = res[1];
        ++done;
        if (next < ntasks) {
          send_task(next++, st.MPI_SOURCE, task);
          MPI_Irecv(slot + (size_t)idx * kMaxResultDoubles, kMaxResultDoubles, MPI_DOUBLE,
                    MPI_ANY_SOURCE, kTagResult, MPI_COMM_WORLD, &req[idx]);
        } else {
          send_stop(st.MPI_SOURCE);
          --outstanding;
        }
      }
      if (done != ntasks) {
        fprintf(stderr, "masterworker: rank 0: %ld of %ld tasks answered\n", done, ntasks);
        MPI_Abort(MPI_COMM_WORLD, 4);
      }
      for (long t = 0; t < ntasks; ++t) checksum += value[t];
    }
    free(value);
    free(answered);
    free(req);
    free(slot);
  } else {
    double result[kMaxResultDoubles];
    for (long round = 0; round < iters; ++round) {
      for (;;) {
        MPI_Status st;
        MPI_Recv(task, kMaxTaskDoubles, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        if (st.MPI_TAG == kTagStop) break;
        const long t = (long)task[0];
        const long cost = (long)task[1];
        double acc = 0.0;
        for (long u = 0; u < cost; ++u) {
          double x = task[2 + (u * 8) % (task_doubles(t) - 2)];
          for (long k = 0; k < unit; ++k) x = x * 0.999999 + 1e-7 * (double)(k & 7);
          acc += x;
        }
        result[0] = (double)t;
        result[1] = acc;
        for (int i = 2; i < result_doubles(t); ++i) result[i] = acc * (double)i;
        MPI_Send(result, result_doubles(t), MPI_DOUBLE, 0, kTagResult, MPI_COMM_WORLD);
      }
    }
  }
  double t1 = MPI_Wtime();
  MPI_Bcast(&checksum, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  ma_report("masterworker", rank, nprocs, iters, ntasks, checksum, t1 - t0);
  MPI_Finalize();
  return 0;
}
