// The bootstrap order, in one place: PMIx when a PMIx launcher started us, else one process.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "bootstrap/bootstrap.hpp"

namespace dtrain::runtime {

std::string local_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

bool pmix_launched() {
  return std::getenv("PMIX_NAMESPACE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

Bootstrapped bootstrap_single() {
  Bootstrapped out;
  out.world.hostname = local_hostname();
  out.world.bootstrap = "single";
  return out;
}

Bootstrapped bootstrap_select(const char* forced) {
  if (forced == nullptr || *forced == '\0') {
    // Without a PMIx launcher there is nobody to ask, so this process is the whole job. With one,
    // a PMIx failure is an error, never a silent fallback: N processes that each believed they
    // were rank 0 of 1 would train N unsynchronized models.
    return pmix_launched() ? bootstrap_pmix() : bootstrap_single();
  }
  const std::string method = forced;
  if (method == "single") return bootstrap_single();
  if (method == "pmix") {
    if (!pmix_launched()) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: bootstrap: DTRAIN_BOOTSTRAP=pmix: no PMIx launcher started this "
                  "process; expected PMIX_NAMESPACE and PMIX_RANK (set by mpirun or srun "
                  "--mpi=pmix), got neither");
    }
    return bootstrap_pmix();
  }
  const std::string got = "\"" + method + "\"";
  throw Error(
      Error::Code::kInvalid,
      "dtrain: bootstrap: DTRAIN_BOOTSTRAP: unknown method; expected pmix or single, got " + got);
}

}  // namespace dtrain::runtime
