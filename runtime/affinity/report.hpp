// The node and the rank map as JSON and as a text table: the one place that fixes the schema
// documented in docs/affinity.md, shared by `dtrain topo`, `dtrain bind --dry-run` and the tests.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "affinity/affinity.hpp"
#include "launch/launcher_env.hpp"

namespace dtrain::affinity {

// {"source", "this_machine", "packages", "numa", "cores", "pus", "gpus", "nics"}
nlohmann::ordered_json node_to_json(const Node& node);
// {"local_rank", "gpus", "gpu_pci", "visible_gpus", "cpus", "numa", "nics"}
nlohmann::ordered_json rank_to_json(const Node& node, const RankMap& map, int local_rank);
// {"node": node_to_json, "policy": {...}, "allowed_cpus", "ranks": [rank_to_json...]}
nlohmann::ordered_json topology_to_json(const Node& node, const RankMap& map);
nlohmann::ordered_json environment_to_json(const launch::Environment& env);

// Human-readable: the node's NUMA domains, GPUs and NICs, then the rank map.
std::string node_to_text(const Node& node);
std::string rank_map_to_text(const Node& node, const RankMap& map);

}  // namespace dtrain::affinity
