#include <string>

#include "bootstrap/bootstrap.hpp"

namespace dtrain::detail {

Bootstrapped bootstrap_single() {
  Bootstrapped out;
  out.world = WorldInfo{};
  out.world.bootstrap = "single";
  return out;
}

Bootstrapped bootstrap_select(const char* forced_method) {
  if (forced_method != nullptr && *forced_method != '\0') {
    const std::string method = forced_method;
    if (method == "pmix") {
      if (!pmix_launched()) {
        throw Error(Error::Code::kInvalid,
                    "dtrain: bootstrap: DTRAIN_BOOTSTRAP=pmix, but this process was not started "
                    "by a PMIx launcher (no PMIX_NAMESPACE/PMIX_RANK); expected mpirun or srun "
                    "--mpi=pmix");
      }
      return bootstrap_pmix();
    }
    if (method == "single") return bootstrap_single();
    throw Error(Error::Code::kInvalid,
                "dtrain: bootstrap: DTRAIN_BOOTSTRAP: expected one of: pmix, single, got \"" +
                    method + "\"");
  }
  // A launcher that speaks PMIx knows the job; without one this is a single process.
  if (pmix_launched()) return bootstrap_pmix();
  return bootstrap_single();
}

}  // namespace dtrain::detail
