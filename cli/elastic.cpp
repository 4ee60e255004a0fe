#include "elastic.hpp"

#include <algorithm>

#include "common/errors.hpp"

namespace dtrain::cli {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

std::vector<LostNode> lost_nodes(const std::vector<plan::NodeFailure>& failures) {
  std::vector<LostNode> out;
  for (const auto& f : failures) {
    std::string base = f.state;
    const bool silent = !base.empty() && base.back() == '*';  // Slurm: not responding
    if (silent) base.pop_back();
    std::string label;
    if (base == "down" || base == "fail" || base == "failing") {
      label = base == "down" ? "DOWN" : "FAIL";
    } else if (silent) {
      label = "NOT_RESPONDING";
    } else {
      continue;
    }
    out.push_back({f.name, label});
  }
  return out;
}

std::string describe_lost_nodes(const std::vector<LostNode>& lost) {
  std::string out;
  for (const auto& n : lost) {
    out += (out.empty() ? "" : ", ") + std::string("node ") + n.name + " lost (" + n.state + ")";
  }
  return out;
}

std::vector<std::string> shrink_launch(const std::vector<std::string>& argv, int nodes,
                                       const std::vector<std::string>& exclude) {
  const std::string program = argv.empty() ? "" : argv[0].substr(argv[0].rfind('/') + 1);
  if (program != "srun") {
    throw InputError(
        "dtrain: supervise: --min-nodes needs an srun launch to run on fewer nodes, "
        "got \"" +
        (argv.empty() ? std::string() : argv[0]) + "\"");
  }
  std::vector<std::string> out = {argv[0]};
  bool replaced = false;
  std::size_t i = 1;
  for (; i < argv.size() && starts_with(argv[i], "-"); ++i) {
    // Replaced by those below.
    if (starts_with(argv[i], "--exclude=") || argv[i] == "--overlap") continue;
    if (starts_with(argv[i], "--nodes=") && !replaced) {
      out.push_back("--nodes=" + std::to_string(nodes));
      if (!exclude.empty()) {
        out.push_back("--exclude=" + join_names(exclude));
        // The failed attempt's step stays in Slurm's books, holding its CPUs on the nodes left,
        // until the lost node answers (it may never): without --overlap the new step waits for
        // them ("step creation temporarily disabled ... Requested nodes are busy").
        out.push_back("--overlap");
      }
      replaced = true;
      continue;
    }
    out.push_back(argv[i]);
  }
  if (!replaced) {
    throw InputError(
        "dtrain: supervise: --min-nodes needs the srun launch's --nodes=N among its "
        "options, found none");
  }
  out.insert(out.end(), argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
  return out;
}

}  // namespace dtrain::cli
