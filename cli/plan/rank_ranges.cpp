#include "plan/rank_ranges.hpp"

#include <algorithm>
#include <span>

namespace dtrain::plan {
namespace {

std::string span(int first, int last) {
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

// "4n", "4n+2", "n-1", "n": stride * n + offset as a person writes it.
std::string affine(int stride, long long offset) {
  std::string text = (stride == 1 ? "" : std::to_string(stride)) + "n";
  if (offset > 0) text += "+" + std::to_string(offset);
  if (offset < 0) text += std::to_string(offset);
  return text;
}

}  // namespace

std::vector<NodeRange> node_ranges(const std::vector<RankEntry>& ranks) {
  // By node, then local rank: one pass over each node's entries. The planner's order already is
  // that, so the sort is only checked (a 10,000-node plan stays well under 0.1 s).
  std::vector<const RankEntry*> sorted;
  sorted.reserve(ranks.size());
  for (const auto& r : ranks) sorted.push_back(&r);
  const auto by_node = [](const RankEntry* a, const RankEntry* b) {
    return a->node != b->node ? a->node < b->node : a->local_rank < b->local_rank;
  };
  if (!std::is_sorted(sorted.begin(), sorted.end(), by_node)) {
    std::stable_sort(sorted.begin(), sorted.end(), by_node);
  }
  std::vector<NodeRange> out;
  for (std::size_t begin = 0, end = 0; begin < sorted.size(); begin = end) {
    const int node = sorted[begin]->node;
    end = begin;
    while (end < sorted.size() && sorted[end]->node == node) ++end;
    const std::span<const RankEntry* const> entries(sorted.data() + begin, end - begin);
    const int first = entries.front()->rank;
    const int count = static_cast<int>(entries.size());
    bool regular = true;
    for (int l = 0; l < count; ++l) {
      regular = regular && entries[l]->local_rank == l && entries[l]->rank == first + l;
    }
    if (!regular) {
      NodeRange irregular{node, node, 0, 0, count, {}};
      for (const auto* e : entries) irregular.ranks.push_back(e->rank);
      out.push_back(std::move(irregular));
      continue;
    }
    if (!out.empty() && out.back().ranks.empty() && out.back().last_node + 1 == node &&
        out.back().count == count) {
      // The previous range goes on when this node is the next one and holds its `count` ranks
      // by the range's rule; a range of one node takes the stride this node gives it.
      NodeRange& last = out.back();
      const long long prev_first =
          static_cast<long long>(last.stride) * last.last_node + last.offset;
      const long long step = first - prev_first;
      const bool single = last.first_node == last.last_node;
      if ((single && step >= count) || (!single && step == last.stride)) {
        if (single) {
          last.stride = static_cast<int>(step);
          last.offset = static_cast<int>(prev_first - step * last.first_node);
        }
        last.last_node = node;
        continue;
      }
    }
    // A new range of one node: stride 0, offset = its first rank, until a successor fixes it.
    out.push_back({node, node, 0, first, count, {}});
  }
  return out;
}

std::string format_node_ranges(const std::vector<NodeRange>& ranges) {
  std::string text;
  for (const auto& r : ranges) {
    const std::string locals = "local ranks " + span(0, r.count - 1);
    if (!r.ranks.empty()) {
      text += "node " + std::to_string(r.first_node) + ": ranks ";
      for (std::size_t i = 0; i < r.ranks.size(); ++i) {
        text += (i > 0 ? ", " : "") + std::to_string(r.ranks[i]);
      }
      text += " (" + locals + ")\n";
      continue;
    }
    const long long first = static_cast<long long>(r.stride) * r.first_node + r.offset;
    if (r.first_node == r.last_node) {
      text += "node " + std::to_string(r.first_node) + ": " + (r.count == 1 ? "rank " : "ranks ") +
              span(static_cast<int>(first), static_cast<int>(first + r.count - 1)) + ", " +
              (r.count == 1 ? "local rank 0" : locals) + "\n";
      continue;
    }
    const long long last = static_cast<long long>(r.stride) * r.last_node + r.offset + r.count - 1;
    text += "nodes " + span(r.first_node, r.last_node) + ": ";
    text += r.count == 1 ? "rank " + affine(r.stride, r.offset)
                         : "ranks " + affine(r.stride, r.offset) + ".." +
                               affine(r.stride, static_cast<long long>(r.offset) + r.count - 1);
    text += " (" + std::to_string(first) + "-" + std::to_string(last) + "), " +
            (r.count == 1 ? "local rank 0" : locals) + "\n";
  }
  return text;
}

}  // namespace dtrain::plan
