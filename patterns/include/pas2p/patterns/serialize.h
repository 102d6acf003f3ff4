// JSON form of the fitted patterns, so a scaling model can be saved (`pas2p model`) and read
// back without refitting. Every field is written with its name; readers throw
// pas2p::UserError naming `origin` (a file name) and the field that is missing or wrong.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "pas2p/patterns/communicators.h"
#include "pas2p/patterns/general_equation.h"
#include "pas2p/patterns/grid.h"
#include "pas2p/patterns/valid_counts.h"

namespace pas2p::patterns {

nlohmann::json ToJson(const GridRule& grid);
nlohmann::json ToJson(const ValidCounts& counts);
nlohmann::json ToJson(const GeneralEquation& equation);  // includes "description" (informative)
nlohmann::json ToJson(const CommunicatorRule& rule);

GridRule GridRuleFromJson(const nlohmann::json& json, const std::string& origin);
ValidCounts ValidCountsFromJson(const nlohmann::json& json, const std::string& origin);
GeneralEquation GeneralEquationFromJson(const nlohmann::json& json, const std::string& origin);
CommunicatorRule CommunicatorRuleFromJson(const nlohmann::json& json, const std::string& origin);

}  // namespace pas2p::patterns
