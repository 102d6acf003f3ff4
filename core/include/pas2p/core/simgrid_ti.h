// SimGrid time-independent (TI) traces: one text file per rank ("0 init", "0 send 1 0 1e6",
// "0 compute 1e9", ...) plus a list file naming them, as `smpirun -replay LIST` takes.
//
// Export turns compute bursts into flops at a given rate (CPU seconds x rate), collectives
// into their TI actions, and non-blocking requests into isend/irecv + wait/waitall.
// Import reads SimGrid's own TI traces (the actions SimGrid's replayer knows) as a
// TraceSource, so every pas2p stage can read them.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "pas2p/core/trace.h"

namespace pas2p {

struct TiOptions {
  // Exported compute actions: flops = CPU seconds x this rate; imported: CPU seconds =
  // flops / this rate. The same rate must be given to SimGrid's host speed.
  double flops_per_second = 1e9;
};

// Writes `rank-<N>.txt` for every rank and the list file `traces.list` in `out_dir`.
// Returns the list file's path. Throws TraceError on unreadable input or on events TI
// cannot express (the message names the rank and the event).
std::filesystem::path ExportSimgridTi(const TraceSource& source,
                                      const std::filesystem::path& out_dir,
                                      const TiOptions& options = {});

// True if `path` looks like a TI list file (or a directory holding `traces.list`).
bool IsSimgridTi(const std::filesystem::path& path);

// Opens a TI trace: the list file, or a directory with a `*.list`/`*.txt` list file.
// Ranks are read lazily, one line at a time; a malformed line is a TraceError naming the
// file, the line number, the whole line and what was expected.
std::unique_ptr<TraceSource> OpenSimgridTi(const std::filesystem::path& path,
                                           const TiOptions& options = {});

}  // namespace pas2p
