/* miniapp.h: command-line handling and output shared by the pas2p C mini-apps.
 *
 * Every mini-app takes `--iters N`, a problem size (`--size N` or a bare number), `--weak`
 * (the size is per rank instead of global; the default is strong scaling: a fixed global
 * problem) and `--help`, plus options of its own. Every rank parses the same argv, so every
 * rank reaches the same verdict; only rank 0 prints. Bad arguments print one line to stderr
 * naming the app, the option and what was expected, and every rank exits with status 2
 * (after MPI_Finalize, so mpirun reports a normal non-zero exit rather than an abort).
 *
 * Results go to stdout as two lines from rank 0:
 *   <app> nprocs=<P> iters=<N> size=<S> checksum=<%.15e>     (deterministic for a given P)
 *   <app> wall_s=<seconds>                                     (varies run to run)
 * so tests can check that tracing does not change results by comparing the first line.
 */
#ifndef PAS2P_DATASETS_MINIAPP_H
#define PAS2P_DATASETS_MINIAPP_H

#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char* name; /* "--iters" */
  long* value;
  long min;
  long max;
  const char* help;
} ma_option;

/* Prints an error (rank 0 only) and leaves the program with status 2 on every rank. */
static inline void ma_fail(const char* app, int rank, const char* fmt, ...) {
  if (rank == 0) {
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "%s: error: ", app);
    vfprintf(stderr, fmt, args);
    fprintf(stderr, "\n");
    va_end(args);
  }
  MPI_Finalize();
  exit(2);
}

static inline void ma_usage(const char* app, const char* summary, const ma_option* opts, int nopts,
                            int has_weak) {
  printf("usage: mpirun -np P %s [options] [SIZE]\n\n%s\n\noptions:\n", app, summary);
  for (int i = 0; i < nopts; ++i) {
    printf("  %-16s %s (default %ld)\n", opts[i].name, opts[i].help, *opts[i].value);
  }
  if (has_weak) {
    printf("  %-16s the size is per rank (weak scaling); default: global (strong scaling)\n",
           "--weak");
  }
  printf("  %-16s this text\n", "--help");
}

/* Parses argv. opts[size_index] is the option a bare number sets (the problem size).
 * *weak (if not NULL) is set by `--weak`. Exits on --help and on errors. */
static inline void ma_parse(int argc, char** argv, const char* app, const char* summary,
                            ma_option* opts, int nopts, int size_index, int* weak) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int a = 1; a < argc; ++a) {
    const char* arg = argv[a];
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
      if (rank == 0) ma_usage(app, summary, opts, nopts, weak != NULL);
      MPI_Finalize();
      exit(0);
    }
    if (weak != NULL && strcmp(arg, "--weak") == 0) {
      *weak = 1;
      continue;
    }
    const ma_option* target = NULL;
    const char* text = NULL;
    if (arg[0] == '-') {
      const char* eq = strchr(arg, '=');
      size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
      for (int i = 0; i < nopts; ++i) {
        if (strlen(opts[i].name) == name_len && strncmp(opts[i].name, arg, name_len) == 0) {
          target = &opts[i];
        }
      }
      if (target == NULL) ma_fail(app, rank, "unknown option '%s' (try --help)", arg);
      if (eq != NULL) {
        text = eq + 1;
      } else if (a + 1 < argc) {
        text = argv[++a];
      } else {
        ma_fail(app, rank, "%s needs a value", target->name);
      }
    } else {
      target = &opts[size_index];
      text = arg;
    }
    char* end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') {
      ma_fail(app, rank, "%s: expected an integer, got '%s'", target->name, text);
    }
    if (v < target->min || v > target->max) {
      ma_fail(app, rank, "%s: %ld is out of range [%ld, %ld]", target->name, v, target->min,
              target->max);
    }
    *target->value = v;
  }
}

/* Size of block `i` when `n` items are split into `parts` nearly equal blocks (the first
 * n % parts blocks get one more), and where the block starts. */
static inline long ma_block_size(long n, long parts, long i) { return n / parts + (i < n % parts); }
static inline long ma_block_start(long n, long parts, long i) {
  return i * (n / parts) + (i < n % parts ? i : n % parts);
}

static inline void* ma_alloc(const char* app, size_t bytes) {
  void* p = calloc(bytes > 0 ? bytes : 1, 1);
  if (p == NULL) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "%s: rank %d: out of memory allocating %zu bytes\n", app, rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return p;
}

static inline void ma_report(const char* app, int rank, int nprocs, long iters, long size,
                             double checksum, double wall_s) {
  if (rank != 0) return;
  printf("%s nprocs=%d iters=%ld size=%ld checksum=%.15e\n", app, nprocs, iters, size, checksum);
  printf("%s wall_s=%.3f\n", app, wall_s);
  fflush(stdout);
}

#endif /* PAS2P_DATASETS_MINIAPP_H */
