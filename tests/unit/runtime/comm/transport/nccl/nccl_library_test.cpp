// The NCCL loader (runtime/comm/transport/nccl/nccl_library.cpp): libraries that cannot be loaded,
// or lack a function libdtrain calls, give an error naming the library, the loader's reason and
// what to do; the real ones load without a GPU. nccl_library.cpp is compiled in (libdtrain's
// internals are hidden).
#include "comm/transport/nccl/nccl_library.hpp"

#include <gtest/gtest.h>

#include <dtrain/dtrain.hpp>
#include <string>

namespace dtrain::runtime {
namespace {

TEST(NcclLibrary, VersionTextFollowsNcclsTwoEncodings) {
  EXPECT_EQ(nccl_version_text(22809), "2.28.9");
  EXPECT_EQ(nccl_version_text(21903), "2.19.3");
  EXPECT_EQ(nccl_version_text(2708), "2.7.8");  // before NCCL 2.9: major*1000
}

#if DTRAIN_HAVE_NCCL

// The message of the Error that load_nccl_api(names) throws ("" when none).
std::string load_error(const NcclLibraryNames& names) {
  try {
    load_nccl_api(names);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Error::Code::kInvalid);
    return e.what();
  }
  return "";
}

void expect_has(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "expected \"" << part << "\" in: " << text;
}

TEST(NcclLibrary, AMissingNcclIsNamedWithTheReasonAndWhatToDo) {
  NcclLibraryNames names = default_nccl_library_names();
  names.nccl = {"libdtrain-test-no-such-nccl.so.2"};
  const std::string msg = load_error(names);
  expect_has(msg, "dtrain: nccl: cannot load NCCL (libdtrain-test-no-such-nccl.so.2: ");
  expect_has(msg, "cannot open shared object file");  // dlerror()'s text
  expect_has(msg, "install it (NVIDIA's libnccl2 package, or pip's nvidia-nccl-cu");
  expect_has(msg, "put the directory holding libnccl.so." + std::to_string(NCCL_MAJOR) +
                      " on LD_LIBRARY_PATH");
}

TEST(NcclLibrary, AMissingCudaRuntimeNamesEveryNameTried) {
  NcclLibraryNames names = default_nccl_library_names();
  names.cudart = {"libdtrain-test-no-such-cudart.so.13", "libdtrain-test-no-such-cudart.so"};
  const std::string msg = load_error(names);
  expect_has(msg,
             "dtrain: nccl: cannot load the CUDA runtime (libdtrain-test-no-such-cudart.so.13: ");
  expect_has(msg, "; libdtrain-test-no-such-cudart.so: ");
  expect_has(msg, "needs the CUDA " + std::to_string(CUDART_VERSION / 1000) + " runtime");
  expect_has(msg, "on LD_LIBRARY_PATH");
}

TEST(NcclLibrary, ALibraryWithoutNcclsFunctionsIsRefusedNamingTheFunction) {
  NcclLibraryNames names = default_nccl_library_names();
  names.nccl = {"libz.so.1"};  // loads, but is not NCCL
  const std::string msg = load_error(names);
  expect_has(msg, "libz.so.1 has no ncclGetVersion (");
  expect_has(msg, "expected NCCL " + nccl_version_text(NCCL_VERSION_CODE) + " or a newer " +
                      std::to_string(NCCL_MAJOR) + ".x");
}

TEST(NcclLibrary, TheInstalledLibrariesLoadWithoutAGpu) {
  const NcclApi api = load_nccl_api(default_nccl_library_names());
  EXPECT_NE(api.nccl_file.find("libnccl.so"), std::string::npos) << api.nccl_file;
  EXPECT_NE(api.cudart_file.find("libcudart.so"), std::string::npos) << api.cudart_file;
  EXPECT_EQ(api.nccl_version / 10000, NCCL_MAJOR);
  ASSERT_NE(api.ncclGetErrorString, nullptr);
  EXPECT_STREQ(api.ncclGetErrorString(ncclSuccess), "no error");
  ASSERT_NE(api.cudaMalloc, nullptr);
  const dtrain::NcclLibrary lib = dtrain::nccl_library();
  EXPECT_EQ(lib.version, nccl_version_text(api.nccl_version));
  EXPECT_EQ(lib.file, api.nccl_file);
}

#else

TEST(NcclLibrary, ABuildWithoutNcclSaysSo) {
  try {
    dtrain::nccl_library();
    ADD_FAILURE() << "no error in a build without NCCL";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("built without NCCL"), std::string::npos) << e.what();
  }
}

#endif

}  // namespace
}  // namespace dtrain::runtime
