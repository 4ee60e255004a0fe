#include "report/log_collapse.hpp"

#include <algorithm>

#include "records/log_line.hpp"
#include "report/log_merge.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {
namespace {

// The text a line is grouped by: after "<timestamp> ", or the whole line without one.
std::string_view text_of(std::string_view line) {
  if (line.size() > records::kLogTimestampWidth && line[records::kLogTimestampWidth - 1] == 'Z' &&
      line[records::kLogTimestampWidth] == ' ' && records::parse_log_timestamp(line)) {
    return line.substr(records::kLogTimestampWidth + 1);
  }
  return line;
}

}  // namespace

LogCollapser::LogCollapser(Emit emit, std::int64_t window_micros, std::size_t max_open)
    : emit_(std::move(emit)),
      window_(window_micros),
      max_open_(std::max<std::size_t>(max_open, 1)) {}

void LogCollapser::add(int rank, std::string_view host, std::int64_t time, std::string_view line) {
  emit_before(time - window_);
  const std::string_view text = text_of(line);
  if (auto it = by_text_.find(text); it != by_text_.end()) {
    Group& g = open_[it->second - front_id_];
    if (g.ranks.back() != rank) g.ranks.push_back(rank);
    g.hosts.emplace(host);
    ++g.lines;
    return;
  }
  if (open_.size() >= max_open_) emit_front();
  Group& g = open_.emplace_back();
  g.first_time = time;
  g.line.assign(line);
  g.text = text_of(g.line);
  g.ranks.push_back(rank);
  g.hosts.emplace(host);
  g.lines = 1;
  by_text_.emplace(g.text, front_id_ + open_.size() - 1);
}

void LogCollapser::emit_before(std::int64_t now) {
  while (!open_.empty() && open_.front().first_time < now) emit_front();
}

void LogCollapser::emit_all() {
  while (!open_.empty()) emit_front();
}

void LogCollapser::emit_front() {
  Group& g = open_.front();
  out_.clear();
  append_prefixed(out_, g.line, collapsed_prefix(std::move(g.ranks), g.hosts, g.lines));
  by_text_.erase(g.text);
  open_.pop_front();
  ++front_id_;
  emit_(out_);
}

std::string collapsed_prefix(std::vector<int> ranks, const std::set<std::string>& hosts,
                             long long lines) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  if (ranks.size() == 1 && lines == 1 && hosts.size() == 1) {
    return rank_prefix(ranks.front(), *hosts.begin());
  }
  std::string out = "[" + ranks_text(ranks) + " @ ";
  out += hosts_text(hosts);
  if (lines > static_cast<long long>(ranks.size())) out += ", " + std::to_string(lines) + " lines";
  return out + "] ";
}

std::string hosts_text(const std::set<std::string>& hosts) {
  return hosts.size() == 1 ? *hosts.begin() : std::to_string(hosts.size()) + " hosts";
}

}  // namespace dtrain::report
