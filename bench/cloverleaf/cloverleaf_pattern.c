/* cloverleaf_pattern: the MPI communication of the CloverLeaf mini-app (2-D structured
 * compressible hydrodynamics, UK-MAC/CloverLeaf_ref, Fortran + MPI), rewritten in C with the
 * numerics replaced by compute loops proportional to each rank's cells, for tracing with
 * pas2p. Strong scaling: one global mesh, split among the ranks as CloverLeaf splits it.
 *
 * Usage: cloverleaf_pattern [X_CELLS [Y_CELLS [END_STEP [SUMMARY_FREQ [WORK]]]]]
 *   defaults 960 960 10 5 1 (WORK = loop steps per cell per unit of kernel cost below).
 *
 * Reproduced from these CloverLeaf_ref files:
 *  clover.f90  clover_decompose: mesh_ratio = real(x_cells)/real(y_cells) (single precision);
 *     the first c = 1..P dividing P with (P/real(c))/c <= mesh_ratio gives chunk_y = c,
 *     chunk_x = P/c; if none, or chunk_y = P (prime P / 1-D split), chunk_x = P, chunk_y = 1
 *     when mesh_ratio >= 1 (else 1 x P). delta = cells / chunks, mod = cells % chunks; the
 *     first mod_x columns (mod_y rows) get one extra cell. Chunks are numbered row by row
 *     (x fastest), rank = chunk - 1; neighbours left = rank-1, right = rank+1,
 *     bottom = rank-chunk_x, top = rank+chunk_x; faces on the mesh edge are external.
 *  clover.f90  clover_exchange(fields, depth): the message holds, per selected field (packed
 *     one after the other), depth*(y_max+5) doubles left/right and depth*(x_max+5) doubles
 *     bottom/top (x_max, y_max: the rank's own cells; end_pack_index_* in CloverLeaf).
 *     If left is internal: pack, MPI_Isend to left tag 1, MPI_Irecv from left tag 2; if right:
 *     pack, MPI_Isend tag 2, MPI_Irecv tag 1 (clover_send_recv_message_left/right);
 *     MPI_Waitall; unpack left, right. Then bottom: MPI_Isend tag 3, MPI_Irecv tag 4; top:
 *     MPI_Isend tag 4, MPI_Irecv tag 3; MPI_Waitall; unpack top, bottom. MPI_DOUBLE_PRECISION,
 *     MPI_COMM_WORLD. (An MPI_Waitall with 0 requests is still made by a lone rank.)
 *  pack_kernel.f90: each field's pack writes depth*(edge+inc+2*depth) values at its offset
 *     (inc = 1 for vertex / face data along the edge), inside its depth*(edge+5) slot.
 *  update_halo.f90: update_halo = clover_exchange + update_halo_kernel (reflective halo on
 *     external faces only: compute here, proportional to fields*depth*edge).
 *  start.f90 (+ clover_leaf.f90 / initialise.f90): MPI_Barrier; decompose; MPI_Barrier;
 *     initialise/generate chunk; MPI_Barrier; ideal_gas; update_halo of 10 fields (density0,
 *     energy0, pressure, viscosity, density1, energy1, xvel0, yvel0, xvel1, yvel1) depth 2;
 *     field_summary; MPI_Barrier. initialise.f90 (not in the index I read; recalled) wraps
 *     read_input in two MPI_Barrier calls before start: they are reproduced.
 *  hydro.f90: per step: timestep; PdV(.TRUE.); accelerate; PdV(.FALSE.); flux_calc;
 *     advection; reset_field; field_summary if MOD(step, summary_frequency) = 0; at the end
 *     (step >= end_step) one more field_summary, then MPI_Finalize (profiler off: no
 *     MPI_Allgather of kernel times).
 *  timestep.f90: ideal_gas; update_halo(pressure, energy0, density0, xvel0, yvel0; depth 1);
 *     viscosity; update_halo(viscosity; 1); calc_dt; clover_min = MPI_Allreduce MIN of 1
 *     double.
 *  PdV.f90: PdV kernel; clover_check_error = MPI_Allreduce MAX of 1 integer (both calls);
 *     if predict: ideal_gas, update_halo(pressure; 1), revert.
 *  advection.f90: update_halo(energy1, density1, vol_flux_x, vol_flux_y; 2); advec_cell;
 *     update_halo(density1, energy1, xvel1, yvel1, mass_flux_x, mass_flux_y; 2);
 *     advec_mom x, y; advec_cell; the same 6-field update_halo depth 2; advec_mom x, y.
 *     (The sweep direction alternates each step, advect_x, which changes no message.)
 *  field_summary.f90: ideal_gas; summary kernel; clover_sum x 5 (vol, mass, press, ie, ke) =
 *     MPI_Reduce SUM of 1 double to rank 0 each.
 *  accelerate.f90, flux_calc, reset_field, viscosity.f90, ideal_gas: compute only.
 * Compute per cell (units x WORK loop steps, relative costs chosen by hand): ideal_gas 1,
 *   viscosity 2, calc_dt 1, PdV 2, revert 1, accelerate 2, flux_calc 1, advec_cell 3,
 *   advec_mom 2, reset_field 1, field_summary kernel 1; generate_chunk 2 at start.
 * Simplified: no physics; halo data are copied from/to one dummy array; the timestep value
 *   is a fixed number (the reductions are made but never end the run early). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXTERNAL_FACE = -1 };
enum { CELL = 0, VERTEX, X_FACE, Y_FACE };
enum {
  F_DENSITY0 = 0, F_DENSITY1, F_ENERGY0, F_ENERGY1, F_PRESSURE, F_VISCOSITY, F_SOUNDSPEED,
  F_XVEL0, F_XVEL1, F_YVEL0, F_YVEL1, F_VOL_FLUX_X, F_VOL_FLUX_Y, F_MASS_FLUX_X,
  F_MASS_FLUX_Y, NUM_FIELDS
};
/* the data type of each field (CloverLeaf's pack calls: CELL_DATA, VERTEX_DATA, ...) */
static const int kFieldType[NUM_FIELDS] = {CELL,   CELL,   CELL,   CELL,   CELL,
                                           CELL,   CELL,   VERTEX, VERTEX, VERTEX,
                                           VERTEX, X_FACE, Y_FACE, X_FACE, Y_FACE};

typedef struct {
  int rank, P, chunk_x, chunk_y, cx, cy;
  int x_max, y_max; /* local cells */
  int left, right, bottom, top;
  double *lsnd, *lrcv, *rsnd, *rrcv, *bsnd, *brcv, *tsnd, *trcv;
  double* data; /* one dummy (x_max+5) x (y_max+5) field the halos are copied from/to */
  long work;
} Chunk;

static void work(long n) {
  volatile double x = 1;
  for (long i = 0; i < n; ++i) x = x * 0.9999 + 1e-6;
}

static void kernel(const Chunk* C, int units) {
  work(C->work * units * (long)C->x_max * C->y_max);
}

/* clover_decompose, for this rank (parallel%task) */
static void decompose(Chunk* C, int x_cells, int y_cells) {
  int n = C->P;
  float mesh_ratio_f = (float)x_cells / (float)y_cells; /* real(x)/real(y) */
  double mesh_ratio = mesh_ratio_f;
  int chunk_x = n, chunk_y = 1, split_found = 0;
  for (int c = 1; c <= n; ++c) {
    if (n % c == 0) {
      double factor_x = (float)n / (float)c; /* number_of_chunks/real(c) */
      double factor_y = c;
      if (factor_x / factor_y <= mesh_ratio) {
        chunk_y = c;
        chunk_x = n / c;
        split_found = 1;
        break;
      }
    }
  }
  if (!split_found || chunk_y == n) {
    if (mesh_ratio >= 1.0) {
      chunk_x = n;
      chunk_y = 1;
    } else {
      chunk_x = 1;
      chunk_y = n;
    }
  }
  int delta_x = x_cells / chunk_x, delta_y = y_cells / chunk_y;
  int mod_x = x_cells % chunk_x, mod_y = y_cells % chunk_y;
  /* chunk = rank+1 = chunk_x*(cy-1)+cx, 1-based cx, cy */
  int cx = C->rank % chunk_x + 1, cy = C->rank / chunk_x + 1;
  C->chunk_x = chunk_x;
  C->chunk_y = chunk_y;
  C->cx = cx;
  C->cy = cy;
  C->x_max = delta_x + (cx <= mod_x ? 1 : 0);
  C->y_max = delta_y + (cy <= mod_y ? 1 : 0);
  /* chunk_neighbours hold chunk numbers; the task is the chunk - 1 */
  C->left = cx == 1 ? EXTERNAL_FACE : chunk_x * (cy - 1) + cx - 1 - 1;
  C->right = cx == chunk_x ? EXTERNAL_FACE : chunk_x * (cy - 1) + cx + 1 - 1;
  C->bottom = cy == 1 ? EXTERNAL_FACE : chunk_x * (cy - 2) + cx - 1;
  C->top = cy == chunk_y ? EXTERNAL_FACE : chunk_x * cy + cx - 1;
}

/* clover_allocate_buffers: 10*2*(y_max+5) left/right, 10*2*(x_max+5) bottom/top */
static void allocate_buffers(Chunk* C) {
  size_t lr = 10 * 2 * (size_t)(C->y_max + 5), bt = 10 * 2 * (size_t)(C->x_max + 5);
  C->lsnd = calloc(lr, sizeof(double));
  C->lrcv = calloc(lr, sizeof(double));
  C->rsnd = calloc(lr, sizeof(double));
  C->rrcv = calloc(lr, sizeof(double));
  C->bsnd = calloc(bt, sizeof(double));
  C->brcv = calloc(bt, sizeof(double));
  C->tsnd = calloc(bt, sizeof(double));
  C->trcv = calloc(bt, sizeof(double));
  C->data = calloc((size_t)(C->x_max + 5) * (C->y_max + 5), sizeof(double));
  for (size_t i = 0; i < (size_t)(C->x_max + 5) * (C->y_max + 5); ++i) C->data[i] = 1.0 + i % 7;
  if (!C->lsnd || !C->lrcv || !C->rsnd || !C->rrcv || !C->bsnd || !C->brcv || !C->tsnd ||
      !C->trcv || !C->data) {
    fprintf(stderr, "cloverleaf_pattern: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }
/* the dummy field, indices -2..max+2 (clamped) */
#define AT(C, j, k)                                                             \
  ((C)->data[(size_t)(clampi((k), -2, (C)->y_max + 2) + 2) * ((C)->x_max + 5) + \
             (clampi((j), -2, (C)->x_max + 2) + 2)])

/* pack_kernel.f90's clover_pack_message_{left,right,bottom,top}: one field, at offset.
 * side: 0 left, 1 right, 2 bottom, 3 top. */
static void pack_field(Chunk* C, int side, int type, int depth, long off, double* buf, int unpack) {
  int x_inc = (type == VERTEX || type == X_FACE), y_inc = (type == VERTEX || type == Y_FACE);
  if (side < 2) {
    for (int k = 1 - depth; k <= C->y_max + y_inc + depth; ++k)
      for (int j = 1; j <= depth; ++j) {
        long idx = off + j + (k + depth - 1) * depth - 1;
        int jj = side == 0 ? j : C->x_max - j + 1;
        if (unpack)
          AT(C, side == 0 ? 1 - j : C->x_max + x_inc + j, k) = buf[idx];
        else
          buf[idx] = AT(C, jj, k);
      }
  } else {
    for (int k = 1; k <= depth; ++k)
      for (int j = 1 - depth; j <= C->x_max + x_inc + depth; ++j) {
        long idx = off + j + depth + (k - 1) * (C->x_max + x_inc + 2 * depth) - 1;
        int kk = side == 2 ? k : C->y_max - k + 1;
        if (unpack)
          AT(C, j, side == 2 ? 1 - k : C->y_max + y_inc + k) = buf[idx];
        else
          buf[idx] = AT(C, j, kk);
      }
  }
}

static void pack_side(Chunk* C, int side, const int* fields, int depth, const long* offset,
                      double* buf, int unpack) {
  for (int f = 0; f < NUM_FIELDS; ++f)
    if (fields[f]) pack_field(C, side, kFieldType[f], depth, offset[f], buf, unpack);
}

/* clover_exchange(fields, depth) */
static void clover_exchange(Chunk* C, const int* fields, int depth) {
  long lr_off[NUM_FIELDS], bt_off[NUM_FIELDS], end_lr = 0, end_bt = 0;
  for (int f = 0; f < NUM_FIELDS; ++f)
    if (fields[f]) {
      lr_off[f] = end_lr;
      bt_off[f] = end_bt;
      end_lr += (long)depth * (C->y_max + 5);
      end_bt += (long)depth * (C->x_max + 5);
    }
  MPI_Request req[4];
  int n = 0;
  if (C->left != EXTERNAL_FACE) {
    pack_side(C, 0, fields, depth, lr_off, C->lsnd, 0);
    MPI_Isend(C->lsnd, (int)end_lr, MPI_DOUBLE, C->left, 1, MPI_COMM_WORLD, &req[n]);
    MPI_Irecv(C->lrcv, (int)end_lr, MPI_DOUBLE, C->left, 2, MPI_COMM_WORLD, &req[n + 1]);
    n += 2;
  }
  if (C->right != EXTERNAL_FACE) {
    pack_side(C, 1, fields, depth, lr_off, C->rsnd, 0);
    MPI_Isend(C->rsnd, (int)end_lr, MPI_DOUBLE, C->right, 2, MPI_COMM_WORLD, &req[n]);
    MPI_Irecv(C->rrcv, (int)end_lr, MPI_DOUBLE, C->right, 1, MPI_COMM_WORLD, &req[n + 1]);
    n += 2;
  }
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  if (C->left != EXTERNAL_FACE) pack_side(C, 0, fields, depth, lr_off, C->lrcv, 1);
  if (C->right != EXTERNAL_FACE) pack_side(C, 1, fields, depth, lr_off, C->rrcv, 1);

  n = 0;
  if (C->bottom != EXTERNAL_FACE) {
    pack_side(C, 2, fields, depth, bt_off, C->bsnd, 0);
    MPI_Isend(C->bsnd, (int)end_bt, MPI_DOUBLE, C->bottom, 3, MPI_COMM_WORLD, &req[n]);
    MPI_Irecv(C->brcv, (int)end_bt, MPI_DOUBLE, C->bottom, 4, MPI_COMM_WORLD, &req[n + 1]);
    n += 2;
  }
  if (C->top != EXTERNAL_FACE) {
    pack_side(C, 3, fields, depth, bt_off, C->tsnd, 0);
    MPI_Isend(C->tsnd, (int)end_bt, MPI_DOUBLE, C->top, 4, MPI_COMM_WORLD, &req[n]);
    MPI_Irecv(C->trcv, (int)end_bt, MPI_DOUBLE, C->top, 3, MPI_COMM_WORLD, &req[n + 1]);
    n += 2;
  }
  MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
  if (C->top != EXTERNAL_FACE) pack_side(C, 3, fields, depth, bt_off, C->trcv, 1);
  if (C->bottom != EXTERNAL_FACE) pack_side(C, 2, fields, depth, bt_off, C->brcv, 1);
}

/* update_halo: clover_exchange + update_halo_kernel (reflection on external faces) */
static void update_halo(Chunk* C, const int* fields, int depth) {
  clover_exchange(C, fields, depth);
  int nf = 0;
  for (int f = 0; f < NUM_FIELDS; ++f) nf += fields[f] != 0;
  long ext = 0;
  if (C->left == EXTERNAL_FACE) ext += C->y_max;
  if (C->right == EXTERNAL_FACE) ext += C->y_max;
  if (C->bottom == EXTERNAL_FACE) ext += C->x_max;
  if (C->top == EXTERNAL_FACE) ext += C->x_max;
  work(C->work * nf * depth * ext);
}

static void set_fields(int* fields, int n, const int* list) {
  memset(fields, 0, NUM_FIELDS * sizeof(int));
  for (int i = 0; i < n; ++i) fields[list[i]] = 1;
}

static void clover_min(double* v) {
  double m = *v;
  MPI_Allreduce(v, &m, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  *v = m;
}

static void clover_check_error(int* e) {
  int m = *e;
  MPI_Allreduce(e, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  *e = m;
}

static void clover_sum(double* v) {
  double t = *v;
  MPI_Reduce(v, &t, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  *v = t;
}

static void field_summary(Chunk* C, int step) {
  kernel(C, 1); /* ideal_gas */
  kernel(C, 1); /* field_summary_kernel */
  double cells = (double)C->x_max * C->y_max;
  double vol = cells, mass = cells * 2, press = cells * 3, ie = cells * 4, ke = cells * 5;
  clover_sum(&vol);
  clover_sum(&mass);
  clover_sum(&press);
  clover_sum(&ie);
  clover_sum(&ke);
  if (C->rank == 0) printf(" step: %7d volume %.6e mass %.6e\n", step, vol, mass);
}

static void timestep(Chunk* C, double* dt) {
  int fields[NUM_FIELDS];
  kernel(C, 1); /* ideal_gas */
  set_fields(fields, 5, (const int[]){F_PRESSURE, F_ENERGY0, F_DENSITY0, F_XVEL0, F_YVEL0});
  update_halo(C, fields, 1);
  kernel(C, 2); /* viscosity */
  set_fields(fields, 1, (const int[]){F_VISCOSITY});
  update_halo(C, fields, 1);
  kernel(C, 1); /* calc_dt */
  *dt = 0.04 * (1.0 + 1e-3 * C->rank);
  clover_min(dt);
}

static void PdV(Chunk* C, int predict) {
  int fields[NUM_FIELDS], error_condition = 0;
  kernel(C, 2); /* PdV_kernel */
  clover_check_error(&error_condition);
  if (predict) {
    kernel(C, 1); /* ideal_gas(.TRUE.) */
    set_fields(fields, 1, (const int[]){F_PRESSURE});
    update_halo(C, fields, 1);
    kernel(C, 1); /* revert */
  }
}

static void advection(Chunk* C) {
  int fields[NUM_FIELDS];
  set_fields(fields, 4, (const int[]){F_ENERGY1, F_DENSITY1, F_VOL_FLUX_X, F_VOL_FLUX_Y});
  update_halo(C, fields, 2);
  kernel(C, 3); /* advec_cell sweep 1 */
  set_fields(fields, 6,
             (const int[]){F_DENSITY1, F_ENERGY1, F_XVEL1, F_YVEL1, F_MASS_FLUX_X, F_MASS_FLUX_Y});
  update_halo(C, fields, 2);
  kernel(C, 2); /* advec_mom xvel */
  kernel(C, 2); /* advec_mom yvel */
  kernel(C, 3); /* advec_cell sweep 2 */
  update_halo(C, fields, 2);
  kernel(C, 2);
  kernel(C, 2);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Chunk C;
  memset(&C, 0, sizeof C);
  MPI_Comm_rank(MPI_COMM_WORLD, &C.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &C.P);
  int x_cells = argc > 1 ? atoi(argv[1]) : 960;
  int y_cells = argc > 2 ? atoi(argv[2]) : 960;
  int end_step = argc > 3 ? atoi(argv[3]) : 10;
  int summary_frequency = argc > 4 ? atoi(argv[4]) : 5;
  C.work = argc > 5 ? atol(argv[5]) : 1;
  if (x_cells < 1 || y_cells < 1 || end_step < 1 || summary_frequency < 0 || C.work < 0) {
    if (C.rank == 0)
      fprintf(stderr,
              "usage: cloverleaf_pattern [X_CELLS [Y_CELLS [END_STEP [SUMMARY_FREQ [WORK]]]]]\n");
    MPI_Finalize();
    return 1;
  }

  /* initialise.f90: boss copies the input deck; barrier; read_input; barrier */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);

  /* start.f90 */
  MPI_Barrier(MPI_COMM_WORLD);
  decompose(&C, x_cells, y_cells);
  if (C.x_max < 1 || C.y_max < 1) {
    if (C.rank == 0) fprintf(stderr, "cloverleaf_pattern: a chunk has no cells\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (C.rank == 0)
    printf("Mesh ratio of %g\nDecomposing the mesh into %d by %d chunks\n",
           (double)((float)x_cells / (float)y_cells), C.chunk_x, C.chunk_y);
  MPI_Barrier(MPI_COMM_WORLD);
  allocate_buffers(&C);
  kernel(&C, 2); /* initialise_chunk + generate_chunk */
  MPI_Barrier(MPI_COMM_WORLD);
  kernel(&C, 1); /* ideal_gas */
  int fields[NUM_FIELDS];
  set_fields(fields, 10,
             (const int[]){F_DENSITY0, F_ENERGY0, F_PRESSURE, F_VISCOSITY, F_DENSITY1, F_ENERGY1,
                           F_XVEL0, F_YVEL0, F_XVEL1, F_YVEL1});
  update_halo(&C, fields, 2);
  field_summary(&C, 0);
  MPI_Barrier(MPI_COMM_WORLD);

  /* hydro.f90 */
  double t0 = MPI_Wtime(), dt = 0, time = 0;
  for (int step = 1;; ++step) {
    timestep(&C, &dt);
    PdV(&C, 1);
    kernel(&C, 2); /* accelerate */
    PdV(&C, 0);
    kernel(&C, 1); /* flux_calc */
    advection(&C);
    kernel(&C, 1); /* reset_field */
    time += dt;
    if (summary_frequency != 0 && step % summary_frequency == 0) field_summary(&C, step);
    if (step >= end_step) {
      field_summary(&C, step);
      break;
    }
  }
  double wall = MPI_Wtime() - t0;
  if (C.rank == 0) printf("Wall clock %.3f s (P=%d, sim time %.3f)\n", wall, C.P, time);
  MPI_Finalize();
  return 0;
}
