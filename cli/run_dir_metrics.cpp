// The run's metric records (rank-NNNNN.jsonl), read for `stats`, `report`, `timeline` and `logs
// --hang` / `--first-error`: run_dir.hpp's reader of them, apart from the other files. The files
// are parsed on a small pool of threads (ordered_fanout.hpp: why a pool) and their records handed
// to the caller in rank order, with a progress line on a terminal when it takes a while.
#include <filesystem>

#include "ordered_fanout.hpp"
#include "progress_line.hpp"
#include "records/metric_record.hpp"
#include "run_dir.hpp"

namespace dtrain::cli {
namespace fs = std::filesystem;

void for_each_metric_record(const std::string& run_dir,
                            const std::function<void(const records::MetricRecord&)>& each) {
  const auto files = list_metric_files(run_dir);
  const auto parse = [&](std::size_t i, const OrderedFanout<records::MetricRecord>::Sink& sink) {
    const RankFile& f = files[i];
    const std::string name = fs::path(f.path).filename().string();
    long long lineno = 0;
    for_each_line(f.path, [&](std::string_view line) {
      ++lineno;
      if (line.empty()) return;
      // The line's place, made only for the general parser and for an error: most lines of a
      // large run take the fast path (records::scan_metric_record), where it would cost an
      // allocation a line.
      const auto where = [&] { return f.path + ":" + std::to_string(lineno); };
      // The pool's slot, holding an earlier record (ordered_fanout.hpp: why): the fast path
      // overwrites every field a step or collective record has, the parser the whole record.
      records::MetricRecord& record = sink.next();
      if (!records::scan_metric_record(line, record)) {
        record = records::parse_metric_record(line, where());
      }
      // A record filed under another rank's name (a copied or renamed file) would be counted
      // twice for one rank and not at all for the other.
      if (record.rank != f.rank) {
        throw records::MetricFormatError("dtrain: " + where() + ": expected rank " +
                                         std::to_string(f.rank) + " (as the file name " + name +
                                         " says), got \"rank\": " + std::to_string(record.rank));
      }
    });
  };
  ProgressLine progress("metric files", files.size());
  std::size_t current = 0;
  OrderedFanout<records::MetricRecord>::run(files.size(), reader_threads(), parse,
                                            [&](std::size_t i, records::MetricRecord& record) {
                                              if (i != current) progress.update(current = i);
                                              each(record);
                                            });
}

}  // namespace dtrain::cli
