#include "report/arrival_skew.hpp"

#include <algorithm>
#include <map>

#include "report/field_number.hpp"
#include "report/plain_number.hpp"

namespace dtrain::report {
namespace {

std::string_view next_token(std::string_view& rest, char separator) {
  while (!rest.empty() && rest.front() == separator) rest.remove_prefix(1);
  const std::size_t end = rest.find(separator);
  const std::string_view token = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return token;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  const double upper = v[n / 2];
  if (n % 2 == 1) return upper;
  return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2)) + upper) / 2;
}

}  // namespace

std::string format_arrivals(const RankArrivals& a) {
  // Space-separated fields, the host last on its line (it holds no space); one line per window,
  // its waits comma-separated.
  std::string out = "arrivals rank=" + std::to_string(a.rank);
  if (a.doing != Activity::kUnknown) out += " doing=" + std::string(activity_word(a.doing));
  if (a.cpu_share >= 0) out += " cpu=" + plain_number(a.cpu_share);
  out += " host=" + a.host + "\n";
  for (const auto& w : a.windows) {
    out += "window index=" + std::to_string(w.index) +
           " first_enter_us=" + std::to_string(w.first_enter_us) +
           " last_leave_us=" + std::to_string(w.last_leave_us) + " waits_us=";
    for (std::size_t i = 0; i < w.waits_us.size(); ++i) {
      if (i > 0) out += ',';
      out += std::to_string(w.waits_us[i]);
    }
    out += '\n';
  }
  return out;
}

std::optional<RankArrivals> parse_arrivals(std::string_view text) {
  RankArrivals a;
  bool header = false;
  while (!text.empty()) {
    std::string_view line = next_token(text, '\n');
    const std::string_view kind = next_token(line, ' ');
    if (kind.empty()) continue;
    if (!header) {
      if (kind != "arrivals") return std::nullopt;
      header = true;
    }
    ArrivalWindowData w;
    bool waits = false;
    for (std::string_view f = next_token(line, ' '); !f.empty(); f = next_token(line, ' ')) {
      const std::size_t eq = f.find('=');
      if (eq == std::string_view::npos) return std::nullopt;
      const std::string_view key = f.substr(0, eq);
      std::string_view value = f.substr(eq + 1);
      bool ok = true;
      if (kind == "arrivals" && key == "rank") {
        ok = parse_number(value, a.rank) && a.rank >= 0;
      } else if (kind == "arrivals" && key == "doing") {
        a.doing = activity_from_word(value);
      } else if (kind == "arrivals" && key == "cpu") {
        ok = parse_number(value, a.cpu_share) && a.cpu_share >= 0 && a.cpu_share <= 1;
      } else if (kind == "arrivals" && key == "host") {
        a.host = value;
      } else if (kind == "window" && key == "index") {
        ok = parse_number(value, w.index);
      } else if (kind == "window" && key == "first_enter_us") {
        ok = parse_number(value, w.first_enter_us);
      } else if (kind == "window" && key == "last_leave_us") {
        ok = parse_number(value, w.last_leave_us);
      } else if (kind == "window" && key == "waits_us") {
        waits = true;
        for (std::string_view v = next_token(value, ','); !v.empty(); v = next_token(value, ',')) {
          std::uint32_t us = 0;
          if (!parse_number(v, us)) return std::nullopt;
          w.waits_us.push_back(us);
        }
      }  // else: a field of a later version
      if (!ok) return std::nullopt;
    }
    if (kind == "window") {
      if (!waits) return std::nullopt;
      a.windows.push_back(std::move(w));
    }
  }
  if (!header || a.rank < 0) return std::nullopt;
  return a;
}

std::optional<ArrivalVerdict> judge_arrivals(const std::vector<RankArrivals>& ranks,
                                             double threshold, double min_excess_seconds) {
  const std::size_t n = ranks.size();
  if (n < 2) return std::nullopt;
  // Each rank's windows by number; the collectives all of them published, newest first.
  std::vector<std::map<std::uint64_t, const ArrivalWindowData*>> by_index(n);
  for (std::size_t r = 0; r < n; ++r) {
    for (const auto& w : ranks[r].windows) by_index[r][w.index] = &w;
  }
  struct Call {
    std::uint64_t index;
    std::size_t at;
  };
  std::vector<Call> calls;
  for (auto it = by_index[0].rbegin(); it != by_index[0].rend(); ++it) {
    std::size_t common = it->second->waits_us.size();
    for (std::size_t r = 1; r < n && common > 0; ++r) {
      const auto found = by_index[r].find(it->first);
      common = found == by_index[r].end() ? 0 : std::min(common, found->second->waits_us.size());
    }
    for (std::size_t at = common; at-- > 0 && calls.size() < kArrivalVerdictCalls;) {
      calls.push_back({it->first, at});
    }
    if (calls.size() >= kArrivalVerdictCalls) break;
  }
  if (calls.size() < kArrivalMinCalls) return std::nullopt;

  // waits[c][r]: rank r's wait in call c, in seconds.
  std::vector<std::vector<double>> waits(calls.size(), std::vector<double>(n));
  std::vector<std::size_t> last(n, 0);
  for (std::size_t c = 0; c < calls.size(); ++c) {
    for (std::size_t r = 0; r < n; ++r) {
      waits[c][r] = by_index[r].at(calls[c].index)->waits_us[calls[c].at] * 1e-6;
    }
    const double least = *std::min_element(waits[c].begin(), waits[c].end());
    for (std::size_t r = 0; r < n; ++r) {
      if (waits[c][r] == least) ++last[r];  // ties count for every tied rank
    }
  }
  const std::size_t s =
      static_cast<std::size_t>(std::max_element(last.begin(), last.end()) - last.begin());
  ArrivalVerdict v;
  v.rank = ranks[s].rank;
  v.host = ranks[s].host;
  v.doing = ranks[s].doing;
  v.cpu_share = ranks[s].cpu_share;
  std::vector<double> others_cpu;
  for (std::size_t r = 0; r < n; ++r) {
    if (r != s && ranks[r].cpu_share >= 0) others_cpu.push_back(ranks[r].cpu_share);
  }
  if (!others_cpu.empty()) v.others_cpu_share = median(std::move(others_cpu));
  v.last = last[s];
  v.calls = calls.size();
  std::vector<double> lags;
  std::vector<double> others_waited(n, 0);
  double lag_sum = 0;
  for (std::size_t c = 0; c < calls.size(); ++c) {
    std::vector<double> others;
    others.reserve(n - 1);
    for (std::size_t r = 0; r < n; ++r) {
      others_waited[r] += waits[c][r];
      if (r != s) others.push_back(waits[c][r]);
    }
    const double lag = median(std::move(others)) - waits[c][s];
    lags.push_back(lag);
    lag_sum += lag;
  }
  v.lag_seconds = median(lags);
  v.waited_seconds = others_waited[s];
  others_waited.erase(others_waited.begin() + static_cast<std::ptrdiff_t>(s));
  v.others_waited_seconds = median(others_waited);
  // Its own time over the compared collectives: each window's span, for the share compared.
  double span = 0;
  std::map<std::uint64_t, std::size_t> used;
  for (const auto& c : calls) ++used[c.index];
  for (const auto& [index, count] : used) {
    const ArrivalWindowData& w = *by_index[s].at(index);
    span += static_cast<double>(std::max<std::int64_t>(0, w.last_leave_us - w.first_enter_us)) *
            1e-6 * static_cast<double>(count) / static_cast<double>(w.waits_us.size());
  }
  v.lag_share = span > 0 ? lag_sum / span : 0;
  const double share_last = static_cast<double>(v.last) / static_cast<double>(v.calls);
  v.straggler = share_last >= kArrivalLastShare && v.lag_share > threshold &&
                lag_sum / static_cast<double>(v.calls) >= min_excess_seconds;
  return v;
}

namespace {

// `doing`: the live line's clause on what the straggler does now ("" afterwards: `stats` and the
// report read the last samples of a rank that has ended, not what it does).
std::string verdict_text(const ArrivalVerdict& v, const std::string& doing) {
  return "rank " + std::to_string(v.rank) + " on " + v.host + " arrived last in " +
         percent_text(static_cast<double>(v.last) / static_cast<double>(v.calls)) +
         " of the last " + std::to_string(v.calls) + " collectives, " +
         duration_text(v.lag_seconds) + " after the median: a straggler" +
         (doing.empty() ? std::string() : "; " + doing) + "; the others waited for it " +
         percent_text(v.lag_share) + " of the time (it waited " + duration_text(v.waited_seconds) +
         " in them, the median of the others " + duration_text(v.others_waited_seconds) + ")";
}

}  // namespace

std::string arrival_verdict_text(const ArrivalVerdict& v) { return verdict_text(v, ""); }

std::string straggler_change_line(const std::optional<ArrivalVerdict>& verdict,
                                  std::optional<NamedStraggler>& named) {
  if (!verdict) return "";
  if (verdict->straggler && (!named || named->rank != verdict->rank)) {
    named = NamedStraggler{verdict->rank, verdict->host};
    return "dtrain: straggler: " +
           verdict_text(*verdict, activity_text(verdict->doing, verdict->cpu_share,
                                                verdict->others_cpu_share));
  }
  if (!verdict->straggler && named) {
    const std::string line = "dtrain: straggler: rank " + std::to_string(named->rank) + " on " +
                             named->host +
                             " no longer arrives last: the last collectives of every rank name "
                             "no straggler";
    named.reset();
    return line;
  }
  return "";
}

std::string arrival_section_text(const ArrivalVerdict& v, std::size_t ranks) {
  const std::string head = "arrivals at the collectives (the last " + std::to_string(v.calls) +
                           " of " + std::to_string(ranks) + " ranks, matched by number):";
  if (v.straggler) return head + "\n  " + arrival_verdict_text(v) + "\n";
  return head + " no straggler\n";
}

}  // namespace dtrain::report
