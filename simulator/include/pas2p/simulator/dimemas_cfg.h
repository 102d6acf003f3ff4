// Dimemas configuration files (.cfg): import into a Machine and export from one.
//
// A .cfg is a list of SDDF records `"record name" {field, field, ...};;` (strings quoted,
// arrays as `[n] {v1, ..., vn}`) after an optional `/* ... */` comment block. What maps to
// the Machine:
//
//   "environment information" {name, id, arch, nodes, inter-node BW (MB/s), buses, model}
//       -> name (when not empty), nodes, inter_bandwidth_Bps (MB = 2^20 bytes; 0 MB/s =
//          instantaneous = +inf), buses (0 = unlimited)
//   "multi node information" {id, nodes, arch, processors, CPU ratio, intra latency (s),
//       intra BW (MB/s), intra buses, intra in links, intra out links, inter latency (s),
//       inter in links, inter out links, WAN latency}
//       -> cpus_per_node, cpu_ratio = 1 / Dimemas ratio (Dimemas divides burst time by its
//          ratio; pas2p multiplies; Dimemas 0 = instantaneous = cpu_ratio 0),
//          intra_latency_s, intra_bandwidth_Bps, inter_latency_s, input_links, output_links
//   "node information" {id, arch, processors, ratio, intra latency, intra BW, intra buses,
//       intra in, intra out, inter latency, inter in, inter out, WAN latency}: the older
//       one-record-per-node form; all nodes must be alike.
//   "predefined mapping information" {[trace,] "FILL_NODES" | "N TASKS_PER_NODE" |
//       "INTERLEAVED"} -> mapping fill (cpus_per_node = N for N TASKS_PER_NODE) or round_robin
//   "mapping information" {trace, ntasks, [n] {node, ...}} -> explicit mapping
//   "configuration files" {scheduler, file system, collectives table, sensitivity}
//       -> the collectives table file (resolved against the .cfg's directory)
//   "wide area network information", "modules information", "file system parameters",
//   "dedicated connection information": accepted and ignored (pas2p models one machine).
//
// Not representable in a .cfg and taken from `base` on import: eager_threshold_bytes,
// instructions_per_second, flops_per_second, half_duplex, topology. Ignored on import:
// intra-node buses and links (pas2p does not model intra-node contention), WAN fields.
#pragma once

#include <string>
#include <string_view>

#include "pas2p/simulator/machine.h"

namespace pas2p::sim {

// Parses .cfg text; `source` names it in errors, `base_dir` resolves the collectives file.
Machine ParseDimemasCfg(std::string_view text, const std::string& source,
                        const std::string& base_dir = "", const Machine& base = Machine{});
Machine LoadDimemasCfg(const std::string& path, const Machine& base = Machine{});

// The .cfg text for `machine`. `collectives_file` is written into "configuration files"
// (empty: none, i.e. Dimemas' own defaults).
std::string DimemasCfgToString(const Machine& machine, const std::string& collectives_file = "");
// Writes `path` and the collective table beside it as `<path without .cfg>.collectives`
// (named in the .cfg by file name, so the pair can be moved together). A machine with
// nodes = 0 (as many as needed) is written with 0 nodes, which pas2p reads back but Dimemas
// itself rejects: set the node count first when the file is meant for Dimemas.
void SaveDimemasCfg(const Machine& machine, const std::string& path);

}  // namespace pas2p::sim
