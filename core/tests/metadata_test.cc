// Trace metadata helpers.
#include <gtest/gtest.h>

#include "pas2p/core/trace.h"

namespace pas2p {
namespace {

TEST(ApplicationBaseName, DropsTheCountOfAProgramBuiltPerCount) {
  EXPECT_EQ(ApplicationBaseName("cg.S.16", 16), "cg.S");
  EXPECT_EQ(ApplicationBaseName("cg.S.4", 4), "cg.S");
  EXPECT_EQ(ApplicationBaseName("lu_64", 64), "lu");
  EXPECT_EQ(ApplicationBaseName("bt.9.x", 9), "bt.x");
  EXPECT_EQ(ApplicationBaseName("16-ft", 16), "ft");
  EXPECT_EQ(ApplicationBaseName("app.4.4", 4), "app.4");
}

TEST(ApplicationBaseName, KeepsNamesWithoutTheirOwnCount) {
  EXPECT_EQ(ApplicationBaseName("stencil2d", 2), "stencil2d");  // not a delimited token
  EXPECT_EQ(ApplicationBaseName("cg.S.16", 8), "cg.S.16");      // another count
  EXPECT_EQ(ApplicationBaseName("cg.S.16", 1), "cg.S.16");      // 1 is part of 16
  EXPECT_EQ(ApplicationBaseName("app", 4), "app");
  EXPECT_EQ(ApplicationBaseName("4", 4), "4");  // nothing would be left
  EXPECT_EQ(ApplicationBaseName("cg.4", 0), "cg.4");
}

}  // namespace
}  // namespace pas2p
