// The only file that includes pmix.h.
#include <pmix.h>

#include <cstdlib>
#include <string>

#include "bootstrap/bootstrap.hpp"

namespace dtrain::detail {
namespace {

Error pmix_error(const std::string& call, pmix_status_t rc) {
  return Error(Error::Code::kComm, "dtrain: bootstrap: pmix: " + call + " failed: " +
                                       PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")");
}

// PMIx_Init is reference counted, so Open MPI's own PMIx_Init in MPI_Init and ours coexist; each
// session finalizes exactly once.
class PmixSession : public BootstrapSession {
 public:
  PmixSession() {
    pmix_status_t rc = PMIx_Init(&proc_, nullptr, 0);
    if (rc != PMIX_SUCCESS) throw pmix_error("PMIx_Init", rc);
  }
  ~PmixSession() override { PMIx_Finalize(nullptr, 0); }
  PmixSession(const PmixSession&) = delete;
  PmixSession& operator=(const PmixSession&) = delete;

  int rank() const { return static_cast<int>(proc_.rank); }

  // A job-level (wildcard) or process-level uint32 attribute.
  int get_uint32(const char* key, bool job_level) {
    pmix_proc_t target;
    PMIX_PROC_CONSTRUCT(&target);
    PMIX_LOAD_PROCID(&target, proc_.nspace, job_level ? PMIX_RANK_WILDCARD : proc_.rank);
    pmix_value_t* value = nullptr;
    pmix_status_t rc = PMIx_Get(&target, key, nullptr, 0, &value);
    if (rc != PMIX_SUCCESS || value == nullptr)
      throw pmix_error(std::string("PMIx_Get(") + key + ")", rc);
    long out = -1;
    switch (value->type) {
      case PMIX_UINT32:
        out = static_cast<long>(value->data.uint32);
        break;
      case PMIX_UINT16:
        out = static_cast<long>(value->data.uint16);
        break;
      case PMIX_INT:
        out = static_cast<long>(value->data.integer);
        break;
      case PMIX_PROC_RANK:
        out = static_cast<long>(value->data.rank);
        break;
      default:
        break;
    }
    PMIX_VALUE_RELEASE(value);
    if (out < 0) {
      throw Error(Error::Code::kComm,
                  std::string("dtrain: bootstrap: pmix: ") + key + " has an unexpected type");
    }
    return static_cast<int>(out);
  }

 private:
  pmix_proc_t proc_{};
};

}  // namespace

bool pmix_launched() {
  return std::getenv("PMIX_NAMESPACE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMIX_SERVER_URI41") != nullptr || std::getenv("PMIX_SERVER_URI4") != nullptr;
}

Bootstrapped bootstrap_pmix() {
  auto session = std::make_unique<PmixSession>();
  Bootstrapped out;
  out.world.rank = session->rank();
  out.world.size = session->get_uint32(PMIX_JOB_SIZE, true);
  out.world.local_rank = session->get_uint32(PMIX_LOCAL_RANK, false);
  out.world.local_size = session->get_uint32(PMIX_LOCAL_SIZE, true);
  out.world.bootstrap = "pmix";
  out.session = std::move(session);
  return out;
}

}  // namespace dtrain::detail
