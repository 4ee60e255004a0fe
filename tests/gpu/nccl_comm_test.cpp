// libdtrain's NCCL communicator (Context::device_comm) through its loader: this program does not
// link NCCL, libdtrain loads it with dlopen on first use. One rank, its unique id through the
// bootstrap store; device collectives exact for float32 and bfloat16. Without a GPU, the tests that
// need one skip with the reason, and device_comm() must fail with a message saying so; no test
// skips when a GPU is visible.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <link.h>
#include <nccl.h>  // NCCL_MAJOR only: nothing of NCCL is linked
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <dtrain/dtrain.hpp>
#include <string>
#include <vector>

namespace {

// Whether a library whose path contains `part` is loaded in this process.
bool loaded(const char* part) {
  struct Search {
    const char* part;
    bool found;
  } search{part, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_name != nullptr && std::strstr(info->dlpi_name, s->part) != nullptr) {
          s->found = true;
        }
        return 0;
      },
      &search);
  return search.found;
}

// Before main: libdtrain is loaded, NCCL must not be.
const bool nccl_loaded_at_start = loaded("libnccl");

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

TEST(NcclComm, LibdtrainLoadsNcclOnFirstUseOnly) {
  EXPECT_FALSE(nccl_loaded_at_start) << "libnccl was loaded before libdtrain asked for it";
  const dtrain::NcclLibrary nccl = dtrain::nccl_library();
  std::printf("libdtrain loaded NCCL %s from %s\n", nccl.version.c_str(), nccl.file.c_str());
  EXPECT_EQ(nccl.version.substr(0, nccl.version.find('.')), std::to_string(NCCL_MAJOR));
  EXPECT_NE(nccl.file.find("libnccl.so"), std::string::npos) << nccl.file;
  EXPECT_TRUE(loaded("libnccl"));
}

TEST(NcclComm, DeviceCommIsNcclWithAGpuAndSaysWhyWithout) {
  const std::string reason = no_gpu_reason();
  dtrain::Context ctx = bare_context();
  if (reason.empty()) {
    EXPECT_EQ(ctx.device_comm().backend(), "nccl");
    return;
  }
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
T* to_device(const std::vector<T>& host) {
  T* buf = nullptr;
  EXPECT_EQ(cudaMalloc(&buf, host.size() * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(buf, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return buf;
}

template <typename T>
std::vector<T> to_host(T* buf, std::size_t n) {
  std::vector<T> back(n);
  EXPECT_EQ(cudaMemcpy(back.data(), buf, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(buf);
  return back;
}

template <typename T>
std::vector<T> device_roundtrip(dtrain::Comm& comm, const std::vector<T>& host, dtrain::DType t,
                                dtrain::ReduceOp op) {
  T* buf = to_device(host);
  comm.allreduce(buf, buf, host.size(), t, op);
  return to_host(buf, host.size());
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

// Every other NCCL call libdtrain loads, on one rank (one GPU: NCCL refuses two ranks on one
// device, so the multi-rank paths run on the multi-GPU cluster tests): each keeps the data.
TEST(NcclComm, OneRankBroadcastAllgatherReduceScatterKeepTheData) {
  if (auto reason = no_gpu_reason(); !reason.empty()) GTEST_SKIP() << reason;
  dtrain::Context ctx = bare_context();
  dtrain::Comm& dev = ctx.device_comm();
  std::vector<std::int32_t> v(1000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>(i * 7 - 300);
  std::int32_t* buf = to_device(v);
  dev.broadcast(buf, v.size(), dtrain::DType::kInt32, 0);
  EXPECT_EQ(to_host(buf, v.size()), v);
  std::int32_t* in = to_device(v);
  std::int32_t* out = to_device(std::vector<std::int32_t>(v.size(), 0));
  dev.allgather(in, out, v.size(), dtrain::DType::kInt32);
  EXPECT_EQ(to_host(out, v.size()), v);
  out = to_device(std::vector<std::int32_t>(v.size(), 0));
  dev.reduce_scatter(in, out, v.size(), dtrain::DType::kInt32, dtrain::ReduceOp::kMax);
  EXPECT_EQ(to_host(out, v.size()), v);
  cudaFree(in);
  dev.barrier();
}

// Where the memory is, as callers that check buffers ask (the Python module): the communicator's
// device, a device pointer's, and -1 for host memory, pageable or pinned.
TEST(NcclComm, DeviceAndPointerPlacesAgree) {
  if (auto reason = no_gpu_reason(); !reason.empty()) GTEST_SKIP() << reason;
  dtrain::Context ctx = bare_context();
  EXPECT_EQ(ctx.comm().device(), -1);
  dtrain::Comm& dev = ctx.device_comm();
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  EXPECT_EQ(dev.device(), ctx.world().local_rank % count);
  float* d = to_device(std::vector<float>(4, 1.0f));
  EXPECT_EQ(dtrain::cuda_pointer_device(d), dev.device());
  cudaFree(d);
  std::vector<float> pageable(4);
  EXPECT_EQ(dtrain::cuda_pointer_device(pageable.data()), -1);
  float* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 16), cudaSuccess);
  EXPECT_EQ(dtrain::cuda_pointer_device(pinned), -1);
  cudaFreeHost(pinned);
}

}  // namespace
