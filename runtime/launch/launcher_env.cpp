#include "launch/launcher_env.hpp"

#include <unistd.h>

#include <array>
#include <limits>
#include <string_view>

#include "common/number_text.hpp"

extern char** environ;

namespace dtrain::launch {
namespace {

struct Scheme {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* local_rank;
  const char* local_size;  // may be null: then derived elsewhere or left at 1
  // Second spelling of local_size, tried when the first is absent: Cray PALS leaves the local
  // size to Cray PMI's PMI_LOCAL_SIZE (ALCF's Polaris scripts read that one).
  const char* local_size_alt = nullptr;
  // Second spelling of local_rank and local_size together, tried when the first local rank is
  // absent: MPICH's Hydra mpiexec sets PMI_RANK and PMI_SIZE like Cray PMI but gives the place on
  // the node as MPI_LOCALRANKID and MPI_LOCALNRANKS (seen with Debian's MPICH 4.0.2), not
  // PMI_LOCAL_RANK.
  const char* local_rank_alt = nullptr;
  const char* local_size_alt_of_rank_alt = nullptr;
};

// Order matters: mpirun inside an sbatch allocation inherits SLURM_PROCID=0 from the batch step,
// so the MPI launcher's own variables must win over Slurm's.
constexpr Scheme kSchemes[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"pals", "PALS_RANKID", "PMI_SIZE", "PALS_LOCAL_RANKID", "PALS_LOCAL_SIZE", "PMI_LOCAL_SIZE"},
    {"pmi", "PMI_RANK", "PMI_SIZE", "PMI_LOCAL_RANK", "PMI_LOCAL_SIZE", nullptr, "MPI_LOCALRANKID",
     "MPI_LOCALNRANKS"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", nullptr},
};

std::optional<std::string_view> lookup(const Environment& env, const char* name) {
  if (name == nullptr) return std::nullopt;
  auto it = env.find(std::string_view(name));
  if (it == env.end()) return std::nullopt;
  return std::string_view(it->second);
}

}  // namespace

int parse_launcher_count(std::string_view name, std::string_view value, int min) {
  const std::optional<long long> out =
      dtrain::parse_whole_number(value, min, std::numeric_limits<int>::max());
  if (!out) {
    throw LauncherEnvError("dtrain: launcher environment: " + std::string(name) +
                           ": expected an integer >= " + std::to_string(min) + ", got \"" +
                           std::string(value) + "\"");
  }
  return static_cast<int>(*out);
}

namespace {

// SLURM_STEP_TASKS_PER_NODE looks like "4", "2(x3)" or "3(x2),1": the count on this node is the
// entry for SLURM_NODEID.
std::optional<int> slurm_local_size(const Environment& env) {
  auto spec = lookup(env, "SLURM_STEP_TASKS_PER_NODE");
  if (!spec) spec = lookup(env, "SLURM_TASKS_PER_NODE");
  if (!spec) return std::nullopt;
  int node = 0;
  if (auto id = lookup(env, "SLURM_NODEID")) node = parse_launcher_count("SLURM_NODEID", *id, 0);
  std::string_view rest = *spec;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    int repeat = 1;
    auto paren = item.find("(x");
    std::string_view count_text = item.substr(0, paren);
    if (paren != std::string_view::npos) {
      if (item.back() != ')') break;
      repeat = parse_launcher_count("SLURM_STEP_TASKS_PER_NODE",
                                    item.substr(paren + 2, item.size() - paren - 3), 1);
    }
    int count = parse_launcher_count("SLURM_STEP_TASKS_PER_NODE", count_text, 1);
    if (node < repeat) return count;
    node -= repeat;
  }
  throw LauncherEnvError(
      "dtrain: launcher environment: SLURM_STEP_TASKS_PER_NODE: expected an entry for "
      "SLURM_NODEID, got \"" +
      std::string(*spec) + "\"");
}

}  // namespace

const std::vector<std::string>& launcher_variables() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& s : kSchemes) out.emplace_back(s.rank);
    return out;
  }();
  return names;
}

const std::vector<std::string>& local_rank_variables() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& s : kSchemes) {
      out.emplace_back(s.local_rank);
      if (s.local_rank_alt != nullptr) out.emplace_back(s.local_rank_alt);
    }
    return out;
  }();
  return names;
}

std::optional<LauncherInfo> detect_launcher(const Environment& env) {
  for (const auto& scheme : kSchemes) {
    auto rank = lookup(env, scheme.rank);
    if (!rank) continue;
    LauncherInfo info;
    info.launcher = scheme.launcher;
    info.rank = parse_launcher_count(scheme.rank, *rank, 0);
    if (auto size = lookup(env, scheme.size))
      info.size = parse_launcher_count(scheme.size, *size, 1);
    bool local_rank_known = false;
    bool local_size_known = false;
    // The second spelling's pair (Hydra's) is read only when the first local rank is absent, so
    // that the two launchers' variables are never mixed.
    const bool second_pair = !lookup(env, scheme.local_rank) && lookup(env, scheme.local_rank_alt);
    const char* local_rank_name = second_pair ? scheme.local_rank_alt : scheme.local_rank;
    const char* local_size_name =
        second_pair ? scheme.local_size_alt_of_rank_alt : scheme.local_size;
    if (auto local = lookup(env, local_rank_name)) {
      info.local_rank = parse_launcher_count(local_rank_name, *local, 0);
      local_rank_known = true;
    }
    if (auto local_size = lookup(env, local_size_name)) {
      info.local_size = parse_launcher_count(local_size_name, *local_size, 1);
      local_size_known = true;
    } else if (second_pair) {
      info.local_size = info.size;
    } else if (auto alt = lookup(env, scheme.local_size_alt)) {
      info.local_size = parse_launcher_count(scheme.local_size_alt, *alt, 1);
      local_size_known = true;
    } else if (std::string_view(scheme.launcher) == "slurm") {
      const auto per_node = slurm_local_size(env);
      info.local_size = per_node.value_or(info.size);
      local_size_known = per_node.has_value();
    } else {
      info.local_size = info.size;
    }
    info.local_known = local_rank_known && local_size_known;
    if (info.rank >= info.size || info.local_rank >= info.local_size) {
      throw LauncherEnvError("dtrain: launcher environment: " + std::string(scheme.launcher) +
                             ": rank " + std::to_string(info.rank) + " of " +
                             std::to_string(info.size) + ", local rank " +
                             std::to_string(info.local_rank) + " of " +
                             std::to_string(info.local_size) + " is inconsistent");
    }
    return info;
  }
  return std::nullopt;
}

Environment current_environment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

std::string this_hostname() {
  std::array<char, 256> name{};
  if (::gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "localhost";
  return std::string(name.data());
}

std::vector<std::string> expand_hostlist(std::string_view text, std::string_view what) {
  auto fail = [&](const std::string& why) -> LauncherEnvError {
    return LauncherEnvError("dtrain: launcher environment: " + std::string(what) + ": " + why +
                            "; expected a host list such as \"nid[001-004,007],login1\", got \"" +
                            std::string(text) + "\"");
  };
  constexpr std::size_t kMaxHosts = 1 << 20;
  std::vector<std::string> hosts;
  std::size_t i = 0;
  while (i < text.size()) {
    // One entry: a prefix, optionally one [range list], optionally a suffix, up to a top-level ','.
    std::size_t end = i;
    int depth = 0;
    while (end < text.size() && (depth > 0 || text[end] != ',')) {
      if (text[end] == '[') ++depth;
      if (text[end] == ']') --depth;
      if (depth < 0 || depth > 1) throw fail("unbalanced brackets");
      ++end;
    }
    if (depth != 0) throw fail("unbalanced brackets");
    const std::string_view entry = text.substr(i, end - i);
    if (entry.empty()) throw fail("an empty host name");
    const auto open = entry.find('[');
    if (open == std::string_view::npos) {
      hosts.emplace_back(entry);
    } else {
      const auto close = entry.find(']', open);
      const std::string_view prefix = entry.substr(0, open);
      const std::string_view suffix = entry.substr(close + 1);
      if (suffix.find('[') != std::string_view::npos) throw fail("more than one [ ] in a name");
      std::string_view ranges = entry.substr(open + 1, close - open - 1);
      if (ranges.empty()) throw fail("an empty [ ]");
      while (!ranges.empty()) {
        const auto comma = ranges.find(',');
        const std::string_view range = ranges.substr(0, comma);
        ranges = comma == std::string_view::npos ? std::string_view() : ranges.substr(comma + 1);
        const auto dash = range.find('-');
        const std::string_view lo_text = range.substr(0, dash);
        const std::string_view hi_text =
            dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
        auto parse = [&](std::string_view digits) {
          const auto n =
              dtrain::parse_whole_number(digits, 0, std::numeric_limits<long long>::max());
          if (!n) throw fail("\"" + std::string(range) + "\" is not a number or a range a-b");
          return static_cast<unsigned long long>(*n);
        };
        const unsigned long long lo = parse(lo_text);
        const unsigned long long hi = parse(hi_text);
        if (hi < lo) throw fail("the range \"" + std::string(range) + "\" runs backwards");
        if (hi - lo >= kMaxHosts || hosts.size() + (hi - lo) >= kMaxHosts) {
          throw fail("more than " + std::to_string(kMaxHosts) + " hosts");
        }
        // Zero padding follows the low bound's width, as Slurm writes "nid[008-010]".
        const std::size_t width = lo_text.size();
        for (unsigned long long n = lo; n <= hi; ++n) {
          std::string digits = std::to_string(n);
          if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
          hosts.push_back(std::string(prefix) + digits + std::string(suffix));
        }
      }
    }
    i = end + 1;
    if (end + 1 == text.size()) throw fail("a trailing ','");
  }
  if (hosts.empty()) throw fail("no hosts");
  return hosts;
}

}  // namespace dtrain::launch
