// Where an output flag may write (cli/output_path.hpp), decided on a table of what each path names:
// no disk. Issue 45 item 2: `report -o` renamed its page over whatever the path was (a device
// node, a FIFO, a symbolic link, the run's own plan.json), and `-o DIR` failed with a raw rename
// error.
#include "output_path.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "common/errors.hpp"

namespace dtrain::cli {
namespace {

using Kind = PathFacts::Kind;

// A disk of paths and what they name; anything else is new. Records each path looked at.
struct FakeDisk {
  std::map<std::string, PathFacts> paths;
  std::vector<std::string> looked;

  PathFacts operator()(const std::string& path) {
    looked.push_back(path);
    auto it = paths.find(path);
    return it == paths.end() ? PathFacts{} : it->second;
  }
  void add(const std::string& path, Kind kind) { paths[path].kind = kind; }
};

OutputRequest report_request(std::optional<std::string> given) {
  OutputRequest r;
  r.command = "report";
  r.flag = "-o";
  r.given = std::move(given);
  r.default_path = "runs/x/report.html";
  r.default_name = "report.html";
  r.standard_output_allowed = true;
  return r;
}

OutputRequest plot_request(std::string given) {
  OutputRequest r;
  r.command = "stats";
  r.flag = "--plot";
  r.given = std::move(given);
  return r;
}

// choose_output's refusal, "" when it accepted.
std::string refusal(const OutputRequest& request, FakeDisk& disk) {
  try {
    choose_output(request, std::ref(disk));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ChooseOutput, ANewPathIsWrittenAsGiven) {
  FakeDisk disk;
  const OutputTarget t = choose_output(report_request("page.html"), std::ref(disk));
  EXPECT_FALSE(t.standard_output);
  EXPECT_EQ(t.file, "page.html");
  EXPECT_EQ(t.shown, "page.html");
  EXPECT_EQ(t.subject, "dtrain: report: -o page.html");
  EXPECT_FALSE(t.replaces_file);
}

TEST(ChooseOutput, WithoutTheFlagTheDefaultPathIsLookedAtToo) {
  FakeDisk disk;
  disk.add("runs/x/report.html", Kind::kRegular);
  const OutputTarget t = choose_output(report_request(std::nullopt), std::ref(disk));
  EXPECT_EQ(t.file, "runs/x/report.html");
  EXPECT_EQ(t.subject, "dtrain: report: runs/x/report.html");
  EXPECT_TRUE(t.replaces_file);
  disk.paths["runs/x/report.html"].kind = Kind::kSpecial;
  disk.paths["runs/x/report.html"].special = "a FIFO (named pipe)";
  EXPECT_EQ(refusal(report_request(std::nullopt), disk),
            "dtrain: report: runs/x/report.html: expected a regular file, a new path or a "
            "directory (for report.html in it), got a FIFO (named pipe); for standard output "
            "give -o -");
}

TEST(ChooseOutput, DevicesFifosAndSocketsAreRefusedNamingThePathAndWhatItIs) {
  for (const std::string kind :
       {"a character device", "a block device", "a FIFO (named pipe)", "a socket"}) {
    FakeDisk disk;
    disk.add("null", Kind::kSpecial);
    disk.paths["null"].special = kind;
    EXPECT_EQ(refusal(report_request("null"), disk),
              "dtrain: report: -o null: expected a regular file, a new path or a directory (for "
              "report.html in it), got " +
                  kind + "; for standard output give -o -");
  }
}

TEST(ChooseOutput, ADirectoryMeansTheDefaultNameInIt) {
  FakeDisk disk;
  disk.add("out", Kind::kDirectory);
  OutputTarget t = choose_output(report_request("out"), std::ref(disk));
  EXPECT_EQ(t.file, "out/report.html");
  EXPECT_EQ(t.shown, "out/report.html");
  EXPECT_EQ(t.subject, "dtrain: report: -o out: out/report.html");
  EXPECT_EQ(disk.looked, (std::vector<std::string>{"out", "out/report.html"}));
  // A trailing slash is not doubled.
  disk.add("out/", Kind::kDirectory);
  t = choose_output(report_request("out/"), std::ref(disk));
  EXPECT_EQ(t.file, "out/report.html");
}

TEST(ChooseOutput, TheNameInADirectoryIsLookedAtInTurnOnce) {
  FakeDisk disk;
  disk.add("out", Kind::kDirectory);
  disk.add("out/report.html", Kind::kDirectory);
  EXPECT_EQ(refusal(report_request("out"), disk),
            "dtrain: report: -o out: out/report.html: expected a regular file, a new path or a "
            "directory (for report.html in it), got a directory");
  EXPECT_EQ(disk.looked.size(), 2u);
  disk.add("out/report.html", Kind::kRegular);
  disk.paths["out/report.html"].run_record = "out/report.html";  // nonsense, but checked
  disk.paths["out/report.html"].record_of = "out";
  EXPECT_NE(refusal(report_request("out"), disk), "");
}

TEST(ChooseOutput, AFlagWithoutADefaultNameRefusesADirectory) {
  FakeDisk disk;
  disk.add("plots", Kind::kDirectory);
  EXPECT_EQ(refusal(plot_request("plots"), disk),
            "dtrain: stats: --plot plots: expected a regular file or a new path, got a directory");
  disk.add("fifo", Kind::kSpecial);
  disk.paths["fifo"].special = "a FIFO (named pipe)";
  // No standard output to suggest.
  EXPECT_EQ(refusal(plot_request("fifo"), disk),
            "dtrain: stats: --plot fifo: expected a regular file or a new path, got a FIFO (named "
            "pipe)");
}

TEST(ChooseOutput, ASymlinkToARegularFileIsFollowed) {
  FakeDisk disk;
  disk.add("link.html", Kind::kRegular);
  disk.paths["link.html"].resolved = "/home/u/pages/real.html";
  const OutputTarget t = choose_output(report_request("link.html"), std::ref(disk));
  EXPECT_EQ(t.file, "/home/u/pages/real.html");
  EXPECT_EQ(t.shown, "link.html");
  EXPECT_TRUE(t.replaces_file);
}

TEST(ChooseOutput, DanglingSymlinksAndLoopsAreRefused) {
  FakeDisk disk;
  disk.add("dangling", Kind::kDanglingSymlink);
  disk.paths["dangling"].link_target = "/nosuch/x.html";
  EXPECT_EQ(refusal(report_request("dangling"), disk),
            "dtrain: report: -o dangling: expected a regular file, a new path or a directory (for "
            "report.html in it), got a symbolic link to nothing (/nosuch/x.html)");
  disk.add("loop", Kind::kSymlinkLoop);
  disk.paths["loop"].error = "Too many levels of symbolic links";
  EXPECT_EQ(refusal(report_request("loop"), disk),
            "dtrain: report: -o loop: expected a regular file, a new path or a directory (for "
            "report.html in it), got a symbolic link loop (Too many levels of symbolic links)");
  disk.add("locked/x", Kind::kUnreadable);
  disk.paths["locked/x"].error = "Permission denied";
  EXPECT_EQ(refusal(report_request("locked/x"), disk),
            "dtrain: report: -o locked/x: expected a regular file, a new path or a directory (for "
            "report.html in it), got a path that cannot be looked at (Permission denied)");
}

TEST(ChooseOutput, ARunRecordIsRefusedByWhateverNameReachesIt) {
  FakeDisk disk;
  disk.add("p.html", Kind::kRegular);
  disk.paths["p.html"].run_record = "runs/x/plan.json";
  disk.paths["p.html"].record_of = "runs/x";
  EXPECT_EQ(refusal(report_request("p.html"), disk),
            "dtrain: report: -o p.html: expected a path that is none of the run's records, got "
            "runs/x/plan.json, a record of the run directory runs/x");
}

TEST(ChooseOutput, DashIsStandardOutputWhereAllowedAndAFileNameElsewhere) {
  FakeDisk disk;
  const OutputTarget t = choose_output(report_request("-"), std::ref(disk));
  EXPECT_TRUE(t.standard_output);
  EXPECT_EQ(t.shown, "standard output");
  EXPECT_TRUE(disk.looked.empty());
  const OutputTarget plot = choose_output(plot_request("-"), std::ref(disk));
  EXPECT_FALSE(plot.standard_output);
  EXPECT_EQ(plot.file, "-");
}

TEST(ChooseOutput, AnEmptyValueIsRefused) {
  FakeDisk disk;
  EXPECT_EQ(refusal(report_request(""), disk),
            "dtrain: report: -o: expected a file path, got an empty value (leave -o out for "
            "runs/x/report.html)");
  EXPECT_EQ(refusal(plot_request(""), disk),
            "dtrain: stats: --plot: expected a file path, got an empty value");
  EXPECT_TRUE(disk.looked.empty());
}

TEST(IsRunRecordName, TheRunsRecordsButNotTheCommandsOutputs) {
  for (const char* name : {"job.yaml", "launch.sh", "mpijob.yaml", "plan.json", "exit-status",
                           "attempts.jsonl", "checkpoints.jsonl", "job-end.jsonl", "rank-00000.log",
                           "rank-00003.jsonl", "rank-123456.log", "pi-7.out"}) {
    EXPECT_TRUE(is_run_record_name(name)) << name;
  }
  for (const char* name : {"report.html", "trace.json", "notes.txt", "rank-0.log", "rank-00000.txt",
                           "plan.json.bak", ".out"}) {
    EXPECT_FALSE(is_run_record_name(name)) << name;
  }
}

}  // namespace
}  // namespace dtrain::cli
