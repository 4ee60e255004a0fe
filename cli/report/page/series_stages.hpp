// The stages of SeriesBuilder::finish (run_series.hpp), each a pure function of what the builder
// kept: the slowest collectives; the time axis (the run's span cut into bins); each rank's steps
// shared among the bins (step cells); the throughput and step time split across ranks; the lines
// per node; the heat map of step time; the resource bands. Apart so that each is tested alone
// (series_stages_test.cpp).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/page/run_series.hpp"
#include "report/page/series_input.hpp"

namespace dtrain::report::series {

// The steps SeriesBuilder keeps of a rank, at most: the page draws kTimeBins bins, so past this
// many a rank's entries are merged pairwise (bound_steps) and memory does not grow with the run
// (docs/benchmarks.md, "Records at scale"), each entry then some tenths of a bin at most.
inline constexpr std::size_t kKeptSeriesSteps = 1024;

// A rank's consecutive entries `a` and `b` as one: its steps ran from the first's start to the
// last's end, as an interval record's.
Step merged_steps(const Step& a, const Step& b);

// Past kKeptSeriesSteps entries, neighbours merged (oldest first) into entries of at most 4 /
// kKeptSeriesSteps of the rank's steps each, leaving about half the bound: those with a pause
// between them no longer than either (a restart's downtime, a pause for evaluation keep their
// gap), and all of them when that leaves more than three quarters.
void bound_steps(std::vector<Step>& steps);

// The kSlowCollectives longest from first enter to last exit, slowest first; one never left (a
// hang: `logs --hang`) is not among them.
std::vector<SlowCollective> slowest_collectives(const Collectives& collectives);

// The run's time axis: from the first step's start (or resource sample's) to the last record, in
// at most kTimeBins bins, none shorter than the typical time between a rank's steps.
struct TimeAxis {
  double start = 0;
  double width = 0;  // of a bin, seconds
  int bins = 0;
  int bin_of(double t) const;  // clamped into [0, bins)
};
// nullopt without a step or resource record.
std::optional<TimeAxis> time_axis(const Steps& steps, const Samples& samples);

// A rank's steps in one bin: each step shared among the bins it ran in by the time it spent in
// each (steps longer than a bin, or not aligned with them, would otherwise leave every other bin
// empty and draw a comb).
struct Cell {
  double samples = 0, seconds = 0, comm = 0, data = 0;
  double steps = 0;  // fractions of steps
};
using Cells = std::map<int, std::vector<Cell>>;  // rank -> [bin]
Cells step_cells(const Steps& steps, const TimeAxis& axis);

// Into `out`: the job's samples per second per bin, each rank's (as a band across ranks, and a
// line each for up to kOwnLines ranks), and the shares of compute, collectives and data loading
// in all ranks' step time.
void throughput_and_split(const Cells& cells, const TimeAxis& axis, RunSeries& out);

// Each node's samples per second per bin, node2 before node10; empty unless every rank's host is
// known and there are 2 to kNodeLines nodes.
std::map<std::string, std::vector<double>, NaturalLess> node_lines(
    const Cells& cells, const TimeAxis& axis, const std::map<int, std::string>& hosts);

// The heat map: a row per rank, or consecutive ranks together when there are more than
// kHeatRows; each cell its row's slowest mean step seconds in the bin (one slow rank is never
// averaged away), NaN where no step ran.
struct HeatMap {
  std::vector<std::string> rows;  // "3" or "0-7"
  std::vector<std::vector<double>> cells;
};
HeatMap heat_map(const Cells& cells, int bins);

// Per rank the mean of each figure in each bin (the peak for memory), then bands across ranks;
// nullopt without resource records.
std::optional<ResourceBands> resource_bands(const Samples& samples, const TimeAxis& axis);

}  // namespace dtrain::report::series
