#include "report/scaling.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "common/errors.hpp"
#include "report/json_text.hpp"
#include "report/markup.hpp"
#include "report/plain_number.hpp"

namespace dtrain::report {
namespace {

// SVG coordinates and sizes (never shown); every number a person reads is plain_number's, as in
// the tables.
std::string num(double v, const char* fmt) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// A round upper bound for an axis: 1, 2 or 5 times a power of ten.
double nice_max(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

struct Frame {
  double width = 640, height = 400, left = 80, right = 30, top = 50, bottom = 60;
  double plot_w() const { return width - left - right; }
  double plot_h() const { return height - top - bottom; }
};

std::string svg_open(const Frame& f, const std::string& title) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         num(f.width, "%.0f") + "\" height=\"" + num(f.height, "%.0f") + "\" viewBox=\"0 0 " +
         num(f.width, "%.0f") + " " + num(f.height, "%.0f") +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n"
         "<title>" +
         xml_escape(title) +
         "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
         "<text x=\"" +
         num(f.width / 2, "%.1f") + "\" y=\"24\" text-anchor=\"middle\" font-size=\"15\">" +
         xml_escape(title) + "</text>\n";
}

// Axes with 5 horizontal grid lines labelled 0..y_max, and the axis titles.
std::string axes(const Frame& f, double y_max, const std::string& x_title,
                 const std::string& y_title) {
  std::string out;
  for (int i = 0; i <= 5; ++i) {
    const double y = f.top + f.plot_h() * (1 - i / 5.0);
    out += "<line x1=\"" + num(f.left, "%.1f") + "\" y1=\"" + num(y, "%.1f") + "\" x2=\"" +
           num(f.left + f.plot_w(), "%.1f") + "\" y2=\"" + num(y, "%.1f") +
           "\" stroke=\"#ddd\"/>\n<text x=\"" + num(f.left - 6, "%.1f") + "\" y=\"" +
           num(y + 4, "%.1f") + "\" text-anchor=\"end\">" + plain_number(y_max * i / 5.0) +
           "</text>\n";
  }
  out += "<line x1=\"" + num(f.left, "%.1f") + "\" y1=\"" + num(f.top + f.plot_h(), "%.1f") +
         "\" x2=\"" + num(f.left + f.plot_w(), "%.1f") + "\" y2=\"" +
         num(f.top + f.plot_h(), "%.1f") + "\" stroke=\"black\"/>\n";
  out += "<line x1=\"" + num(f.left, "%.1f") + "\" y1=\"" + num(f.top, "%.1f") + "\" x2=\"" +
         num(f.left, "%.1f") + "\" y2=\"" + num(f.top + f.plot_h(), "%.1f") +
         "\" stroke=\"black\"/>\n";
  out += "<text x=\"" + num(f.left + f.plot_w() / 2, "%.1f") + "\" y=\"" +
         num(f.height - 15, "%.1f") + "\" text-anchor=\"middle\">" + xml_escape(x_title) +
         "</text>\n";
  out += "<text x=\"18\" y=\"" + num(f.top + f.plot_h() / 2, "%.1f") +
         "\" text-anchor=\"middle\" transform=\"rotate(-90 18 " +
         num(f.top + f.plot_h() / 2, "%.1f") + ")\">" + xml_escape(y_title) + "</text>\n";
  return out;
}

}  // namespace

ScalingTable scaling_table(std::vector<ScalingRun> runs) {
  if (runs.empty()) throw UsageError("dtrain: stats: expected at least one run");
  for (const auto& r : runs) {
    if (r.ranks <= 0 || !(r.samples_per_second > 0)) {
      throw UsageError("dtrain: stats: " + r.label +
                       ": expected step records with samples and seconds to compare "
                       "its throughput, got none");
    }
  }
  std::stable_sort(runs.begin(), runs.end(),
                   [](const ScalingRun& a, const ScalingRun& b) { return a.ranks < b.ranks; });
  ScalingTable t;
  const ScalingRun& base = runs.front();
  std::set<std::string> jobs;
  for (const auto& r : runs) {
    ScalingRow row{r, 0, 0};
    row.speedup = r.samples_per_second / base.samples_per_second;
    row.efficiency = row.speedup * base.ranks / r.ranks;
    if (!r.job.empty()) jobs.insert(r.job);
    t.rows.push_back(std::move(row));
  }
  t.mixed_jobs = jobs.size() > 1;
  return t;
}

std::string format_scaling_table(const ScalingTable& t) {
  std::string out = "# scaling against the smallest run (" + t.rows[t.baseline].run.label + ")\n";
  if (t.mixed_jobs) out += "# note: the runs are of different jobs\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-28s %6s %5s %12s %8s %11s\n", "run", "ranks", "gpus",
                "samples/s", "speedup", "efficiency");
  out += line;
  for (const auto& r : t.rows) {
    std::snprintf(line, sizeof line, "%-28s %6d %5s %12s %8.2f %10.1f%%\n", r.run.label.c_str(),
                  r.run.ranks, r.run.gpus ? std::to_string(*r.run.gpus).c_str() : "-",
                  plain_number(r.run.samples_per_second).c_str(), r.speedup, r.efficiency * 100);
    out += line;
  }
  return out;
}

nlohmann::json scaling_to_json(const ScalingTable& t) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : t.rows) {
    rows.push_back({{"run", r.run.label},
                    {"job", r.run.job},
                    {"ranks", r.run.ranks},
                    {"gpus", r.run.gpus ? nlohmann::json(*r.run.gpus) : nlohmann::json(nullptr)},
                    {"samples_per_second", r.run.samples_per_second},
                    {"speedup", r.speedup},
                    {"efficiency", r.efficiency}});
  }
  return {{"baseline", t.rows[t.baseline].run.label}, {"mixed_jobs", t.mixed_jobs}, {"rows", rows}};
}

std::string stats_json_text(const std::vector<std::string>& run_dirs,
                            const std::vector<RunStats>& stats, const ScalingTable* table) {
  const auto run_json = [&](std::size_t i) {
    auto j = stats_to_json(stats[i]);
    j["run_dir"] = run_dirs[i];
    return j;
  };
  if (!table) return json_text(run_json(0), 2);
  nlohmann::json out = {{"runs", nlohmann::json::array()}, {"scaling", scaling_to_json(*table)}};
  for (std::size_t i = 0; i < stats.size(); ++i) out["runs"].push_back(run_json(i));
  return json_text(out, 2);
}

std::string scaling_svg(const ScalingTable& t) {
  const Frame f;
  const ScalingRow& base = t.rows[t.baseline];
  const int max_ranks = t.rows.back().run.ranks;
  double y_top = 0;
  for (const auto& r : t.rows) y_top = std::max(y_top, r.run.samples_per_second);
  const double ideal_top = base.run.samples_per_second * max_ranks / base.run.ranks;
  const double y_max = nice_max(std::max(y_top, ideal_top));
  const double x_max = nice_max(max_ranks);
  const auto x = [&](double ranks) { return f.left + f.plot_w() * ranks / x_max; };
  const auto y = [&](double sps) { return f.top + f.plot_h() * (1 - sps / y_max); };

  std::string out = svg_open(f, "Scaling: samples/s by ranks");
  out += axes(f, y_max, "ranks", "samples/s");
  for (int i = 0; i <= 5; ++i) {
    const double xv = x_max * i / 5.0;
    out += "<text x=\"" + num(x(xv), "%.1f") + "\" y=\"" + num(f.top + f.plot_h() + 18, "%.1f") +
           "\" text-anchor=\"middle\">" + plain_number(xv) + "</text>\n";
  }
  out += "<line class=\"ideal\" x1=\"" + num(x(base.run.ranks), "%.1f") + "\" y1=\"" +
         num(y(base.run.samples_per_second), "%.1f") + "\" x2=\"" + num(x(max_ranks), "%.1f") +
         "\" y2=\"" + num(y(ideal_top), "%.1f") + "\" stroke=\"#999\" stroke-dasharray=\"6 4\"/>\n";
  std::string points;
  for (const auto& r : t.rows) {
    points += (points.empty() ? "" : " ") + num(x(r.run.ranks), "%.1f") + "," +
              num(y(r.run.samples_per_second), "%.1f");
  }
  out += "<polyline class=\"measured\" points=\"" + points +
         "\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\"/>\n";
  for (const auto& r : t.rows) {
    const double px = x(r.run.ranks), py = y(r.run.samples_per_second);
    out += "<circle class=\"run\" cx=\"" + num(px, "%.1f") + "\" cy=\"" + num(py, "%.1f") +
           "\" r=\"4\" fill=\"#1f77b4\"><title>" + xml_escape(r.run.label) + ": " +
           plain_number(r.run.samples_per_second) + " samples/s</title></circle>\n";
    out += "<text x=\"" + num(px + 6, "%.1f") + "\" y=\"" + num(py - 8, "%.1f") + "\">" +
           plain_number(std::round(r.efficiency * 100)) + "%</text>\n";
  }
  out += "<text x=\"" + num(f.left + 10, "%.1f") + "\" y=\"" + num(f.top + 14, "%.1f") +
         "\" fill=\"#1f77b4\">measured (labels: efficiency)</text>\n<text x=\"" +
         num(f.left + 10, "%.1f") + "\" y=\"" + num(f.top + 30, "%.1f") +
         "\" fill=\"#999\">ideal (linear from " + xml_escape(base.run.label) + ")</text>\n";
  out += "</svg>\n";
  return out;
}

std::string ranks_svg(const RunStats& stats, const std::string& title) {
  const Frame f;
  double top = 0;
  std::vector<double> rates;
  for (const auto& r : stats.ranks) {
    top = std::max(top, r.samples_per_second);
    rates.push_back(r.samples_per_second);
  }
  const double y_max = nice_max(top);
  const double med = percentile(rates, 50);
  std::set<int> slow;
  for (const auto& s : stats.stragglers) slow.insert(s.ranks.begin(), s.ranks.end());
  std::string out = svg_open(f, title);
  out += axes(f, y_max, "rank", "samples/s");
  const double n = std::max<double>(1, static_cast<double>(stats.ranks.size()));
  const double slot = f.plot_w() / n;
  for (std::size_t i = 0; i < stats.ranks.size(); ++i) {
    const RankStats& r = stats.ranks[i];
    const double h = f.plot_h() * r.samples_per_second / y_max;
    const double bx = f.left + slot * static_cast<double>(i) + slot * 0.1;
    out += "<rect class=\"rank\" x=\"" + num(bx, "%.1f") + "\" y=\"" +
           num(f.top + f.plot_h() - h, "%.1f") + "\" width=\"" + num(slot * 0.8, "%.1f") +
           "\" height=\"" + num(h, "%.1f") + "\" fill=\"" +
           (slow.count(r.rank) ? "#d62728" : "#1f77b4") + "\"><title>rank " +
           std::to_string(r.rank) + " on " + xml_escape(r.host) + ": " +
           plain_number(r.samples_per_second) + " samples/s</title></rect>\n";
    if (stats.ranks.size() <= 64) {
      out += "<text x=\"" + num(bx + slot * 0.4, "%.1f") + "\" y=\"" +
             num(f.top + f.plot_h() + 16, "%.1f") + "\" text-anchor=\"middle\">" +
             std::to_string(r.rank) + "</text>\n";
    }
  }
  const double my = f.top + f.plot_h() * (1 - med / y_max);
  out += "<line class=\"median\" x1=\"" + num(f.left, "%.1f") + "\" y1=\"" + num(my, "%.1f") +
         "\" x2=\"" + num(f.left + f.plot_w(), "%.1f") + "\" y2=\"" + num(my, "%.1f") +
         "\" stroke=\"#ff7f0e\" stroke-dasharray=\"6 4\"/>\n<text x=\"" +
         num(f.left + f.plot_w() - 4, "%.1f") + "\" y=\"" + num(my - 4, "%.1f") +
         "\" text-anchor=\"end\" fill=\"#ff7f0e\">median " + plain_number(med) + "</text>\n";
  out += "</svg>\n";
  return out;
}

}  // namespace dtrain::report
