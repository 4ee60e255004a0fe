// dlopen and dlsym for the libraries libdtrain loads at run time instead of linking (NCCL and the
// CUDA runtime, comm/transport/nccl/nccl_library.hpp; NVIDIA's management library,
// resources/nvml_library.hpp): the first of several names that loads, its file as the loader chose
// it, and each function looked up by name, with messages that name the library, dlerror()'s text
// and what to do.
#pragma once

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace dtrain::runtime {

struct LibraryCloser {
  void operator()(void* handle) const;
};

struct LoadedLibrary {
  std::unique_ptr<void, LibraryCloser> handle;  // release() keeps the library loaded for good
  std::string file;                             // the path the dynamic loader chose
};

// The first of `names` that dlopen loads (RTLD_NOW | RTLD_LOCAL). Else throws Error (kInvalid):
// "dtrain: WHO: cannot load WHAT (NAME: REASON; ...); ADVICE".
LoadedLibrary open_first_library(const std::vector<std::string>& names, const std::string& who,
                                 const std::string& what, const std::string& advice);

// dlsym(lib, symbol), or throws Error (kInvalid): "dtrain: WHO: FILE has no SYMBOL (REASON);
// expected EXPECTED".
void* library_symbol(const LoadedLibrary& lib, const std::string& who, const char* symbol,
                     const std::string& expected);

// library_symbol() into a function pointer of the type the caller declared.
template <typename F>
void resolve_symbol(F& fn, const LoadedLibrary& lib, const std::string& who, const char* symbol,
                    const std::string& expected) {
  static_assert(sizeof(F) == sizeof(void*));
  void* p = library_symbol(lib, who, symbol, expected);
  std::memcpy(&fn, &p, sizeof p);
}

}  // namespace dtrain::runtime
