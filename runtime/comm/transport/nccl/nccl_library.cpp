// dlopen and dlsym for the NCCL backend (see nccl_library.hpp), and dtrain::nccl_library() and
// dtrain::cuda_pointer_device(), which work in every build: without NCCL they say so.
#include "comm/transport/nccl/nccl_library.hpp"

#include <dtrain/dtrain.hpp>

#include "dynamic_library.hpp"

namespace dtrain::runtime {

std::string nccl_version_text(int code) {
  const int scale = code >= 10000 ? 10000 : 1000;
  return std::to_string(code / scale) + "." + std::to_string((code % scale) / 100) + "." +
         std::to_string(code % 100);
}

}  // namespace dtrain::runtime

#if DTRAIN_HAVE_NCCL

namespace dtrain::runtime {
namespace {

const int kCudaMajor = CUDART_VERSION / 1000;

#define DTRAIN_NCCL_STR2(x) #x
#define DTRAIN_NCCL_STR(x) DTRAIN_NCCL_STR2(x)

void resolve_cudart(NcclApi& api, const LoadedLibrary& lib) {
  const std::string expected = "the CUDA " + std::to_string(kCudaMajor) +
                               " runtime this libdtrain was built with (CUDA " +
                               DTRAIN_BUILT_CUDA_VERSION + ")";
#define DTRAIN_NCCL_RESOLVE(name) \
  resolve_symbol(api.name, lib, "nccl", DTRAIN_NCCL_STR(name), expected);
#define DTRAIN_NCCL_RESOLVE_OVERLOADED(name, type) DTRAIN_NCCL_RESOLVE(name)
  DTRAIN_CUDART_FUNCTIONS(DTRAIN_NCCL_RESOLVE, DTRAIN_NCCL_RESOLVE_OVERLOADED)
#undef DTRAIN_NCCL_RESOLVE_OVERLOADED
#undef DTRAIN_NCCL_RESOLVE
}

void resolve_nccl(NcclApi& api, const LoadedLibrary& lib) {
  const std::string built = nccl_version_text(NCCL_VERSION_CODE);
  const std::string expected = "NCCL " + built + " or a newer " + std::to_string(NCCL_MAJOR) +
                               ".x (this libdtrain was built with NCCL " + built + ")";
#define DTRAIN_NCCL_RESOLVE(name) \
  resolve_symbol(api.name, lib, "nccl", DTRAIN_NCCL_STR(name), expected);
  DTRAIN_NCCL_FUNCTIONS(DTRAIN_NCCL_RESOLVE)
#undef DTRAIN_NCCL_RESOLVE
  int code = 0;
  if (api.ncclGetVersion(&code) != ncclSuccess) code = 0;
  const int scale = code >= 10000 ? 10000 : 1000;
  if (code / scale != NCCL_MAJOR) {
    throw Error(Error::Code::kInvalid, "dtrain: nccl: " + lib.file + " is NCCL " +
                                           nccl_version_text(code) + "; expected " + expected);
  }
  api.nccl_version = code;
}

}  // namespace

NcclLibraryNames default_nccl_library_names() {
  return {{"libcudart.so." + std::to_string(kCudaMajor), "libcudart.so"},
          {"libnccl.so." + std::to_string(NCCL_MAJOR)}};
}

NcclApi load_nccl_api(const NcclLibraryNames& names) {
  const std::string cu = std::to_string(kCudaMajor);
  const std::string path_advice = " on LD_LIBRARY_PATH (or in ld.so.conf)";
  LoadedLibrary cudart = open_first_library(
      names.cudart, "nccl", "the CUDA runtime",
      "the NCCL backend (device_comm) needs the CUDA " + cu +
          " runtime: install it (the CUDA toolkit, or pip's nvidia-cuda-runtime) and put the "
          "directory holding libcudart.so." +
          cu + path_advice);
  LoadedLibrary nccl =
      open_first_library(names.nccl, "nccl", "NCCL",
                         "the NCCL backend (device_comm) needs NCCL " + std::to_string(NCCL_MAJOR) +
                             ": install it (NVIDIA's libnccl2 package, or pip's "
                             "nvidia-nccl-cu" +
                             cu + ") and put the directory holding libnccl.so." +
                             std::to_string(NCCL_MAJOR) + path_advice);
  NcclApi api;
  resolve_cudart(api, cudart);
  resolve_nccl(api, nccl);
  api.cudart_file = cudart.file;
  api.nccl_file = nccl.file;
  // Loaded for good: nothing of NCCL or CUDA may be unloaded while the process can call it.
  cudart.handle.release();
  nccl.handle.release();
  return api;
}

const NcclApi& nccl_api() {
  // A throwing initializer leaves the static uninitialized: the next call tries again.
  static const NcclApi api = load_nccl_api(default_nccl_library_names());
  return api;
}

}  // namespace dtrain::runtime

dtrain::NcclLibrary dtrain::nccl_library() {
  const runtime::NcclApi& api = runtime::nccl_api();
  return {runtime::nccl_version_text(api.nccl_version), api.nccl_file};
}

int dtrain::cuda_pointer_device(const void* ptr) {
  const runtime::NcclApi& api = runtime::nccl_api();
  cudaPointerAttributes attributes{};
  const cudaError_t rc = api.cudaPointerGetAttributes(&attributes, ptr);
  if (rc != cudaSuccess) {
    throw Error(Error::Code::kInvalid, std::string("dtrain: cudaPointerGetAttributes failed: ") +
                                           api.cudaGetErrorString(rc) + " (" + std::to_string(rc) +
                                           ")");
  }
  // Managed memory lives on a device too; registered (pinned) and plain host memory do not.
  const bool on_device =
      attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged;
  return on_device ? attributes.device : -1;
}

#else  // !DTRAIN_HAVE_NCCL

dtrain::NcclLibrary dtrain::nccl_library() {
  throw Error(Error::Code::kInvalid,
              "dtrain: nccl: this libdtrain was built without NCCL; expected a build that found "
              "the CUDA and NCCL headers (DTRAIN_WITH_NCCL=ON, e.g. under /usr/local/cuda)");
}

int dtrain::cuda_pointer_device(const void*) {
  nccl_library();  // throws the one "built without NCCL" error
  return -1;
}

#endif
