#include "report/page/series_stages.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "report/stats_stages.hpp"

namespace dtrain::report::series {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The median of the finite values; NaN for none.
double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Per-bin values of every rank -> min, median, max across ranks per bin (NaN = no value).
Band band_of(const std::vector<std::vector<double>>& per_rank, int bins) {
  Band b;
  b.min.assign(bins, kNaN);
  b.median.assign(bins, kNaN);
  b.max.assign(bins, kNaN);
  std::vector<double> column;
  for (int i = 0; i < bins; ++i) {
    column.clear();
    for (const auto& series : per_rank) {
      if (std::isfinite(series[i])) column.push_back(series[i]);
    }
    if (column.empty()) continue;
    const auto [lo, hi] = std::minmax_element(column.begin(), column.end());
    b.min[i] = *lo;
    b.max[i] = *hi;
    b.median[i] = median_of(column);
  }
  return b;
}

// "0-7" for the ranks of a heat-map row, "3" for one.
std::string row_label(int first, int last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

// The median time between consecutive step records of a rank (their ends), over the first few
// ranks (enough to know the job's pace, where all of 1,024 would cost memory); 0 for none.
double median_step_period(const Steps& by_rank) {
  constexpr std::size_t kRanksLooked = 8;
  std::vector<double> gaps;
  std::size_t looked = 0;
  for (const auto& [rank, steps] : by_rank) {
    if (++looked > kRanksLooked) break;
    for (std::size_t i = 1; i < steps.size(); ++i) {
      // An interval record's gap holds its steps.
      const double gap = (steps[i].time - steps[i - 1].time) / static_cast<double>(steps[i].steps);
      if (gap > 0) gaps.push_back(gap);
    }
  }
  const double m = median_of(std::move(gaps));
  return std::isfinite(m) ? m : 0;
}

// A step's (an entry's) start.
double begin_of(const Step& s) { return s.time - std::max(s.span, s.seconds); }

// One pass of bound_steps: each entry merged into the one before while together they hold at most
// `most` steps, and (when `keep_pauses`) the pause between them is no longer than either.
void merge_runs(std::vector<Step>& steps, long long most, bool keep_pauses) {
  std::size_t out = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (out > 0) {
      Step& a = steps[out - 1];
      const Step& b = steps[i];
      const double pause = begin_of(b) - a.time;
      const double longer = std::max(a.time - begin_of(a), b.time - begin_of(b));
      if (a.steps + b.steps <= most && (!keep_pauses || pause <= longer)) {
        a = merged_steps(a, b);
        continue;
      }
    }
    steps[out++] = steps[i];
  }
  steps.resize(out);
}

}  // namespace

Step merged_steps(const Step& a, const Step& b) {
  Step m;
  m.time = std::max(a.time, b.time);
  m.span = m.time - std::min(begin_of(a), begin_of(b));
  m.seconds = a.seconds + b.seconds;
  m.comm = a.comm + b.comm;
  m.data = a.data + b.data;
  m.samples = a.samples;
  add_saturating(m.samples, b.samples);  // a file may claim up to INT64_MAX
  m.steps = a.steps + b.steps;
  return m;
}

void bound_steps(std::vector<Step>& steps) {
  if (steps.size() <= kKeptSeriesSteps) return;
  long long total = 0;
  for (const Step& s : steps) total += s.steps;
  // At most a quarter of the bound's worth of the steps in an entry: two neighbours then always
  // hold more than that together, so at most half the bound remain, each of them the same small
  // share of the rank's steps (a uniform resolution over the run, whatever its length).
  const auto most =
      std::max<long long>(2, total / static_cast<long long>(kKeptSeriesSteps / 4) + 1);
  merge_runs(steps, most, true);
  if (steps.size() > kKeptSeriesSteps * 3 / 4) merge_runs(steps, most, false);
}

std::vector<SlowCollective> slowest_collectives(const Collectives& collectives) {
  std::vector<SlowCollective> out;
  for (const auto& [key, c] : collectives) {
    if (c.ranks == 0 || c.last_exit < c.first_enter) continue;  // never left: `logs --hang`
    out.push_back({key.first, key.second, c.op, c.bytes, c.first_enter, c.last_exit - c.first_enter,
                   c.last_enter - c.first_enter, c.last_rank, c.ranks});
  }
  const auto slower = [](const SlowCollective& a, const SlowCollective& b) {
    return a.seconds > b.seconds;
  };
  const std::size_t keep = std::min(kSlowCollectives, out.size());
  std::partial_sort(out.begin(), out.begin() + keep, out.end(), slower);
  out.resize(keep);
  return out;
}

int TimeAxis::bin_of(double t) const {
  return std::clamp(static_cast<int>((t - start) / width), 0, bins - 1);
}

std::optional<TimeAxis> time_axis(const Steps& steps, const Samples& samples) {
  double t0 = std::numeric_limits<double>::infinity();
  double t1 = -t0;
  for (const auto& [rank, of_rank] : steps) {
    for (const Step& s : of_rank) {
      t0 = std::min(t0, s.time - std::max(s.span, s.seconds));
      t1 = std::max(t1, s.time);
    }
  }
  for (const auto& [rank, of_rank] : samples) {
    for (const Sample& s : of_rank) {
      t0 = std::min(t0, s.time - s.interval);
      t1 = std::max(t1, s.time);
    }
  }
  if (!(t1 >= t0)) return std::nullopt;
  // A run of one instant still gets a width, so every record falls in a bin. A bin is never
  // shorter than the typical time from one step to the next: a bin then always holds a whole
  // step's worth of work, where shorter ones would alternate between a step and the pause after
  // it (evaluation, logging) and draw a comb.
  const double span = std::max(t1 - t0, 1e-3);
  const double period = median_step_period(steps);
  const int bins =
      std::clamp(static_cast<int>(span / std::max(period, span / kTimeBins)), 1, kTimeBins);
  return TimeAxis{t0, span / bins, bins};
}

Cells step_cells(const Steps& steps, const TimeAxis& axis) {
  Cells cells;
  for (const auto& [rank, of_rank] : steps) {
    auto& row = cells[rank];
    row.assign(axis.bins, Cell{});
    for (const Step& s : of_rank) {
      const double length = std::max(s.span, s.seconds);
      const double begin = s.time - length;
      const int first = axis.bin_of(begin), last = axis.bin_of(s.time);
      for (int i = first; i <= last; ++i) {
        const double lo = std::max(begin, axis.start + i * axis.width);
        const double hi = std::min(s.time, axis.start + (i + 1) * axis.width);
        // A step of no duration counts whole in its bin.
        const double share = length > 0 ? std::max(0.0, hi - lo) / length : 1.0;
        if (share <= 0) continue;
        Cell& c = row[i];
        c.samples += static_cast<double>(s.samples) * share;
        c.seconds += s.seconds * share;
        c.comm += s.comm * share;
        c.data += s.data * share;
        c.steps += share * static_cast<double>(s.steps);
      }
    }
  }
  return cells;
}

void throughput_and_split(const Cells& cells, const TimeAxis& axis, RunSeries& out) {
  const int bins = axis.bins;
  out.total_samples_per_second.assign(bins, 0.0);
  std::vector<double> all_seconds(bins, 0.0), all_comm(bins, 0.0), all_data(bins, 0.0);
  std::vector<std::vector<double>> rates;
  for (const auto& [rank, row] : cells) {
    std::vector<double> rate(bins, kNaN);
    for (int i = 0; i < bins; ++i) {
      const Cell& c = row[i];
      out.total_samples_per_second[i] += c.samples / axis.width;
      all_seconds[i] += c.seconds;
      all_comm[i] += c.comm;
      all_data[i] += c.data;
      if (c.seconds > 0) rate[i] = c.samples / c.seconds;
    }
    if (cells.size() <= kOwnLines) out.rank_lines[rank] = rate;
    rates.push_back(std::move(rate));
  }
  out.rank_samples_per_second = band_of(rates, bins);
  out.compute_share.assign(bins, kNaN);
  out.comm_share.assign(bins, kNaN);
  out.data_share.assign(bins, kNaN);
  for (int i = 0; i < bins; ++i) {
    if (!(all_seconds[i] > 0)) continue;
    out.comm_share[i] = all_comm[i] / all_seconds[i];
    out.data_share[i] = all_data[i] / all_seconds[i];
    out.compute_share[i] = std::max(0.0, 1 - out.comm_share[i] - out.data_share[i]);
  }
}

std::map<std::string, std::vector<double>, NaturalLess> node_lines(
    const Cells& cells, const TimeAxis& axis, const std::map<int, std::string>& hosts) {
  std::map<std::string, std::vector<double>, NaturalLess> by_host;
  for (const auto& [rank, row] : cells) {
    const auto host = hosts.find(rank);
    if (host == hosts.end()) continue;
    auto& node = by_host[host->second];
    node.resize(axis.bins, 0.0);
    for (int i = 0; i < axis.bins; ++i) node[i] += row[i].samples / axis.width;
  }
  // Per node only when every rank's host is known and there are few enough to tell apart.
  if (by_host.size() < 2 || by_host.size() > kNodeLines || hosts.size() < cells.size()) return {};
  return by_host;
}

HeatMap heat_map(const Cells& cells, int bins) {
  HeatMap out;
  if (cells.empty()) return out;
  std::vector<int> ranks;
  for (const auto& [rank, row] : cells) ranks.push_back(rank);
  const std::size_t per_row = (ranks.size() + kHeatRows - 1) / kHeatRows;
  for (std::size_t first = 0; first < ranks.size(); first += per_row) {
    const std::size_t last = std::min(ranks.size(), first + per_row) - 1;
    std::vector<double> row(bins, kNaN);
    for (std::size_t k = first; k <= last; ++k) {
      const auto& cs = cells.at(ranks[k]);
      for (int i = 0; i < bins; ++i) {
        if (!(cs[i].steps > 0)) continue;
        const double mean = cs[i].seconds / cs[i].steps;
        if (!std::isfinite(row[i]) || mean > row[i]) row[i] = mean;
      }
    }
    out.rows.push_back(row_label(ranks[first], ranks[last]));
    out.cells.push_back(std::move(row));
  }
  return out;
}

namespace {

// One figure's readings in a bin or over the run: their sum and count, and the peak.
struct Acc {
  double sum = 0;
  long long n = 0;
  double peak = kNaN;
  void add(double v, bool peak_only) {
    sum += v;
    ++n;
    if (peak_only && !(v <= peak)) peak = v;
  }
};

}  // namespace

std::optional<ResourceBands> resource_bands(const Samples& samples, const TimeAxis& axis) {
  if (samples.empty()) return std::nullopt;
  const int bins = axis.bins;
  ResourceBands res;
  std::vector<std::vector<double>> cpu, rss, util, mem, power;
  for (const auto& [rank, of_rank] : samples) {
    std::vector<Acc> c(bins), r(bins), u(bins), m(bins), p(bins);
    Acc tc, tr, tu, tm, tp;
    const auto put = [](Acc& bin, Acc& total, const auto& value, bool peak) {
      if (!value) return;
      const auto v = static_cast<double>(*value);
      bin.add(v, peak);
      total.add(v, peak);
    };
    for (const Sample& s : of_rank) {
      const int i = axis.bin_of(s.time - s.interval / 2);
      put(c[i], tc, s.cpu_percent, false);
      put(r[i], tr, s.rss_bytes, true);
      put(u[i], tu, s.gpu_util_percent, false);
      put(m[i], tm, s.gpu_memory_bytes, true);
      put(p[i], tp, s.gpu_power_watts, false);
    }
    const auto series = [&](const std::vector<Acc>& acc, bool peak) {
      std::vector<double> s(bins, kNaN);
      for (int i = 0; i < bins; ++i) {
        s[i] = peak           ? acc[i].peak
               : acc[i].n > 0 ? acc[i].sum / static_cast<double>(acc[i].n)
                              : kNaN;
      }
      return s;
    };
    cpu.push_back(series(c, false));
    rss.push_back(series(r, true));
    util.push_back(series(u, false));
    mem.push_back(series(m, true));
    power.push_back(series(p, false));
    res.gpu = res.gpu || tu.n > 0 || tm.n > 0 || tp.n > 0;
  }
  res.cpu_percent = band_of(cpu, bins);
  res.rss_bytes = band_of(rss, bins);
  res.gpu_util_percent = band_of(util, bins);
  res.gpu_memory_bytes = band_of(mem, bins);
  res.gpu_power_watts = band_of(power, bins);
  return res;
}

}  // namespace dtrain::report::series
