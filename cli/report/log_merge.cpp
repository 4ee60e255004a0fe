#include "report/log_merge.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "common/errors.hpp"

namespace dtrain::report {

std::int64_t parse_time_flag(std::string_view text, std::string_view command,
                             std::string_view flag) {
  if (const auto micros = records::parse_rfc3339(text)) return *micros;
  throw UsageError("dtrain: " + std::string(command) + ": " + std::string(flag) +
                   ": expected an RFC 3339 time such as 2026-11-22T10:00:00Z or "
                   "2026-11-22T10:00:00.5+01:00, got \"" +
                   std::string(text) + "\"");
}

LineMatcher::LineMatcher(const std::string& pattern) {
  const int rc = regcomp(&regex_, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc != 0) {
    char reason[256];
    regerror(rc, &regex_, reason, sizeof reason);
    throw UsageError("dtrain: logs: --grep \"" + pattern +
                     "\": expected a POSIX extended regular expression (grep -E); " + reason);
  }
}

LineMatcher::~LineMatcher() { regfree(&regex_); }

bool LineMatcher::matches(std::string_view text) const {
  // REG_STARTEND (glibc, BSD) searches the view in place, without a NUL-terminated copy.
  regmatch_t range[1];
  range[0].rm_so = 0;
  range[0].rm_eo = static_cast<regoff_t>(text.size());
  return regexec(&regex_, text.data(), 1, range, REG_STARTEND) == 0;
}

LineCursor::LineCursor(std::unique_ptr<ByteSource> source, std::size_t buffer_bytes)
    : source_(std::move(source)),
      buffer_(new char[std::max<std::size_t>(buffer_bytes, 64)]),
      capacity_(std::max<std::size_t>(buffer_bytes, 64)) {}

bool LineCursor::next_raw(bool at_end) {
  for (;;) {
    if (begin_ < end_) {
      const char* start = buffer_.get() + begin_;
      const auto* nl = static_cast<const char*>(std::memchr(start, '\n', end_ - begin_));
      if (nl != nullptr) {
        line_ = std::string_view(start, static_cast<std::size_t>(nl - start));
        begin_ = static_cast<std::size_t>(nl - buffer_.get()) + 1;
        return true;
      }
    }
    // No whole line buffered: keep the partial one at the front and read more behind it.
    if (begin_ > 0) {
      std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == capacity_) {
      // A line longer than the buffer: grow for it (bounded by the longest line, which
      // run-rank caps at 1 MiB).
      std::unique_ptr<char[]> bigger(new char[capacity_ * 2]);
      std::memcpy(bigger.get(), buffer_.get(), end_);
      buffer_ = std::move(bigger);
      capacity_ *= 2;
    }
    const std::size_t got = source_->read(buffer_.get() + end_, capacity_ - end_);
    if (got == 0) {
      if (at_end && end_ > begin_) {
        line_ = std::string_view(buffer_.get() + begin_, end_ - begin_);
        begin_ = end_ = 0;
        return true;
      }
      return false;
    }
    end_ += got;
  }
}

std::optional<std::int64_t> LineCursor::line_time() {
  const std::string_view l = line_;
  if (l.size() > records::kLogTimestampWidth && std::memcmp(l.data(), minute_text_, 17) == 0 &&
      l[26] == 'Z' && l[27] == ' ' && l[19] == '.') {
    unsigned v[8];
    static constexpr std::size_t kPos[8] = {17, 18, 20, 21, 22, 23, 24, 25};
    for (int i = 0; i < 8; ++i) {
      v[i] = static_cast<unsigned char>(l[kPos[i]]) - '0';
      if (v[i] > 9) return records::parse_log_timestamp(l);
    }
    const unsigned seconds = v[0] * 10 + v[1];
    const unsigned micros =
        ((((v[2] * 10 + v[3]) * 10 + v[4]) * 10 + v[5]) * 10 + v[6]) * 10 + v[7];
    if (seconds <= 60) return minute_micros_ + seconds * 1000000LL + micros;
  }
  const auto t = records::parse_log_timestamp(l);
  if (t) {
    std::memcpy(minute_text_, l.data(), 17);
    const std::int64_t within_minute =
        ((l[17] - '0') * 10 + (l[18] - '0')) * 1000000LL + (*t % 1000000 + 1000000) % 1000000;
    minute_micros_ = *t - within_minute;
  }
  return t;
}

bool LineCursor::next(const LineFilter& filter, bool at_end) {
  while (next_raw(at_end)) {
    const auto stamp = line_time();
    if (stamp) key_ = *stamp;
    if (filter.since && key_ < *filter.since) continue;
    if (filter.until && key_ > *filter.until) continue;
    if (filter.grep != nullptr &&
        !filter.grep->matches(stamp ? line_.substr(records::kLogTimestampWidth + 1) : line_)) {
      continue;
    }
    return true;
  }
  return false;
}

LogMerger::LogMerger(std::vector<MergeInput> inputs, LineFilter filter, std::size_t buffer_bytes)
    : filter_(filter), buffer_bytes_(buffer_bytes) {
  inputs_.reserve(inputs.size());
  cursors_.reserve(inputs.size());
  for (auto& in : inputs) add_input(std::move(in));
}

void LogMerger::add_input(MergeInput input) {
  cursors_.emplace_back(std::move(input.source), buffer_bytes_);
  inputs_.push_back(std::move(input));
}

void LogMerger::push(std::size_t cursor) {
  heap_.push_back({cursors_[cursor].key(), cursor});
  std::size_t pos = heap_.size() - 1;
  while (pos > 0) {
    const std::size_t parent = (pos - 1) / 2;
    if (!before(heap_[pos], heap_[parent])) break;
    std::swap(heap_[pos], heap_[parent]);
    pos = parent;
  }
}

void LogMerger::sift_down() {
  const std::size_t n = heap_.size();
  std::size_t pos = 0;
  const Entry item = heap_[0];
  for (;;) {
    std::size_t child = 2 * pos + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
    if (!before(heap_[child], item)) break;
    heap_[pos] = heap_[child];
    pos = child;
  }
  heap_[pos] = item;
}

std::string rank_prefix(int rank, std::string_view host) {
  return "[" + std::to_string(rank) + "@" + std::string(host) + "] ";
}

void append_prefixed(std::string& out, std::string_view line, std::string_view prefix) {
  // The shape is enough here: the merge has already parsed the timestamp.
  if (line.size() > records::kLogTimestampWidth && line[records::kLogTimestampWidth - 1] == 'Z' &&
      line[records::kLogTimestampWidth] == ' ' && line[4] == '-') {
    out.append(line.data(), records::kLogTimestampWidth + 1);
    out.append(prefix);
    out.append(line.substr(records::kLogTimestampWidth + 1));
  } else {
    out.append(prefix);
    out.append(line);
  }
  out.push_back('\n');
}

void LastLines::add(std::string_view line) {
  if (ring_.empty()) return;
  ring_[next_].assign(line);
  next_ = (next_ + 1) % ring_.size();
  count_ = std::min(count_ + 1, ring_.size());
}

std::vector<std::string> LastLines::lines() const {
  std::vector<std::string> out;
  out.reserve(count_);
  const std::size_t first =
      (next_ + ring_.size() - count_) % std::max<std::size_t>(ring_.size(), 1);
  for (std::size_t i = 0; i < count_; ++i) out.push_back(ring_[(first + i) % ring_.size()]);
  return out;
}

std::vector<int> parse_rank_list(std::string_view text) {
  const auto bad = [&](std::string_view part) {
    return UsageError("dtrain: logs: --rank: expected ranks such as 3 or 0-3,7, got \"" +
                      std::string(part) + "\" in \"" + std::string(text) + "\"");
  };
  const auto number = [&](std::string_view s, std::string_view part) {
    int v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v < 0) throw bad(part);
    return v;
  };
  std::vector<int> ranks;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view part = text.substr(pos, comma - pos);
    const std::size_t dash = part.find('-');
    if (dash == std::string_view::npos) {
      ranks.push_back(number(part, part));
    } else {
      const int lo = number(part.substr(0, dash), part);
      const int hi = number(part.substr(dash + 1), part);
      if (hi < lo || hi - lo > 1000000) throw bad(part);
      for (int r = lo; r <= hi; ++r) ranks.push_back(r);
    }
    pos = comma + 1;
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

}  // namespace dtrain::report
