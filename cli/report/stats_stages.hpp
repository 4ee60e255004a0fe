// The stages of StatsBuilder::finish (stats.hpp), each a function of what the builder kept, so that
// each is tested on its own: a rank's sums and percentiles, the run's total, the stragglers among
// ranks and among nodes with the per-node table, a rank's resource averages, and the note of an
// attempt that numbered its steps from the start again. Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "report/stats.hpp"

namespace dtrain::report {

// Sample counts a file claims can be anything up to INT64_MAX: totals stop there rather than wrap
// into negative numbers.
void add_saturating(long long& total, long long n);

// A rank's steps, samples, seconds, comm and data time (each step's comm capped at its seconds),
// rates, shares and step-time percentiles: exact from step records alone, from one histogram of
// every step once an interval record or a folded block (kept_steps.hpp) is among them (within
// 0.5 %). The host is left "?".
RankStats rank_stats(int rank, const std::vector<KeptSteps>& steps);

// The busy seconds (a step less its wait in collectives, capped at the step) of a rank's last
// kStragglerVerdictSteps steps, oldest first; an interval's steps each at the interval's mean.
std::vector<double> last_busy_seconds(const std::vector<KeptSteps>& steps);

// out.total_samples, slowest_rank_seconds and total_samples_per_second from out.ranks.
void add_run_totals(RunStats& out);

// out.stragglers among the ranks with samples, then (with two or more known hosts) out.nodes, by
// host in natural order (node2 before node10), and the stragglers among nodes of more than one
// rank. `busy` holds each rank's last_busy_seconds, by rank.
void add_stragglers_and_nodes(RunStats& out, const std::map<int, std::vector<double>>& busy,
                              double straggler_threshold);

// A rank's resource samples averaged: the CPU share weighted by each sample's interval, the others
// the mean of the readings that hold them. The host is left "?".
RankResources average_resources(int rank, const ResourceSums& sums);

// The note of an attempt whose first step was no later than the attempt before it.
std::string renumbered_note(int attempt, long long first_step);

}  // namespace dtrain::report
