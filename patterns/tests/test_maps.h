// Communication maps of well-known patterns, built directly from their definitions (not from
// the library's grid code) for the patterns tests.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "pas2p/patterns/comm_map.h"

namespace pas2p::patterns::testing {

inline int Side(int p) { return static_cast<int>(std::lround(std::sqrt(p))); }

// Paper 001, Fig. 6: +1 within a row of a sqrt(P) x sqrt(P) torus, wrapping at the row end.
inline CommMap TorusEast(int p) {
  const int s = Side(p);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) m.dests[r] = {(r / s) * s + (r % s + 1) % s};
  return m;
}

// Butterfly stage: src XOR 2^bit.
inline CommMap Xor(int p, std::vector<int> bits) {
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    for (int b : bits) {
      if ((r ^ (1 << b)) < p) m.dests[r].push_back(r ^ (1 << b));
    }
  }
  return m.Normalized();
}

// Matrix transpose on a sqrt(P) x sqrt(P) grid: (row, col) -> (col, row).
inline CommMap Transpose(int p) {
  const int s = Side(p);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) m.dests[r] = {(r % s) * s + r / s};
  return m;
}

// Ring: both neighbours, periodic.
inline CommMap Ring(int p) {
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) m.dests[r] = {(r + 1) % p, (r + p - 1) % p};
  return m.Normalized();
}

// 2-D 5-point halo on a non-periodic sqrt(P) grid (boundary ranks lack partners).
inline CommMap Mesh(int p) {
  const int s = Side(p);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    int row = r / s, col = r % s;
    if (col > 0) m.dests[r].push_back(r - 1);
    if (col < s - 1) m.dests[r].push_back(r + 1);
    if (row > 0) m.dests[r].push_back(r - s);
    if (row < s - 1) m.dests[r].push_back(r + s);
  }
  return m.Normalized();
}

// Wavefront sweep from the top-left corner: east and south neighbours, non-periodic.
inline CommMap Wavefront(int p) {
  const int s = Side(p);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 0; r < p; ++r) {
    if (r % s < s - 1) m.dests[r].push_back(r + 1);
    if (r / s < s - 1) m.dests[r].push_back(r + s);
  }
  return m.Normalized();
}

// Workers report to rank 0.
inline CommMap ToMaster(int p) {
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int r = 1; r < p; ++r) m.dests[r] = {0};
  return m;
}

// 3-D 7-point halo, non-periodic, on MPI_Cart_create's row-major layout of
// dims = {d0, d1, d2} (d2 fastest): rank = (c0 * d1 + c1) * d2 + c2.
inline CommMap Halo3D(int p, const std::vector<std::int64_t>& dims) {
  const int d0 = static_cast<int>(dims[0]), d1 = static_cast<int>(dims[1]),
            d2 = static_cast<int>(dims[2]);
  CommMap m{p, std::vector<std::vector<int>>(static_cast<std::size_t>(p))};
  for (int c0 = 0; c0 < d0; ++c0) {
    for (int c1 = 0; c1 < d1; ++c1) {
      for (int c2 = 0; c2 < d2; ++c2) {
        int r = (c0 * d1 + c1) * d2 + c2;
        auto add = [&](int a, int b, int c) {
          if (a >= 0 && a < d0 && b >= 0 && b < d1 && c >= 0 && c < d2) {
            m.dests[r].push_back((a * d1 + b) * d2 + c);
          }
        };
        add(c0 - 1, c1, c2);
        add(c0 + 1, c1, c2);
        add(c0, c1 - 1, c2);
        add(c0, c1 + 1, c2);
        add(c0, c1, c2 - 1);
        add(c0, c1, c2 + 1);
      }
    }
  }
  return m.Normalized();
}

}  // namespace pas2p::patterns::testing
