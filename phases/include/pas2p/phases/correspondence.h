// Which phases of one application correspond across process counts (functional
// similarity, PAS2P): the same phase of the code, traced with P = 4, 9, 16, ... ranks,
// keeps its kind of communication (the operations and collectives it uses, the order in
// which it occurs in the run) while its parameters change with P (peers, bytes, number of
// partners, the number of stages of a butterfly, the weight of a P-dependent loop).
//
// In: signatures of one application at several counts. Out: groups, one per phase of the
// application, with the matching phase id at every count (or -1 where a count lacks it).
#pragma once

#include <string>
#include <vector>

#include "pas2p/phases/signature.h"

namespace pas2p::phases {

// The P-independent description of a phase used for matching: the sorted set of
// operations it uses ("allreduce@world", "isend", "waitall", ...), with collectives tagged
// by whether their communicator is the whole run or a part of it.
std::string FunctionalKey(const Phase& phase, int nprocs);

struct PhaseGroup {
  std::string key;              // FunctionalKey shared by the members
  std::vector<int> phase_ids;   // one per signature (same order as the input); -1: absent
  std::vector<double> weights;  // the weight at each count (0 where absent)
  bool relevant = false;        // relevant in at least one signature
  bool complete = false;        // present at every count
};

struct Correspondence {
  std::vector<int> nprocs;            // per signature
  std::vector<PhaseGroup> groups;     // in the order of the run
  std::vector<std::string> warnings;  // e.g. a relevant phase without a partner
};

// Matches the phases of `signatures` (one application; any order of counts). Phases are
// matched in run order (an alignment over the order of first occurrence) on equal
// functional keys. Throws UserError if the signatures are of different applications
// (different application names) or fewer than one is given.
Correspondence CorrespondPhases(const std::vector<Signature>& signatures);

// Text summary of a correspondence, one line per group.
std::string FormatCorrespondence(const Correspondence& correspondence);

}  // namespace pas2p::phases
