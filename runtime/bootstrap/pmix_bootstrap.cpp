// The PMIx bootstrap. The only file that includes pmix.h.
//
// Open MPI 4.1 (built against this same external libpmix, "MCA pmix: ext3x") calls PMIx_Init
// again inside MPI_Init and PMIx_Finalize inside MPI_Finalize. PMIx reference-counts
// initialization, so the two sessions share one connection to the server: ours is opened before
// MPI's and closed after it (see ContextState), and the library is finalized only by the last
// PMIx_Finalize. Verified under `mpirun -n 2/4` and `srun --mpi=pmix -n 2/4`
// (tests/integration/runtime).
#include <pmix.h>
#include <unistd.h>

#include <map>
#include <optional>
#include <string>

#include "bootstrap/bootstrap.hpp"
#include "bootstrap/store_errors.hpp"
#include "net/socket.hpp"

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

// PMIx cannot start again in a process where it was finalized: a second PMIx_Init succeeds but
// finds no job data (PMIx_Get(pmix.lrank) NOT-FOUND, under mpirun), while a process may make a
// second Context after its first one ended (dtrain.torch.init_process_group() again after
// destroy_process_group freed the first). So the first session takes one more reference, which
// the process's exit gives back (static destruction, after main and after Python's finalization
// freed the Contexts): the library then lives from the first Context to the exit, and every
// session after the first shares it. Only the process that took it gives it back: a forked child
// that calls exit() must not finalize its parent's connection to the server.
void keep_pmix_for_the_process() {
  static const struct Kept {
    Kept() : pid(getpid()) {
      PMIX_PROC_CONSTRUCT(&proc);
      held = PMIx_Init(&proc, nullptr, 0) == PMIX_SUCCESS;
    }
    ~Kept() {
      if (held && getpid() == pid) PMIx_Finalize(nullptr, 0);
    }
    pmix_proc_t proc;
    pid_t pid;
    bool held = false;
  } kept;
}

class PmixSession final : public BootstrapSession {
 public:
  PmixSession() {
    PMIX_PROC_CONSTRUCT(&proc_);
    const pmix_status_t rc = PMIx_Init(&proc_, nullptr, 0);
    if (rc != PMIX_SUCCESS) throw pmix_error("PMIx_Init", rc);
    keep_pmix_for_the_process();
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

// The PMIx store: set() is PMIx_Put + PMIx_Commit; wait() is a PMIx_Fence that collects the data
// (collective, with PMIX_TIMEOUT), then PMIx_Get of each key from the rank that put it.
class PmixStore final : public Store {
 public:
  PmixStore(const pmix_proc_t& self, int size) : self_(self), size_(size) {}

  void set(const std::string& key, const std::string& value) override {
    pmix_value_t v;
    PMIX_VALUE_CONSTRUCT(&v);
    v.type = PMIX_BYTE_OBJECT;
    v.data.bo.bytes = const_cast<char*>(value.data());
    v.data.bo.size = value.size();
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
    if (rc != PMIX_SUCCESS) throw store_error("PMIx_Put(" + key + ")", rc);
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) throw store_error("PMIx_Commit", rc);
  }

  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    fence(keys, timeout);
    std::vector<std::string> missing;
    for (const auto& k : keys)
      if (!lookup(k)) missing.push_back(k);
    if (!missing.empty()) throw_store_timeout(method(), missing, timeout);
  }

  // One fence, then each key from the rank that set it: N local lookups, where wait()'s lookup()
  // asks rank after rank for a key whose owner it does not know (N per key).
  std::optional<std::vector<std::string>> gather_at_fence(
      const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    try {
      fence(keys, timeout);
    } catch (const StoreTimeout&) {
      // A fence cannot say which rank is missing, and naming every key would list every rank.
      throw Error(Error::Code::kTimeout,
                  "dtrain: store: pmix: the fence exchanging " + std::to_string(keys.size()) +
                      " ranks' " + keys.front() + ", ... did not complete within " +
                      std::to_string((timeout.count() + 999) / 1000) +
                      " s (DTRAIN_TIMEOUT); expected every rank to reach it: did every rank "
                      "start? (the launcher names a rank that did not)");
    }
    std::vector<std::string> values;
    values.reserve(keys.size());
    std::vector<std::string> missing;
    for (std::size_t r = 0; r < keys.size(); ++r) {
      std::optional<std::string> v = lookup_at(static_cast<pmix_rank_t>(r), keys[r]);
      if (!v) missing.push_back(keys[r]);
      values.push_back(v.value_or(""));
    }
    if (!missing.empty()) throw_store_timeout(method(), missing, timeout);
    return values;
  }

  std::string get(const std::string& key, std::chrono::milliseconds timeout) override {
    wait({key}, timeout);
    return *lookup(key);
  }
  std::string_view method() const override { return "pmix"; }

 private:
  // PMIx_Fence over the job, collecting every rank's committed data (PMIX_TIMEOUT: `timeout`,
  // named with `keys` when it passes).
  void fence(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
    pmix_proc_t all;
    PMIX_PROC_CONSTRUCT(&all);
    PMIX_LOAD_PROCID(&all, self_.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t info[2];
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    bool collect = true;
    int seconds = static_cast<int>((timeout.count() + 999) / 1000);
    PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
    const pmix_status_t rc = PMIx_Fence(&all, 1, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc == PMIX_ERR_TIMEOUT) throw_store_timeout(method(), keys, timeout);
    if (rc != PMIX_SUCCESS) throw store_error("PMIx_Fence", rc);
  }

  static Error store_error(const std::string& call, pmix_status_t rc) {
    return Error(Error::Code::kComm, "dtrain: store: pmix: " + call +
                                         " failed; expected PMIX_SUCCESS, got " +
                                         PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")");
  }

  // After the fence every rank's data is local: ask each rank (only locally, never the server)
  // until one has the key.
  std::optional<std::string> lookup(const std::string& key) {
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    std::optional<std::string> out;
    for (int r = 0; r < size_ && !out; ++r) out = lookup_at(static_cast<pmix_rank_t>(r), key);
    if (out) cache_[key] = *out;
    return out;
  }

  // `key` as rank `rank` put it, from the data the fence brought here (never the server).
  std::optional<std::string> lookup_at(pmix_rank_t rank, const std::string& key) {
    pmix_info_t info;
    PMIX_INFO_CONSTRUCT(&info);
    bool local_only = true;
    PMIX_INFO_LOAD(&info, PMIX_OPTIONAL, &local_only, PMIX_BOOL);
    pmix_proc_t target;
    PMIX_PROC_CONSTRUCT(&target);
    PMIX_LOAD_PROCID(&target, self_.nspace, rank);
    pmix_value_t* value = nullptr;
    std::optional<std::string> out;
    if (PMIx_Get(&target, key.c_str(), &info, 1, &value) == PMIX_SUCCESS && value != nullptr) {
      if (value->type == PMIX_BYTE_OBJECT) out.emplace(value->data.bo.bytes, value->data.bo.size);
      PMIX_VALUE_RELEASE(value);
    }
    PMIX_INFO_DESTRUCT(&info);
    return out;
  }

  pmix_proc_t self_;
  int size_;
  std::map<std::string, std::string> cache_;
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
  w.hostname = session->get_string(PMIX_HOSTNAME, false).value_or(net::local_host_name());

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
  Bootstrapped out;
  out.store = std::make_shared<PmixStore>(session->proc(), w.size);
  out.world = std::move(w);
  out.session = std::move(session);
  return out;
}

}  // namespace dtrain::runtime
