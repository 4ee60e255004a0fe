// The PMIx bootstrap. The only file that includes pmix.h.
//
// Open MPI 4.1 (built against this same external libpmix, "MCA pmix: ext3x") calls PMIx_Init
// again inside MPI_Init and PMIx_Finalize inside MPI_Finalize. PMIx reference-counts
// initialization, so the two sessions share one connection to the server: ours is opened before
// MPI's and closed after it (see ContextState), and the library is finalized only by the last
// PMIx_Finalize. Verified under `mpirun -n 2/4` and `srun --mpi=pmix -n 2/4`
// (tests/integration/runtime).
#include <pmix.h>

#include <optional>
#include <string>

#include "bootstrap/bootstrap.hpp"

namespace dtrain::runtime {
namespace {

Error pmix_error(const std::string& call, pmix_status_t rc) {
  return Error(Error::Code::kComm, "dtrain: bootstrap: pmix: " + call +
                                       " failed; expected PMIX_SUCCESS, got " +
                                       PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")");
}

// Any PMIx integer as a long long; nullopt for a non-integer type. Servers differ in the width
// they use for the same key (PMIX_LOCAL_RANK is uint16 in PMIx but some servers send uint32).
std::optional<long long> as_integer(const pmix_value_t& v) {
  switch (v.type) {
    case PMIX_UINT8:
      return v.data.uint8;
    case PMIX_UINT16:
      return v.data.uint16;
    case PMIX_UINT32:
      return v.data.uint32;
    case PMIX_UINT64:
      return static_cast<long long>(v.data.uint64);
    case PMIX_UINT:
      return v.data.uint;
    case PMIX_INT:
      return v.data.integer;
    case PMIX_INT16:
      return v.data.int16;
    case PMIX_INT32:
      return v.data.int32;
    case PMIX_INT64:
      return v.data.int64;
    case PMIX_SIZE:
      return static_cast<long long>(v.data.size);
    case PMIX_PROC_RANK:
      return v.data.rank;
    default:
      return std::nullopt;
  }
}

class PmixSession final : public BootstrapSession {
 public:
  PmixSession() {
    PMIX_PROC_CONSTRUCT(&proc_);
    const pmix_status_t rc = PMIx_Init(&proc_, nullptr, 0);
    if (rc != PMIX_SUCCESS) throw pmix_error("PMIx_Init", rc);
  }
  ~PmixSession() override { PMIx_Finalize(nullptr, 0); }

  const pmix_proc_t& proc() const { return proc_; }

  // A value about the whole job (`job_level`, asked of the wildcard rank) or about this process.
  // `optional`: look only in what the server already gave us, and return nullopt when absent.
  std::optional<long long> get_integer(const char* key, bool job_level, bool optional) {
    pmix_value_t* value = get(key, job_level, optional);
    if (value == nullptr) return std::nullopt;
    const std::optional<long long> out = as_integer(*value);
    const std::string type = PMIx_Data_type_string(value->type);
    PMIX_VALUE_RELEASE(value);
    if (!out && !optional) {
      throw Error(Error::Code::kComm, std::string("dtrain: bootstrap: pmix: ") + key +
                                          ": unexpected type; expected an integer, got " + type);
    }
    return out;
  }

  std::optional<std::string> get_string(const char* key, bool job_level) {
    pmix_value_t* value = get(key, job_level, true);
    if (value == nullptr) return std::nullopt;
    std::optional<std::string> out;
    if (value->type == PMIX_STRING && value->data.string != nullptr) out = value->data.string;
    PMIX_VALUE_RELEASE(value);
    return out;
  }

 private:
  pmix_value_t* get(const char* key, bool job_level, bool optional) {
    pmix_proc_t target;
    PMIX_PROC_CONSTRUCT(&target);
    PMIX_LOAD_PROCID(&target, proc_.nspace, job_level ? PMIX_RANK_WILDCARD : proc_.rank);
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool local_only = true;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &local_only, PMIX_BOOL);
    pmix_value_t* value = nullptr;
    const pmix_status_t rc =
        PMIx_Get(&target, key, optional ? &info : nullptr, optional ? 1 : 0, &value);
    PMIX_INFO_DESTRUCT(&info);
    if (rc == PMIX_SUCCESS && value != nullptr) return value;
    if (value != nullptr) PMIX_VALUE_RELEASE(value);
    if (optional) return nullptr;
    throw pmix_error(std::string("PMIx_Get(") + key + ")", rc == PMIX_SUCCESS ? PMIX_ERROR : rc);
  }

  pmix_proc_t proc_;
};

int required(PmixSession& s, const char* key, bool job_level) {
  return static_cast<int>(*s.get_integer(key, job_level, false));
}

}  // namespace

Bootstrapped bootstrap_pmix() {
  auto session = std::make_unique<PmixSession>();
  WorldInfo w;
  w.bootstrap = "pmix";
  w.rank = static_cast<int>(session->proc().rank);
  w.size = required(*session, PMIX_JOB_SIZE, true);
  w.local_rank = required(*session, PMIX_LOCAL_RANK, false);
  w.local_size = required(*session, PMIX_LOCAL_SIZE, true);
  // Not every PMIx server publishes these; they are informative, so their absence is no error.
  w.node_id = static_cast<int>(session->get_integer(PMIX_NODEID, false, true).value_or(-1));
  w.hostname = session->get_string(PMIX_HOSTNAME, false).value_or(local_hostname());

  const bool consistent = w.size >= 1 && w.rank >= 0 && w.rank < w.size && w.local_size >= 1 &&
                          w.local_size <= w.size && w.local_rank >= 0 &&
                          w.local_rank < w.local_size;
  if (!consistent) {
    throw Error(Error::Code::kComm,
                "dtrain: bootstrap: pmix: inconsistent job information; expected 0 <= rank < size "
                "and 0 <= local_rank < local_size <= size, got rank=" +
                    std::to_string(w.rank) + " size=" + std::to_string(w.size) + " local_rank=" +
                    std::to_string(w.local_rank) + " local_size=" + std::to_string(w.local_size));
  }
  return Bootstrapped{std::move(w), std::move(session)};
}

}  // namespace dtrain::runtime
