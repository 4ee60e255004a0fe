// The bootstrap order, in one place: PMIx > MPI > environment/TCP > one process, or what
// DTRAIN_BOOTSTRAP names.

#include <array>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.hpp"
#include "mpi/mpi.hpp"
#include "net/socket.hpp"

namespace dtrain::runtime {
namespace {

bool any_set(const launch::Environment& env, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (env.contains(n)) return true;
  return false;
}

// Wraps a method's failure so the message says which method was tried and why it was chosen.
template <typename F>
Bootstrapped attempt(const std::string& method, const std::string& because, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    std::string text = e.what();
    if (text.rfind("dtrain: ", 0) == 0) text.erase(0, 8);
    throw Error(e.code(), "dtrain: bootstrap: tried " + method + " (" + because + "): " + text);
  }
}

// "A", "A and B", "A, B and C".
std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

bool pmix_launched(const launch::Environment& env) {
  return any_set(env, {"PMIX_NAMESPACE", "PMIX_RANK"});
}

bool mpi_launched(const launch::Environment& env) {
  return any_set(env, {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "MV2_COMM_WORLD_SIZE"});
}

bool env_launched(const launch::Environment& env) {
  // torchrun sets all of these; some without the rest (a lost MASTER_PORT, a misspelt
  // WORLD_SIZE) is a launch gone wrong, which would otherwise quietly become one process.
  static const std::array<const char*, 4> kRequired = {"MASTER_ADDR", "MASTER_PORT", "RANK",
                                                       "WORLD_SIZE"};
  static const std::array<const char*, 3> kOptional = {"LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                                       "GROUP_RANK"};
  std::vector<std::string> set;
  std::vector<std::string> missing;
  for (const char* n : kRequired) (env.contains(n) ? set : missing).emplace_back(n);
  if (missing.empty()) return true;
  for (const char* n : kOptional)
    if (env.contains(n)) set.emplace_back(n);
  if (set.empty()) return false;
  std::string hint;
  for (const auto& name : missing) {
    std::string squeezed = name;
    std::erase(squeezed, '_');
    if (env.contains(squeezed)) {
      hint += "; " + squeezed + " is set: did you mean " + name + "?";
    }
  }
  throw Error(Error::Code::kInvalid,
              "dtrain: bootstrap: " + join_names(set) + (set.size() == 1 ? " is" : " are") +
                  " set but not " + join_names(missing) +
                  "; expected all of MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE (as torchrun "
                  "sets them), or none of them for one process" +
                  hint);
}

Bootstrapped bootstrap_single() {
  Bootstrapped out;
  out.world.hostname = net::local_host_name();
  out.world.bootstrap = "single";
  out.store = make_memory_store();
  return out;
}

Bootstrapped bootstrap_mpi() {
  Bootstrapped out;
  out.world = mpi_world(&out.owns_mpi);
  return out;
}

Bootstrapped bootstrap_select(const Settings& settings) {
  // The launchers' variables as they are now, read once (launch/launcher_env.hpp).
  const launch::Environment launched = launch::current_environment();
  const auto env = [&settings, &launched] { return bootstrap_env(launched, settings.timeout); };
  const std::string& method = settings.bootstrap;
  if (method.empty()) {
    // A launcher's failure is an error, never a silent fallback to one process: N processes
    // that each believed they were rank 0 of 1 would train N unsynchronized models.
    if (pmix_launched(launched))
      return attempt("pmix", "PMIX_NAMESPACE/PMIX_RANK set", bootstrap_pmix);
    if (mpi_launched(launched))
      return attempt("mpi", "an MPI launcher's PMI_*/OMPI_* variables set", bootstrap_mpi);
    if (env_launched(launched))
      return attempt("tcp", "MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE set", env);
    return bootstrap_single();
  }
  const std::string because = "DTRAIN_BOOTSTRAP=" + method;
  if (method == "single") return bootstrap_single();
  if (method == "pmix") {
    if (!pmix_launched(launched)) {
      throw Error(Error::Code::kInvalid,
                  "dtrain: bootstrap: DTRAIN_BOOTSTRAP=pmix: no PMIx launcher started this "
                  "process; expected PMIX_NAMESPACE and PMIX_RANK (set by mpirun or srun "
                  "--mpi=pmix), got neither");
    }
    return attempt("pmix", because, bootstrap_pmix);
  }
  if (method == "mpi") return attempt("mpi", because, bootstrap_mpi);
  // "tcp" or "env": Settings admits no other word.
  return attempt("tcp", because, env);
}

}  // namespace dtrain::runtime
