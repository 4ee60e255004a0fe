#include "report/stack_tree.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "report/rank_ranges.hpp"

namespace dtrain::report {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

template <typename Each>
void for_each_line(std::string_view text, Each each) {
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    each(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// Where the argument list of "name (args) at file:line" begins: the first " (" outside any
// brackets of the name itself ("std::function<void (int)>::operator() (this=...)"); npos if none.
std::size_t argument_list(std::string_view s) {
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<' || c == '(' || c == '[') {
      if (c == '(' && depth == 0 && i > 0 && s[i - 1] == ' ') return i - 1;
      ++depth;
    } else if ((c == '>' || c == ')' || c == ']') && depth > 0) {
      --depth;
    }
  }
  // An "operator<" leaves a bracket open: then the first " (" at all.
  return s.find(" (");
}

// Builds the tree with the children by name; ranks arrive in ascending order, each rank's
// threads one after the other.
struct Building {
  std::vector<int> ranks;
  std::vector<int> ends_here;
  std::map<std::string, Building, std::less<>> children;
};

void add_rank(std::vector<int>& ranks, int rank) {
  if (ranks.empty() || ranks.back() != rank) ranks.push_back(rank);
}

StackNode finish(std::string frame, Building& b) {
  StackNode node{std::move(frame), std::move(b.ranks), {}, std::move(b.ends_here)};
  node.children.reserve(b.children.size());
  for (auto& [name, child] : b.children) node.children.push_back(finish(name, child));
  std::stable_sort(node.children.begin(), node.children.end(),
                   [](const StackNode& a, const StackNode& c) {
                     if (a.ranks.size() != c.ranks.size()) return a.ranks.size() > c.ranks.size();
                     return a.ranks.front() < c.ranks.front();
                   });
  return node;
}

std::string heading(const std::vector<int>& ranks) {
  std::string text = ranks_text(ranks);
  if (ranks.size() > 1) text += " (" + std::to_string(ranks.size()) + ")";
  return text + ":";
}

// One branch: its heading, then its frames down to where it divides, then each callee's branch.
void render_branch(const StackNode& first, std::size_t indent, std::string& out) {
  out.append(indent, ' ').append(heading(first.ranks)).append("\n");
  const StackNode* node = &first;
  for (;;) {
    out.append(indent + 2, ' ').append(node->frame).append("\n");
    if (node->children.size() == 1 && node->children.front().ranks == node->ranks &&
        node->ends_here.empty()) {
      node = &node->children.front();
      continue;
    }
    for (const StackNode& child : node->children) render_branch(child, indent + 2, out);
    if (!node->ends_here.empty() && !node->children.empty()) {
      out.append(indent + 2, ' ').append(heading(node->ends_here)).append("\n");
      out.append(indent + 4, ' ').append("(in " + node->frame + " itself)\n");
    }
    return;
  }
}

[[noreturn]] void bad_field(std::string_view what, std::string_view field,
                            std::string_view expected) {
  throw UsageError(std::string(what) + ": \"" + std::string(field) + "\": expected " +
                   std::string(expected) + " (the stacks the hang watch writes)");
}

}  // namespace

std::optional<std::string> parse_gdb_frame(std::string_view line) {
  std::string_view s = trim(line);
  if (s.size() < 2 || s.front() != '#' || s[1] < '0' || s[1] > '9') return std::nullopt;
  s.remove_prefix(1);
  while (!s.empty() && s.front() >= '0' && s.front() <= '9') s.remove_prefix(1);
  s = trim(s);
  if (s.starts_with("0x")) {
    const std::size_t in = s.find(" in ");
    if (in == std::string_view::npos) return std::string("??");
    s.remove_prefix(in + 4);
  }
  if (s.starts_with("<")) return std::string(s);  // "<signal handler called>"
  const std::size_t args = argument_list(s);
  std::string name(trim(s.substr(0, args)));
  if (name.empty()) name = "??";
  if (name == "??") {
    // A frame without a symbol is told apart by its library (the address differs from process to
    // process and would split ranks that run the same code).
    const std::size_t from = s.rfind(" from ");
    if (from != std::string_view::npos) {
      std::string_view path = trim(s.substr(from + 6));
      const std::size_t slash = path.rfind('/');
      if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
      name += " from " + std::string(path);
    }
  }
  return name;
}

std::vector<std::vector<std::string>> parse_gdb_backtrace(std::string_view text) {
  std::vector<std::vector<std::string>> threads;
  bool open = false;  // a "Thread N (...):" heading began the last thread
  for_each_line(text, [&](std::string_view line) {
    if (line.starts_with("Thread ")) {
      threads.emplace_back();
      open = true;
      return;
    }
    if (auto frame = parse_gdb_frame(line)) {
      // A frame #0 without a heading (a plain `bt`) begins a thread of its own.
      if (!open || (line.starts_with("#0 ") && !threads.back().empty())) threads.emplace_back();
      open = true;
      threads.back().push_back(std::move(*frame));
    }
  });
  std::erase_if(threads, [](const auto& t) { return t.empty(); });
  for (auto& t : threads) std::reverse(t.begin(), t.end());
  return threads;
}

std::vector<std::vector<std::string>> parse_eu_stack(std::string_view text) {
  std::vector<std::vector<std::string>> threads;
  for_each_line(text, [&](std::string_view line) {
    if (line.starts_with("TID ")) {
      threads.emplace_back();
      return;
    }
    std::string_view s = trim(line);
    if (threads.empty() || s.size() < 2 || s.front() != '#' || s[1] < '0' || s[1] > '9') return;
    s.remove_prefix(1);
    while (!s.empty() && s.front() >= '0' && s.front() <= '9') s.remove_prefix(1);
    s = trim(s);
    if (s.starts_with("0x")) {
      const std::size_t space = s.find(' ');
      s = space == std::string_view::npos ? std::string_view() : trim(s.substr(space));
    }
    std::string_view module;
    if (const std::size_t dash = s.rfind(" - "); dash != std::string_view::npos) {
      module = trim(s.substr(dash + 3));
      s = trim(s.substr(0, dash));
    } else if (s.starts_with("- ")) {
      module = trim(s.substr(2));
      s = {};
    }
    if (const std::size_t at = s.find("@@"); at != std::string_view::npos) s = s.substr(0, at);
    std::string name(s);
    if (name.empty()) {
      // As gdb's "??": the module tells unnamed frames apart, the address would split ranks.
      name = "??";
      const std::size_t slash = module.rfind('/');
      if (slash != std::string_view::npos) module.remove_prefix(slash + 1);
      if (!module.empty()) name += " from " + std::string(module);
    }
    threads.back().push_back(std::move(name));
  });
  std::erase_if(threads, [](const auto& t) { return t.empty(); });
  for (auto& t : threads) std::reverse(t.begin(), t.end());
  return threads;
}

std::string gdb_problem(std::string_view text, std::string_view fallback) {
  std::string found;
  for_each_line(text, [&](std::string_view line) {
    line = trim(line);
    if (found.empty() &&
        (line.starts_with("ptrace:") || line.starts_with("eu-stack:") ||
         line.starts_with("Could not attach") || line.starts_with("Unable to attach") ||
         line.starts_with("Couldn't get registers"))) {
      found = std::string(line);
    }
  });
  return found.empty() ? std::string(fallback) : found;
}

std::map<long, std::string> split_by_marker(std::string_view text) {
  std::map<long, std::string> out;
  std::string* current = nullptr;
  for_each_line(text, [&](std::string_view line) {
    if (line.starts_with(kStackMarker)) {
      const std::string_view digits = trim(line.substr(kStackMarker.size()));
      long pid = 0;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), pid);
      current = ec == std::errc() && end == digits.data() + digits.size() ? &out[pid] : nullptr;
      return;
    }
    if (current) current->append(line).append("\n");
  });
  return out;
}

StackNode merge_stacks(const std::vector<RankStacks>& stacks) {
  std::vector<const RankStacks*> by_rank;
  for (const auto& s : stacks) {
    if (s.problem.empty() && !s.threads.empty()) by_rank.push_back(&s);
  }
  std::stable_sort(by_rank.begin(), by_rank.end(),
                   [](const RankStacks* a, const RankStacks* b) { return a->rank < b->rank; });
  Building root;
  for (const RankStacks* s : by_rank) {
    add_rank(root.ranks, s->rank);
    for (const auto& thread : s->threads) {
      Building* at = &root;
      for (const std::string& frame : thread) {
        at = &at->children[frame];
        add_rank(at->ranks, s->rank);
      }
      if (at != &root) add_rank(at->ends_here, s->rank);
    }
  }
  return finish("", root);
}

std::string format_stack_tree(const std::vector<RankStacks>& stacks) {
  if (stacks.empty()) return "";
  const StackNode root = merge_stacks(stacks);
  std::string out;
  if (!root.ranks.empty()) {
    out += "stacks of " + ranks_text(root.ranks) +
           ", merged (each heading names the ranks with a thread in the frames below it):\n";
    for (const StackNode& child : root.children) render_branch(child, 2, out);
  }
  std::map<std::string, std::vector<int>> missing;
  for (const auto& s : stacks) {
    if (!s.problem.empty()) {
      missing[s.problem].push_back(s.rank);
    } else if (s.threads.empty()) {
      missing["gdb printed no frame"].push_back(s.rank);
    }
  }
  for (const auto& [problem, ranks] : missing) {
    out += std::string(ranks.size() == 1 ? "no stack of " : "no stacks of ") + ranks_text(ranks) +
           ": " + problem + "\n";
  }
  return out;
}

nlohmann::json rank_stacks_to_json(const RankStacks& s) {
  nlohmann::json j{{"rank", s.rank},
                   {"host", s.host},
                   {"pid", s.pid},
                   {"attempt", s.attempt},
                   {"taken_at_us", s.taken_at_us},
                   {"threads", s.threads}};
  if (!s.problem.empty()) j["problem"] = s.problem;
  return j;
}

RankStacks rank_stacks_from_json(std::string_view text, std::string_view what) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) {
    throw UsageError(std::string(what) +
                     ": expected one JSON object (the stacks the hang watch writes)");
  }
  RankStacks s;
  const auto integer = [&](const char* field, auto& into, bool required) {
    const auto it = j.find(field);
    if (it == j.end() && !required) return;
    if (it == j.end() || !it->is_number_integer()) bad_field(what, field, "a whole number");
    into = it->template get<std::remove_reference_t<decltype(into)>>();
  };
  integer("rank", s.rank, true);
  if (s.rank < 0) bad_field(what, "rank", "a rank from 0");
  integer("pid", s.pid, false);
  integer("attempt", s.attempt, false);
  integer("taken_at_us", s.taken_at_us, false);
  if (const auto it = j.find("host"); it != j.end()) {
    if (!it->is_string()) bad_field(what, "host", "a string");
    s.host = it->get<std::string>();
  }
  if (const auto it = j.find("problem"); it != j.end()) {
    if (!it->is_string()) bad_field(what, "problem", "a string");
    s.problem = it->get<std::string>();
  }
  if (const auto it = j.find("threads"); it != j.end()) {
    if (!it->is_array()) bad_field(what, "threads", "a list of threads, each a list of frames");
    for (const auto& thread : *it) {
      if (!thread.is_array())
        bad_field(what, "threads", "a list of threads, each a list of frames");
      auto& frames = s.threads.emplace_back();
      for (const auto& frame : thread) {
        if (!frame.is_string()) bad_field(what, "threads", "frames as strings");
        frames.push_back(frame.get<std::string>());
      }
    }
  }
  return s;
}

std::vector<RankStacks> latest_attempt(std::vector<RankStacks> stacks) {
  int latest = 0;
  for (const auto& s : stacks) latest = std::max(latest, s.attempt);
  std::erase_if(stacks, [latest](const RankStacks& s) { return s.attempt != latest; });
  return stacks;
}

}  // namespace dtrain::report
