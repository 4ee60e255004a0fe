// The writer of the commands' output files (cli/output_file.hpp) on a real disk: what
// look_at_output_path finds (FIFOs, devices, sockets, symbolic links, the run's records by any
// name), and that a write replaces only a regular file, whole, through a temporary file beside it
// (issue 45 item 2; issue 44 item 2: one writer for report, timeline and stats --plot).
#include "output_file.hpp"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/errors.hpp"

namespace dtrain::cli {
namespace {
namespace fs = std::filesystem;
using Kind = PathFacts::Kind;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dtrain-output-file-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "run");
    write(dir_ / "run/plan.json", "{\"job\":{}}\n");
    write(dir_ / "run/rank-00000.log", "a log\n");
    write(dir_ / "run/report.html", "old page\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  PathFacts look(const std::string& name) const {
    return look_at_output_path(path(name), {path("run")});
  }
  OutputTarget target_of(const std::string& name) const {
    OutputRequest request;
    request.command = "report";
    request.flag = "-o";
    request.given = path(name);
    request.default_name = "report.html";
    return resolve_output(request, {path("run")});
  }
  // Names in dir_ (and run/) that a writer left behind.
  std::vector<std::string> partials() const {
    std::vector<std::string> found;
    for (const auto& e : fs::recursive_directory_iterator(dir_)) {
      if (e.path().filename().string().find(".partial-") != std::string::npos)
        found.push_back(e.path().string());
    }
    return found;
  }

  fs::path dir_;
};

TEST_F(OutputFileTest, NewRegularAndDirectoryPaths) {
  EXPECT_EQ(look("new.html").kind, Kind::kNew);
  EXPECT_EQ(look("nosuch/new.html").kind, Kind::kNew);  // the write names the missing directory
  write(dir_ / "page.html", "x");
  const PathFacts regular = look("page.html");
  EXPECT_EQ(regular.kind, Kind::kRegular);
  EXPECT_EQ(regular.resolved, "");
  EXPECT_EQ(regular.run_record, "");
  EXPECT_EQ(look("run").kind, Kind::kDirectory);
  fs::create_directory_symlink("run", dir_ / "run-link");
  EXPECT_EQ(look("run-link").kind, Kind::kDirectory);
}

TEST_F(OutputFileTest, FifosAndSocketsAreNamed) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0644), 0) << std::strerror(errno);
  PathFacts facts = look("fifo");
  EXPECT_EQ(facts.kind, Kind::kSpecial);
  EXPECT_EQ(facts.special, "a FIFO (named pipe)");
  // Through a symbolic link too.
  fs::create_symlink("fifo", dir_ / "fifo-link");
  EXPECT_EQ(look("fifo-link").special, "a FIFO (named pipe)");

  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = path("sock");
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  facts = look("sock");
  ::close(fd);
  EXPECT_EQ(facts.kind, Kind::kSpecial);
  EXPECT_EQ(facts.special, "a socket");
}

TEST_F(OutputFileTest, ACharacterDeviceIsNamedAndLeftAlone) {
  // The same device as /dev/null, made in the test's own directory (never /dev/null itself).
  if (::mknod(path("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "cannot make a character device here (mknod: " << std::strerror(errno)
                 << "; needs root with CAP_MKNOD)";
  }
  const PathFacts facts = look("null");
  EXPECT_EQ(facts.kind, Kind::kSpecial);
  EXPECT_EQ(facts.special, "a character device");
  EXPECT_THROW(target_of("null"), UsageError);
  struct stat st {};
  ASSERT_EQ(::lstat(path("null").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_EQ(st.st_rdev, makedev(1, 3));
}

TEST_F(OutputFileTest, SymbolicLinksAreFollowedToARegularFileOrRefused) {
  write(dir_ / "real.html", "old");
  fs::create_symlink("real.html", dir_ / "link.html");
  const PathFacts facts = look("link.html");
  EXPECT_EQ(facts.kind, Kind::kRegular);
  EXPECT_EQ(facts.resolved, fs::canonical(dir_ / "real.html").string());

  fs::create_symlink("nosuch/x.html", dir_ / "dangling.html");
  const PathFacts dangling = look("dangling.html");
  EXPECT_EQ(dangling.kind, Kind::kDanglingSymlink);
  EXPECT_EQ(dangling.link_target, "nosuch/x.html");

  fs::create_symlink("loop.html", dir_ / "loop.html");
  const PathFacts loop = look("loop.html");
  EXPECT_EQ(loop.kind, Kind::kSymlinkLoop);
  EXPECT_EQ(loop.error, std::strerror(ELOOP));
}

TEST_F(OutputFileTest, TheRunsRecordsAreFoundByDeviceAndInode) {
  const std::string plan = path("run/plan.json");
  // By its own name, through `..`, a symbolic link and a hard link.
  for (const std::string name :
       {"run/plan.json", "run/../run/plan.json", "plan-link", "plan-hard"}) {
    if (name == "plan-link") fs::create_symlink(dir_ / "run/plan.json", dir_ / "plan-link");
    if (name == "plan-hard") fs::create_hard_link(dir_ / "run/plan.json", dir_ / "plan-hard");
    const PathFacts facts = look(name);
    EXPECT_EQ(facts.kind, Kind::kRegular) << name;
    EXPECT_EQ(facts.run_record, plan) << name;
    EXPECT_EQ(facts.record_of, path("run")) << name;
  }
  EXPECT_EQ(look("run/rank-00000.log").run_record, path("run/rank-00000.log"));
  // The command's own output is no record; nor is a file of another directory.
  EXPECT_EQ(look("run/report.html").run_record, "");
  write(dir_ / "plan.json", "{}");
  EXPECT_EQ(look("plan.json").run_record, "");
  try {
    target_of("plan-hard");
    FAIL() << "a hard link to plan.json was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "dtrain: report: -o " + path("plan-hard") +
                  ": expected a path that is none of the run's records, got " + plan +
                  ", a record of the run directory " + path("run"));
  }
  EXPECT_EQ(read(dir_ / "run/plan.json"), "{\"job\":{}}\n");
}

TEST_F(OutputFileTest, AWriteReplacesTheFileWholeAndLeavesNoTemporaryFile) {
  write(dir_ / "page.html", "old");
  fs::permissions(dir_ / "page.html", fs::perms::owner_read | fs::perms::owner_write);
  write_file_atomically(target_of("page.html"), "new page");
  EXPECT_EQ(read(dir_ / "page.html"), "new page");
  // It keeps the permissions of the file it replaced.
  EXPECT_EQ(fs::status(dir_ / "page.html").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  write_file_atomically(target_of("fresh.html"), "first");
  EXPECT_EQ(read(dir_ / "fresh.html"), "first");
  EXPECT_TRUE(partials().empty());
}

TEST_F(OutputFileTest, ADirectoryGetsTheDefaultName) {
  const OutputTarget t = target_of("run");
  EXPECT_EQ(t.file, path("run") + "/report.html");
  write_file_atomically(t, "new page");
  EXPECT_EQ(read(dir_ / "run/report.html"), "new page");
}

TEST_F(OutputFileTest, WritingThroughASymbolicLinkKeepsTheLink) {
  fs::create_directories(dir_ / "pages");
  write(dir_ / "pages/real.html", "old");
  fs::create_symlink("pages/real.html", dir_ / "link.html");
  write_file_atomically(target_of("link.html"), "new page");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.html"));
  EXPECT_EQ(read(dir_ / "pages/real.html"), "new page");
  EXPECT_TRUE(partials().empty());
}

TEST_F(OutputFileTest, AnUncommittedOutputLeavesTheEarlierFileAsItWas) {
  write(dir_ / "page.html", "old");
  {
    OutputFile out(target_of("page.html"));
    out.write(std::string(200000, 'x'));  // more than the buffer: some of it reached the disk
    EXPECT_EQ(partials().size(), 1u);
  }  // a failure between the writes and commit()
  EXPECT_EQ(read(dir_ / "page.html"), "old");
  EXPECT_TRUE(partials().empty());
}

TEST_F(OutputFileTest, PiecesArriveInOrder) {
  OutputFile out(target_of("big.json"));
  std::string expected;
  for (int i = 0; i < 20000; ++i) {
    const std::string piece = std::to_string(i) + (i % 1000 == 0 ? std::string(70000, '.') : ",");
    out.write(piece);
    expected += piece;
  }
  out.commit();
  EXPECT_EQ(read(dir_ / "big.json"), expected);
}

TEST_F(OutputFileTest, AMissingDirectoryIsNamedWithTheSystemsReason) {
  try {
    write_file_atomically(target_of("nosuch/page.html"), "x");
    FAIL() << "wrote into a missing directory";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "dtrain: report: -o " + path("nosuch/page.html") +
                                         ": cannot write it: No such file or directory");
  }
}

TEST_F(OutputFileTest, ALinkWhereTheTemporaryFileGoesIsNotFollowed) {
  write(dir_ / "victim", "keep");
  const std::string partial = path("page.html") + ".partial-" + std::to_string(::getpid());
  fs::create_symlink(dir_ / "victim", partial);
  EXPECT_THROW(write_file_atomically(target_of("page.html"), "x"), UsageError);
  EXPECT_EQ(read(dir_ / "victim"), "keep");
  EXPECT_TRUE(fs::is_symlink(partial));  // not ours to remove
}

}  // namespace
}  // namespace dtrain::cli
