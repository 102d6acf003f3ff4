/* The 3-D Poisson solve of poisson.c for geometric multigrid: the same DMDA 7-point Laplacian
 * (Dirichlet), but given to the KSP with KSPSetDM and a ComputeOperators callback (as PETSc's
 * KSP tutorial ex45 does), so that -pc_type mg -pc_mg_levels L coarsens the DMDA and
 * rediscretizes on every level. Entries are scaled by h^3 (finite-element scaling) so that the
 * coarse operators agree with restriction = interpolation^T. A fixed number of iterations
 * (-ksp_max_it, default 10), repeated -steps times. For coarsening, -n should be 2^k m + 1. */
#include <petscdmda.h>
#include <petscksp.h>

static PetscErrorCode ComputeRHS(KSP ksp, Vec b, void *ctx) {
  DM dm;
  PetscInt M;
  (void)ctx;
  PetscFunctionBeginUser;
  PetscCall(KSPGetDM(ksp, &dm));
  PetscCall(DMDAGetInfo(dm, NULL, &M, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                        NULL));
  PetscReal h = 1.0 / (PetscReal)(M - 1);
  PetscCall(VecSet(b, h * h * h));
  PetscFunctionReturn(0);
}

static PetscErrorCode ComputeOperators(KSP ksp, Mat J, Mat A, void *ctx) {
  DM dm;
  DMDALocalInfo info;
  (void)ctx;
  PetscFunctionBeginUser;
  PetscCall(KSPGetDM(ksp, &dm));
  PetscCall(DMDAGetLocalInfo(dm, &info));
  const PetscInt M = info.mx;
  const PetscReal h = 1.0 / (PetscReal)(M - 1);
  for (PetscInt k = info.zs; k < info.zs + info.zm; ++k)
    for (PetscInt j = info.ys; j < info.ys + info.ym; ++j)
      for (PetscInt i = info.xs; i < info.xs + info.xm; ++i) {
        MatStencil row = {.k = k, .j = j, .i = i}, col[7];
        PetscScalar v[7];
        PetscInt n = 0;
        col[n] = row; v[n++] = 6.0 * h;
        if (i > 0) { col[n] = row; col[n].i = i - 1; v[n++] = -h; }
        if (i < M - 1) { col[n] = row; col[n].i = i + 1; v[n++] = -h; }
        if (j > 0) { col[n] = row; col[n].j = j - 1; v[n++] = -h; }
        if (j < M - 1) { col[n] = row; col[n].j = j + 1; v[n++] = -h; }
        if (k > 0) { col[n] = row; col[n].k = k - 1; v[n++] = -h; }
        if (k < M - 1) { col[n] = row; col[n].k = k + 1; v[n++] = -h; }
        PetscCall(MatSetValuesStencil(A, 1, &row, n, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  (void)J;
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  DM da;
  Vec x;
  KSP ksp;
  PetscInt M = 49, steps = 5;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &M, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-steps", &steps, NULL));
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                         DMDA_STENCIL_STAR, M, M, M, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1,
                         1, NULL, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetDM(ksp, da));
  PetscCall(KSPSetComputeRHS(ksp, ComputeRHS, NULL));
  PetscCall(KSPSetComputeOperators(ksp, ComputeOperators, NULL));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-50, 1e-50, PETSC_DEFAULT, 10));
  PetscCall(KSPSetFromOptions(ksp));
  PetscReal norm = 0;
  for (PetscInt s = 0; s < steps; ++s) {
    PetscCall(KSPSolve(ksp, NULL, NULL));
    PetscCall(KSPGetSolution(ksp, &x));
    PetscCall(VecNorm(x, NORM_2, &norm));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "poisson_mg: n=%d steps=%d |x|=%g\n", (int)M, (int)steps,
                        (double)norm));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
