// PosixShm: two mappings of one object see the same bytes; the name can go while the mappings
// stay; failures name the call and the object.
#include "comm/transport/shm/posix_shm.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include "dtrain/dtrain.hpp"

namespace {

using dtrain::runtime::PosixShm;

std::string unique_name() { return "/dtrain-test-" + std::to_string(::getpid()); }

TEST(PosixShm, TwoMappingsShareBytesAndOutliveTheName) {
  const std::string name = unique_name();
  PosixShm created = PosixShm::create(name, 8192);
  PosixShm opened = PosixShm::open(name, 8192);
  PosixShm::unlink(name);
  ASSERT_NE(created.data(), opened.data());
  EXPECT_EQ(created.size(), 8192u);
  EXPECT_EQ(created.data()[8191], 0);  // zero-filled
  std::memcpy(created.data() + 4096, "rank 0 wrote this", 18);
  EXPECT_STREQ(opened.data() + 4096, "rank 0 wrote this");
  PosixShm moved = std::move(opened);
  EXPECT_EQ(opened.data(), nullptr);
  EXPECT_STREQ(moved.data() + 4096, "rank 0 wrote this");
}

TEST(PosixShm, OpeningAnUnlinkedObjectNamesIt) {
  const std::string name = unique_name() + "-gone";
  { PosixShm created = PosixShm::create(name, 4096); }
  PosixShm::unlink(name);
  try {
    PosixShm::open(name, 4096);
    FAIL() << "expected an error";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kSystem);
    EXPECT_EQ(std::string(e.what()), "dtrain: shared memory: shm_open " + name +
                                         " failed: No such file or directory (DTRAIN_SHM=0 "
                                         "allreduces through messages instead)");
  }
}

TEST(PosixShm, CreatingAnExistingNameFails) {
  const std::string name = unique_name() + "-twice";
  PosixShm first = PosixShm::create(name, 4096);
  EXPECT_THROW(PosixShm::create(name, 4096), dtrain::Error);
  PosixShm::unlink(name);
}

}  // namespace
