#include "dynamic_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {

void LibraryCloser::operator()(void* handle) const { dlclose(handle); }

LoadedLibrary open_first_library(const std::vector<std::string>& names, const std::string& who,
                                 const std::string& what, const std::string& advice) {
  std::string tried;
  for (const std::string& name : names) {
    dlerror();
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      LoadedLibrary o{std::unique_ptr<void, LibraryCloser>(h), name};
      link_map* map = nullptr;
      if (dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
          *map->l_name != '\0') {
        o.file = map->l_name;
      }
      return o;
    }
    const char* err = dlerror();
    tried += (tried.empty() ? "" : "; ") + name + ": " + (err ? err : "dlopen failed");
  }
  throw Error(Error::Code::kInvalid,
              "dtrain: " + who + ": cannot load " + what + " (" + tried + "); " + advice);
}

void* library_symbol(const LoadedLibrary& lib, const std::string& who, const char* symbol,
                     const std::string& expected) {
  dlerror();
  void* p = dlsym(lib.handle.get(), symbol);
  if (p == nullptr) {
    const char* err = dlerror();
    throw Error(Error::Code::kInvalid, "dtrain: " + who + ": " + lib.file + " has no " + symbol +
                                           " (" + (err ? err : "null symbol") + "); expected " +
                                           expected);
  }
  return p;
}

}  // namespace dtrain::runtime
