// NVML loaded with dlopen (runtime/resources/nvml_library.hpp) where it is absent or not NVML:
// errors that name the library and the loader's reason.
#include "resources/nvml_library.hpp"

#include <gtest/gtest.h>

#include <dtrain/dtrain.hpp>
#include <string>

namespace dtrain::runtime {
namespace {

TEST(Nvml, AMissingLibraryIsNamedWithTheLoadersReason) {
  try {
    load_nvml_api({"libdtrain-test-no-such-nvidia-ml.so.1"});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), Error::Code::kInvalid);
    EXPECT_NE(msg.find("dtrain: nvml: cannot load NVIDIA's management library "
                       "(libdtrain-test-no-such-nvidia-ml.so.1: "),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("cannot open shared object file"), std::string::npos) << msg;
  }
}

TEST(Nvml, ALibraryWithoutNvmlsFunctionsIsRefusedNamingTheFunction) {
  try {
    load_nvml_api({"libz.so.1"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("libz.so.1 has no nvmlInit_v2 ("), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace dtrain::runtime
