// NCCL itself, linked directly (libdtrain loads it with dlopen; nccl_comm_test covers that): the
// library has the headers' major version (no GPU needed), and with a GPU a one-rank NCCL allreduce
// is exact.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// "" when a device is usable, else why not.
std::string no_gpu_reason() {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    return "no CUDA device: cudaGetDeviceCount returned " + std::to_string(err) + " (" +
           cudaGetErrorString(err) + ")";
  }
  if (count == 0) return "no CUDA device: cudaGetDeviceCount found 0 devices";
  return "";
}

// The NCCL found at run time (LD_LIBRARY_PATH: a pip wheel, a system package) may be another
// release than the headers; libdtrain's loader accepts the same major version, as NCCL's ABI does.
TEST(Nccl, LibraryHasTheHeadersMajorVersion) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  std::printf("NCCL library %d, headers %d\n", version, NCCL_VERSION_CODE);
  EXPECT_EQ(version / 10000, NCCL_MAJOR)
      << "library " << version << ", headers " << NCCL_VERSION_CODE;
}

TEST(Nccl, UniqueIdNeedsNoGpu) {
  ncclUniqueId id;
  EXPECT_EQ(ncclGetUniqueId(&id), ncclSuccess) << ncclGetLastError(nullptr);
}

TEST(Nccl, OneRankAllreduceIsExact) {
  if (auto reason = no_gpu_reason(); !reason.empty()) GTEST_SKIP() << reason;
  ncclComm_t comm;
  int dev = 0;
  ASSERT_EQ(ncclCommInitAll(&comm, 1, &dev), ncclSuccess);
  const size_t n = 1 << 20;
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<float>(i % 1000);
  float* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(buf, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(ncclAllReduce(buf, buf, n, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<float> back(n);
  ASSERT_EQ(cudaMemcpy(back.data(), buf, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(back, host);
  cudaFree(buf);
  ncclCommDestroy(comm);
}

}  // namespace
