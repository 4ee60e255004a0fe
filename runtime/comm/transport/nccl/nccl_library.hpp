// NCCL and the CUDA runtime, loaded with dlopen on first use instead of linked: libdtrain has no
// DT_NEEDED on libnccl, libcudart or libcuda, so one build (and the .deb) starts on nodes without
// CUDA, and the device communicator finds them at run time (LD_LIBRARY_PATH, ld.so.cache). The
// table holds exactly the functions nccl_communicator.cpp calls, plus ncclGetVersion and
// cudaPointerGetAttributes (dtrain::cuda_pointer_device); each
// pointer's type is the real header's declaration (decltype), so a signature change in a new
// CUDA or NCCL fails the build instead of the call. The headers are needed at build time only.
// The only file of dtrain that includes nccl.h.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "dtrain/config.hpp"

namespace dtrain::runtime {

// "2.28.9" from ncclGetVersion's code (major*10000 + minor*100 + patch since NCCL 2.9,
// major*1000 + minor*100 + patch before).
std::string nccl_version_text(int code);

}  // namespace dtrain::runtime

#if DTRAIN_HAVE_NCCL
#include <cuda_runtime_api.h>
#include <nccl.h>

namespace dtrain::runtime {

// X(name): a function whose name has one declaration. Its member and the symbol looked up both
// use the macro-expanded name, so a header that renames a call (CUDA's per-thread-stream
// variants, cudaX -> cudaX_ptsz) stays consistent with the library's export.
#define DTRAIN_CUDART_FUNCTIONS(X, X_OVERLOADED)                               \
  X(cudaGetDeviceCount)                                                        \
  X(cudaGetErrorString)                                                        \
  X(cudaSetDevice)                                                             \
  X(cudaStreamCreateWithFlags)                                                 \
  X(cudaStreamDestroy)                                                         \
  X(cudaStreamQuery)                                                           \
  X(cudaPointerGetAttributes)                                                  \
  /* cuda_runtime.h adds a template cudaMalloc(T**, size_t): pick the C one */ \
  X_OVERLOADED(cudaMalloc, cudaError_t (*)(void**, size_t))                    \
  X(cudaFree)
#define DTRAIN_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion)              \
  X(ncclGetUniqueId)             \
  X(ncclCommInitRank)            \
  X(ncclCommDestroy)             \
  X(ncclCommAbort)               \
  X(ncclCommGetAsyncError)       \
  X(ncclGetErrorString)          \
  X(ncclGetLastError)            \
  X(ncclBroadcast)               \
  X(ncclAllGather)               \
  X(ncclAllReduce)               \
  X(ncclReduceScatter)

struct NcclApi {
#define DTRAIN_NCCL_API_MEMBER(name) decltype(&::name) name = nullptr;
// The cast compiles only if the header declares `name` with exactly this type.
#define DTRAIN_NCCL_API_MEMBER_OVERLOADED(name, type)                        \
  static_assert(std::is_same_v<decltype(static_cast<type>(&::name)), type>); \
  std::type_identity_t<type> name = nullptr;
  DTRAIN_CUDART_FUNCTIONS(DTRAIN_NCCL_API_MEMBER, DTRAIN_NCCL_API_MEMBER_OVERLOADED)
  DTRAIN_NCCL_FUNCTIONS(DTRAIN_NCCL_API_MEMBER)
#undef DTRAIN_NCCL_API_MEMBER
#undef DTRAIN_NCCL_API_MEMBER_OVERLOADED
  std::string cudart_file;  // the files dlopen loaded, for messages and `dtrain doctor`
  std::string nccl_file;
  int nccl_version = 0;  // ncclGetVersion: 22809 is 2.28.9
};

// The names tried, in order; the first that dlopen finds wins.
struct NcclLibraryNames {
  std::vector<std::string> cudart;
  std::vector<std::string> nccl;
};

// libcudart.so.<the CUDA major of the headers> then libcudart.so; libnccl.so.<NCCL_MAJOR>.
NcclLibraryNames default_nccl_library_names();

// Loads the CUDA runtime, then NCCL, and resolves every function of NcclApi. Throws Error
// (kInvalid) naming the library, dlerror()'s text and what to do (install NCCL or the CUDA
// runtime, put its directory on LD_LIBRARY_PATH) when a library cannot be loaded, names the
// missing symbol when one lacks a function, and refuses an NCCL whose major version differs from
// the headers'. Loaded libraries stay loaded (NCCL is not built to be unloaded).
NcclApi load_nccl_api(const NcclLibraryNames& names);

// load_nccl_api(default_nccl_library_names()) once per process (a failure is retried on the next
// call); thread-safe.
const NcclApi& nccl_api();

}  // namespace dtrain::runtime
#endif  // DTRAIN_HAVE_NCCL
