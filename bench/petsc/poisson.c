/* A 3-D Poisson solve with PETSc: DMDA 7-point Laplacian (Dirichlet), KSP with a fixed
 * number of iterations (-ksp_max_it), repeated -steps times (a time loop of implicit solves). */
#include <petscdmda.h>
#include <petscksp.h>

int main(int argc, char **argv) {
  DM da;
  Mat A;
  Vec x, b;
  KSP ksp;
  PetscInt M = 64, steps = 5;
  DMDALocalInfo info;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-n", &M, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-steps", &steps, NULL));
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                         DMDA_STENCIL_STAR, M, M, M, PETSC_DECIDE, PETSC_DECIDE, PETSC_DECIDE, 1,
                         1, NULL, NULL, NULL, &da));
  PetscCall(DMSetFromOptions(da));
  PetscCall(DMSetUp(da));
  PetscCall(DMCreateMatrix(da, &A));
  PetscCall(DMDAGetLocalInfo(da, &info));
  for (PetscInt k = info.zs; k < info.zs + info.zm; ++k)
    for (PetscInt j = info.ys; j < info.ys + info.ym; ++j)
      for (PetscInt i = info.xs; i < info.xs + info.xm; ++i) {
        MatStencil row = {.k = k, .j = j, .i = i}, col[7];
        PetscScalar v[7];
        PetscInt n = 0;
        col[n] = row; v[n++] = 6.0;
        if (i > 0) { col[n] = row; col[n].i = i - 1; v[n++] = -1.0; }
        if (i < M - 1) { col[n] = row; col[n].i = i + 1; v[n++] = -1.0; }
        if (j > 0) { col[n] = row; col[n].j = j - 1; v[n++] = -1.0; }
        if (j < M - 1) { col[n] = row; col[n].j = j + 1; v[n++] = -1.0; }
        if (k > 0) { col[n] = row; col[n].k = k - 1; v[n++] = -1.0; }
        if (k < M - 1) { col[n] = row; col[n].k = k + 1; v[n++] = -1.0; }
        PetscCall(MatSetValuesStencil(A, 1, &row, n, col, v, INSERT_VALUES));
      }
  PetscCall(MatAssemblyBegin(A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(A, MAT_FINAL_ASSEMBLY));
  PetscCall(DMCreateGlobalVector(da, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecSet(b, 1.0));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPSetTolerances(ksp, 1e-50, 1e-50, PETSC_DEFAULT, 50));
  PetscCall(KSPSetFromOptions(ksp));
  PetscReal norm = 0;
  for (PetscInt s = 0; s < steps; ++s) {
    PetscCall(VecSet(x, 0.0));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(VecNorm(x, NORM_2, &norm));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "poisson: n=%d steps=%d |x|=%g\n", (int)M, (int)steps,
                        (double)norm));
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  PetscCall(PetscFinalize());
  return 0;
}
