// Failing ranks that ended alike — the same way, quoting the same line, as the 1,023 ranks a
// launcher SIGTERMs after one failed — taken together, so `logs --first-error` and the report page
// name them once, their ranks collapsed as `dtrain logs --collapse` writes them
// ("[ranks 0-2,4-1023 @ 256 hosts]"), rather than a line each. Pure.
#pragma once

#include <string>
#include <vector>

#include "report/first_error.hpp"

namespace dtrain::report {

// `ends` grouped by how each ended and the line it quotes (and whether that line reports a lost
// peer); groups in the order of their first member, members in the order given.
std::vector<std::vector<const RankEnd*>> group_alike(const std::vector<RankEnd>& ends);

// The group's ranks and hosts: "[ranks 0-2,4-1023 @ 256 hosts] ", "[ranks 1,3 @ node0] ".
std::string alike_prefix(const std::vector<const RankEnd*>& group);
// The same apart, for a table: "ranks 0-2,4-1023" and "256 hosts".
std::string alike_ranks(const std::vector<const RankEnd*>& group);
std::string alike_hosts(const std::vector<const RankEnd*>& group);

}  // namespace dtrain::report
