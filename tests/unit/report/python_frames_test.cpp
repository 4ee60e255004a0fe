// Python frames read from an interpreter's memory (report/python_frames.hpp), against a fake
// memory laid out as CPython 3.11 lays out its runtime, threads, frames, code objects and strs.
#include "report/python_frames.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

// Bytes at addresses; a read of anything not written fails, as an unmapped page does.
class FakeMemory {
 public:
  void put64(std::uint64_t address, std::uint64_t value) { put(address, &value, sizeof value); }
  void put(std::uint64_t address, const void* bytes, std::size_t size) {
    const auto* b = static_cast<const unsigned char*>(bytes);
    for (std::size_t i = 0; i < size; ++i) bytes_[address + i] = b[i];
  }
  // A compact ASCII str (PyASCIIObject: length at 16, state at 32, the text at 48).
  void put_str(std::uint64_t address, const std::string& text) {
    put64(address + 16, text.size());
    const std::uint32_t state = (1u << 2) | (1u << 5) | (1u << 6);  // kind 1, compact, ascii
    put(address + 32, &state, sizeof state);
    put(address + 48, text.data(), text.size());
  }
  dtrain::report::Memory reader() const {
    return [this](std::uint64_t address, void* out, std::size_t size) {
      auto* o = static_cast<unsigned char*>(out);
      for (std::size_t i = 0; i < size; ++i) {
        const auto it = bytes_.find(address + i);
        if (it == bytes_.end()) return false;
        o[i] = it->second;
      }
      return true;
    };
  }

 private:
  std::map<std::uint64_t, unsigned char> bytes_;
};

constexpr std::uint64_t kRuntime = 0x1000;

// One thread whose frames are main (train.py) calling stuck_here (/src/stuck.py).
FakeMemory one_thread() {
  FakeMemory m;
  m.put64(kRuntime + 40, 0x2000);  // interpreters.head
  m.put64(0x2000 + 16, 0x3000);    // threads.head
  m.put64(0x3000 + 8, 0);          // next thread: none
  m.put64(0x3000 + 56, 0x4000);    // cframe
  m.put64(0x4000 + 8, 0x5000);     // current_frame: the innermost
  m.put64(0x5000 + 32, 0x6000);    // its code
  m.put64(0x5000 + 48, 0x5100);    // previous: its caller
  m.put64(0x5100 + 32, 0x6100);
  m.put64(0x5100 + 48, 0);
  m.put64(0x6000 + 120, 0x7000);  // co_name
  m.put64(0x6000 + 112, 0x7100);  // co_filename
  m.put64(0x6100 + 120, 0x7200);
  m.put64(0x6100 + 112, 0x7300);
  m.put_str(0x7000, "stuck_here");
  m.put_str(0x7100, "/src/stuck.py");
  m.put_str(0x7200, "main");
  m.put_str(0x7300, "train.py");
  return m;
}

TEST(PythonFrames, EachThreadsFramesOutermostFirstUnderThePythonRoot) {
  const FakeMemory m = one_thread();
  EXPECT_EQ(dtrain::report::read_python_threads(m.reader(), kRuntime),
            (std::vector<std::vector<std::string>>{
                {"(Python)", "main (train.py)", "stuck_here (stuck.py)"}}));
}

TEST(PythonFrames, AChainThatLoopsOrBreaksEndsAndNothingReadableIsNoThread) {
  FakeMemory m = one_thread();
  m.put64(0x5100 + 48, 0x5000);  // a torn read: the caller's caller is the innermost again
  const auto threads = dtrain::report::read_python_threads(m.reader(), kRuntime);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0].size(), 1u + 256u);  // the root and at most 256 frames
  FakeMemory broken = one_thread();
  broken.put64(0x5000 + 48, 0x9999000);  // a caller at an address that cannot be read
  EXPECT_EQ(dtrain::report::read_python_threads(broken.reader(), kRuntime),
            (std::vector<std::vector<std::string>>{{"(Python)", "stuck_here (stuck.py)"}}));
  EXPECT_TRUE(dtrain::report::read_python_threads(FakeMemory().reader(), kRuntime).empty());
}

TEST(PythonFrames, OnlyTheLayoutOf311IsRead) {
  EXPECT_TRUE(dtrain::report::python_layout_known(0x030B07F0));  // 3.11.7
  EXPECT_FALSE(dtrain::report::python_layout_known(0x030C00F0));
  EXPECT_EQ(dtrain::report::python_version_text(0x030C00F0), "3.12");
}

}  // namespace
