// Fortran binding helpers for the generated wrappers: Open MPI's sentinels (MPI_IN_PLACE,
// MPI_STATUS(ES)_IGNORE are addresses of common blocks), 1-based indices, status layout.
#pragma once

#include <mpi.h>

namespace pas2p::tracer {

inline constexpr int kFortranStatusInts = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
static_assert(sizeof(MPI_Status) % sizeof(MPI_Fint) == 0, "MPI_Status is not a Fint array");
static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arrays are passed as int arrays");

// MPI_IN_PLACE of the Fortran bindings becomes the C MPI_IN_PLACE; other buffers unchanged.
void* FortranBuffer(void* buffer) noexcept;
inline const void* FortranBuffer(const void* buffer) noexcept {
  return FortranBuffer(const_cast<void*>(buffer));
}
bool IsFortranStatusIgnore(const MPI_Fint* status) noexcept;
bool IsFortranStatusesIgnore(const MPI_Fint* statuses) noexcept;
// Fortran indices (waitany, waitsome) are 1-based; MPI_UNDEFINED stays.
inline int FortranIndex(MPI_Fint index) noexcept {
  return index == MPI_UNDEFINED ? MPI_UNDEFINED : static_cast<int>(index) - 1;
}
void FortranStatusesToC(const MPI_Fint* fortran, MPI_Status* c, int n) noexcept;

}  // namespace pas2p::tracer
