// The k-way merge behind `dtrain logs`: every rank's log lines in timestamp order, streamed with a
// bounded buffer per rank, so memory depends on the number of ranks (and the longest line), never
// on the number of lines. Ties (equal timestamps) keep rank order, then file order, as
// `sort -m -s -k1,1` does over the files in rank order. A line without a timestamp (text a program
// wrote without a newline for a long time, a line cut by a crash) sorts with the line before it.
// Pure: bytes come from a ByteSource the caller implements (a file, a string in tests).
#pragma once

#include <regex.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/log_line.hpp"

namespace dtrain::report {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Copies up to `capacity` bytes into `buffer`; 0 means nothing more is available now (the end
  // of a finished file, or of what a running rank has written so far).
  virtual std::size_t read(char* buffer, std::size_t capacity) = 0;
};

// --grep: a POSIX extended regular expression (as `grep -E`) searched in a line's text.
class LineMatcher {
 public:
  // Throws UsageError naming the pattern and the reason when it does not compile.
  explicit LineMatcher(const std::string& pattern);
  ~LineMatcher();
  LineMatcher(const LineMatcher&) = delete;
  LineMatcher& operator=(const LineMatcher&) = delete;
  bool matches(std::string_view text) const;

 private:
  regex_t regex_;
};

// A --since/--until value (records::parse_rfc3339: "2026-11-22T10:00:00Z", an optional fraction of
// up to 6 digits, "Z" or a "+HH:MM"/"-HH:MM" offset, a space for the "T"). Throws UsageError
// naming the command (`logs`, `timeline`), `flag`, what was expected and what was found.
std::int64_t parse_time_flag(std::string_view text, std::string_view command,
                             std::string_view flag);

// Which lines to keep: since <= time <= until (microseconds since the epoch), text matching grep.
struct LineFilter {
  std::optional<std::int64_t> since;
  std::optional<std::int64_t> until;
  const LineMatcher* grep = nullptr;  // not owned; null keeps every line
};

// One rank's lines, one at a time, out of a growing buffer.
class LineCursor {
 public:
  LineCursor(std::unique_ptr<ByteSource> source, std::size_t buffer_bytes);

  // Moves to the next complete line that passes `filter`. With `at_end` the source is finished,
  // so trailing bytes without a '\n' make a last line. False when no such line is available now;
  // a partial line stays buffered for the next call.
  bool next(const LineFilter& filter, bool at_end);
  // The next complete line as it is, with no filter and no timestamp read (key() unchanged): for
  // files that are not logs (metric records), where reading a log timestamp at each line was a
  // sixth of the readers' time.
  bool next_raw(bool at_end);

  std::string_view line() const { return line_; }  // without the '\n'; valid until next()
  std::int64_t key() const { return key_; }        // microseconds; see the header comment

 private:
  std::optional<std::int64_t> line_time();

  std::unique_ptr<ByteSource> source_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_;
  std::size_t begin_ = 0;  // first byte not yet returned
  std::size_t end_ = 0;    // one past the last byte read
  std::string_view line_;
  std::int64_t key_ = std::numeric_limits<std::int64_t>::min();
  // Consecutive lines of a log nearly always share "YYYY-MM-DDTHH:MM:"; its value is kept so most
  // lines only parse their seconds and microseconds.
  char minute_text_[17] = {};
  std::int64_t minute_micros_ = 0;
};

struct MergeInput {
  int rank = 0;
  std::string host;  // "?" when the log does not say
  std::unique_ptr<ByteSource> source;
};

class LogMerger {
 public:
  // `inputs` in rank order (the tie order); each gets a buffer of `buffer_bytes`.
  LogMerger(std::vector<MergeInput> inputs, LineFilter filter, std::size_t buffer_bytes);

  // A log that appeared later (--follow); it sorts after the earlier inputs on ties.
  void add_input(MergeInput input);

  // Calls emit(std::size_t input, std::string_view line) for every line available now, in merged
  // order (`input` indexes inputs()); returns how many. With `at_end` the sources are finished (see
  // LineCursor::next).
  template <typename Emit>
  std::size_t merge_available(bool at_end, Emit&& emit);

  const std::vector<MergeInput>& inputs() const { return inputs_; }

 private:
  // The heap holds the keys next to the indexes so comparisons stay in cache.
  struct Entry {
    std::int64_t key;
    std::size_t cursor;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.key < b.key || (a.key == b.key && a.cursor < b.cursor);
  }
  void sift_down();
  void push(std::size_t cursor);

  std::vector<MergeInput> inputs_;
  std::vector<LineCursor> cursors_;
  std::vector<Entry> heap_;
  LineFilter filter_;
  std::size_t buffer_bytes_;
};

template <typename Emit>
std::size_t LogMerger::merge_available(bool at_end, Emit&& emit) {
  heap_.clear();
  for (std::size_t i = 0; i < cursors_.size(); ++i) {
    if (cursors_[i].next(filter_, at_end)) push(i);
  }
  std::size_t emitted = 0;
  while (!heap_.empty()) {
    const std::size_t top = heap_.front().cursor;
    emit(top, cursors_[top].line());
    ++emitted;
    if (cursors_[top].next(filter_, at_end)) {
      heap_.front().key = cursors_[top].key();
    } else {
      heap_.front() = heap_.back();
      heap_.pop_back();
    }
    if (!heap_.empty()) sift_down();
  }
  return emitted;
}

// The line as `dtrain logs` prints it: "<timestamp> [<rank>@<host>] <text>", or the prefix first
// when the line has no timestamp. Appends to `out` (the caller's output buffer).
void append_prefixed(std::string& out, std::string_view line, std::string_view prefix);

// "[3@node01] " for a rank and its host.
std::string rank_prefix(int rank, std::string_view host);

// --tail N: the last N lines seen, kept in a ring of reused strings.
class LastLines {
 public:
  explicit LastLines(std::size_t n) : ring_(n) {}
  void add(std::string_view line);
  std::vector<std::string> lines() const;  // oldest first

 private:
  std::vector<std::string> ring_;
  std::size_t next_ = 0;
  std::size_t count_ = 0;
};

// Parses a --rank value: "3", "0-3,7", "0,2-5" (sorted, without duplicates). Throws
// UsageError naming the flag and the bad part.
std::vector<int> parse_rank_list(std::string_view text);

}  // namespace dtrain::report
