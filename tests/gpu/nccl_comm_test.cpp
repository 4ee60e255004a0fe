// libdtrain's NCCL communicator (Context::device_comm): one rank, its unique id through the
// bootstrap store, device allreduce exact for float32 and bfloat16. Without a GPU, the tests that
// need one skip with the reason, and device_comm() must fail with a message saying so.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <dtrain/dtrain.hpp>
#include <string>
#include <vector>

namespace {

std::string no_gpu_reason() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    return "no CUDA device: cudaGetDeviceCount returned " + std::to_string(err) + " (" +
           cudaGetErrorString(err) + ")";
  }
  if (count == 0) return "no CUDA device: cudaGetDeviceCount found 0 devices";
  return "";
}

dtrain::Context bare_context() {
  unsetenv("PMIX_NAMESPACE");
  unsetenv("PMIX_RANK");
  unsetenv("DTRAIN_BOOTSTRAP");
  return dtrain::init();
}

TEST(NcclComm, WithoutAGpuDeviceCommSaysWhy) {
  if (no_gpu_reason().empty()) GTEST_SKIP() << "a GPU is visible: nothing to refuse";
  dtrain::Context ctx = bare_context();
  try {
    ctx.device_comm();
    ADD_FAILURE() << "no error without a GPU";
  } catch (const dtrain::Error& e) {
    EXPECT_EQ(e.code(), dtrain::Error::Code::kInvalid);
    EXPECT_NE(std::string(e.what()).find("dtrain: nccl: no CUDA device"), std::string::npos)
        << e.what();
  }
}

template <typename T>
std::vector<T> device_roundtrip(dtrain::Comm& comm, const std::vector<T>& host, dtrain::DType t,
                                dtrain::ReduceOp op) {
  T* buf = nullptr;
  EXPECT_EQ(cudaMalloc(&buf, host.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(buf, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  comm.allreduce(buf, buf, host.size(), t, op);
  std::vector<T> back(host.size());
  EXPECT_EQ(cudaMemcpy(back.data(), buf, host.size() * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  cudaFree(buf);
  return back;
}

TEST(NcclComm, OneRankDeviceAllreduceIsExact) {
  if (auto reason = no_gpu_reason(); !reason.empty()) GTEST_SKIP() << reason;
  dtrain::Context ctx = bare_context();
  dtrain::Comm& dev = ctx.device_comm();
  EXPECT_EQ(dev.backend(), "nccl");
  std::vector<float> f(1 << 20);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>(i % 1000);
  EXPECT_EQ(device_roundtrip(dev, f, dtrain::DType::kFloat32, dtrain::ReduceOp::kSum), f);
  EXPECT_EQ(device_roundtrip(dev, f, dtrain::DType::kFloat32, dtrain::ReduceOp::kAvg), f);
  // bfloat16 bit patterns of small integers (exact in 8 mantissa bits).
  std::vector<std::uint16_t> b(4096);
  for (std::size_t i = 0; i < b.size(); ++i) {
    const float x = static_cast<float>(i % 200);
    std::uint32_t u = 0;
    std::memcpy(&u, &x, 4);
    b[i] = static_cast<std::uint16_t>(u >> 16);
  }
  EXPECT_EQ(device_roundtrip(dev, b, dtrain::DType::kBFloat16, dtrain::ReduceOp::kSum), b);
  dev.barrier();
}

}  // namespace
