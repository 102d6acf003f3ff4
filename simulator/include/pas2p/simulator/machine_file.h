// Machine files: the TOML description of a Machine that `simulate` and `predict` read and
// `characterize` writes, and Dimemas collective tables (one line per operation:
// `ID MODEL_IN SIZE_IN MODEL_OUT SIZE_OUT`, e.g. `11 LOG 2MAX LOG MAX`).
//
// datasets/machines/default.toml documents every field. In short:
//
//   name = "..."
//   [nodes]       count, cpus_per_node, mapping ("fill" | "round_robin" | "explicit"),
//                 rank_to_node
//   [intra_node]  latency_s, bandwidth_Bps
//   [inter_node]  latency_s, bandwidth_Bps, buses, input_links, output_links, half_duplex
//   [protocol]    eager_threshold_bytes
//   [cpu]         instructions_per_second, cpu_ratio, flops_per_second
//   [collectives] file (a Dimemas table, relative to the machine file), table (lines)
//   [topology]    kind, dims, fat_tree_arity, links, hop_latency_s
//
// Every section and field is optional (missing = the Machine default). Unknown sections
// or fields, wrong types and out-of-range values are errors (pas2p::UserError) naming the
// file, the line, the field and what was expected. MachineToToml writes every field, and
// reading it back gives an identical Machine (doubles are written in shortest round-trip
// form).
#pragma once

#include <string>
#include <string_view>

#include "pas2p/simulator/machine.h"

namespace pas2p::sim {

// Reads a machine file. `[collectives] file` is resolved against the file's directory.
Machine LoadMachineFile(const std::string& path);
// Parses machine TOML text; `source` names it in error messages, `base_dir` resolves a
// relative `[collectives] file` ("" = the current directory).
Machine ParseMachineToml(std::string_view text, const std::string& source,
                         const std::string& base_dir = "");
// The documented TOML text of `machine`. `comment` (may be several lines) is written at the
// top as `#` comment lines.
std::string MachineToToml(const Machine& machine, std::string_view comment = "");
// Writes MachineToToml to `path` (throws UserError when the file cannot be written).
void SaveMachineFile(const Machine& machine, const std::string& path,
                     std::string_view comment = "");

// Reads any machine description by extension: `.cfg` = Dimemas configuration, else TOML.
Machine LoadAnyMachine(const std::string& path);

// Dimemas collective tables. Lines: `ID MODEL_IN SIZE_IN MODEL_OUT SIZE_OUT`, where ID is
// 0..15 or an operation name (MPI_Allreduce, allreduce), MODEL is 0 | CT | CTE | LIN | LOG,
// SIZE is MIN | MAX | MEAN | 2MAX | 2*MAX | S+R (case-insensitive). Blank lines and
// comments (`#`, `//`, `/* ... */`) are skipped. Rows start from `base` (default: Table 3 of
// paper 000); an id given twice is an error. `source` and `first_line` place errors.
CollectiveTable ParseCollectiveTable(std::string_view text, const std::string& source,
                                     const CollectiveTable& base = DefaultCollectiveTable(),
                                     int first_line = 1);
CollectiveTable LoadCollectiveTableFile(const std::string& path,
                                        const CollectiveTable& base = DefaultCollectiveTable());
// One line in Dimemas syntax, e.g. "11 LOG 2MAX LOG MAX" (no comment).
std::string CollectiveLine(int id, const CollectiveCost& cost);
// The whole table, one line per id, each followed by a `/* MPI_Name */` comment.
std::string CollectiveTableToText(const CollectiveTable& table);

// "MPI_Barrier" ... "MPI_Alltoallw" for ids 0..15; "" otherwise.
std::string_view DimemasCollectiveName(int id);
// Names as written in files.
std::string_view CollModelName(CollModel model);       // "0", "CTE", "LIN", "LOG"
std::string_view CollSizeName(CollSize size);          // "MIN", "MAX", "MEAN", "2MAX", "S+R"
std::string_view MappingName(Mapping mapping);         // "fill", "round_robin", "explicit"
std::string_view TopologyKindName(TopologyKind kind);  // "none", "ring", "torus2d", ...

}  // namespace pas2p::sim
