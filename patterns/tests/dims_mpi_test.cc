// Our DimsCreate against the installed MPI library's MPI_Dims_create, for every count up
// to 4096 in 1 to 4 dimensions.
#include <gtest/gtest.h>
#include <mpi.h>

#include "pas2p/patterns/grid.h"

namespace pas2p::patterns {
namespace {

TEST(DimsCreateMpi, EqualsLibraryForAllSmallCounts) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) MPI_Init(nullptr, nullptr);
  for (int ndims = 1; ndims <= 4; ++ndims) {
    for (int p = 1; p <= 4096; ++p) {
      std::vector<int> dims(static_cast<std::size_t>(ndims), 0);
      ASSERT_EQ(MPI_Dims_create(p, ndims, dims.data()), MPI_SUCCESS);
      std::vector<std::int64_t> expected(dims.begin(), dims.end());
      ASSERT_EQ(DimsCreate(p, ndims), expected) << "P=" << p << " ndims=" << ndims;
    }
  }
  // With a fixed dimension.
  int dims[3] = {0, 3, 0};
  MPI_Dims_create(72, 3, dims);
  EXPECT_EQ(DimsCreate(72, std::vector<std::int64_t>{0, 3, 0}),
            (std::vector<std::int64_t>{dims[0], dims[1], dims[2]}));
  MPI_Finalize();
}

}  // namespace
}  // namespace pas2p::patterns
