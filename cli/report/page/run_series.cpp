#include "report/page/run_series.hpp"

#include <algorithm>

#include "report/page/series_stages.hpp"

namespace dtrain::report {

void SeriesBuilder::add(const records::MetricRecord& r) {
  switch (r.type) {
    case records::RecordType::kStep:
      // A step cannot wait longer than it lasts (as StatsBuilder: older writers charged the
      // collectives between steps to the next one).
      steps_[r.rank].push_back({r.time, r.seconds, std::min(r.comm_seconds.value_or(0), r.seconds),
                                std::min(r.data_seconds.value_or(0), r.seconds), r.samples});
      series::bound_steps(steps_[r.rank]);
      return;
    case records::RecordType::kInterval: {
      const records::StepInterval& i = r.step_interval;
      steps_[r.rank].push_back({r.time, i.seconds.sum(), i.comm_seconds.sum(),
                                std::min(i.data_seconds.sum(), i.seconds.sum()),
                                static_cast<long long>(i.samples.sum()),
                                std::max(r.time - i.began, i.seconds.sum()), i.count()});
      series::bound_steps(steps_[r.rank]);
      return;
    }
    case records::RecordType::kResource: {
      series::Sample s{r.time, r.interval, r.cpu_percent, r.rss_bytes, {}, {}, {}, {}};
      if (r.gpu) {
        s.gpu = r.gpu->index;
        s.gpu_util_percent = r.gpu->util_percent;
        s.gpu_memory_bytes = r.gpu->memory_bytes;
        s.gpu_power_watts = r.gpu->power_watts;
      }
      samples_[r.rank].push_back(s);
      return;
    }
    case records::RecordType::kBinding:
      return;  // not over time: the page's table of ranks (run_page.cpp)
    case records::RecordType::kCollective: {
      series::Collective& c = collectives_[{r.attempt, r.seq}];
      if (r.enter) {
        if (c.ranks == 0 || r.time < c.first_enter) c.first_enter = r.time;
        if (c.ranks == 0 || r.time >= c.last_enter) {
          c.last_enter = r.time;
          c.last_rank = r.rank;
        }
        if (c.ranks == 0) {
          c.op = r.op;
          c.bytes = r.bytes;
        }
        ++c.ranks;
      } else {
        c.last_exit = std::max(c.last_exit, r.time);
      }
      return;
    }
  }
}

void SeriesBuilder::set_host(int rank, std::string host) { hosts_[rank] = std::move(host); }

RunSeries SeriesBuilder::finish() const {
  RunSeries out;
  out.slow_collectives = series::slowest_collectives(collectives_);
  const auto axis = series::time_axis(steps_, samples_);
  if (!axis) return out;
  out.start = axis->start;
  out.bin_seconds = axis->width;
  out.bins = axis->bins;
  const series::Cells cells = series::step_cells(steps_, *axis);
  series::throughput_and_split(cells, *axis, out);
  out.node_samples_per_second = series::node_lines(cells, *axis, hosts_);
  series::HeatMap heat = series::heat_map(cells, axis->bins);
  out.heat_rows = std::move(heat.rows);
  out.heat = std::move(heat.cells);
  out.resources = series::resource_bands(samples_, *axis);
  return out;
}

}  // namespace dtrain::report
