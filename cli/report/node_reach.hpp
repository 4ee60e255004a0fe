// Which node's link is cut, pure (docs/fault-tolerance.md, "A rank that hangs is named while the
// job runs"): when every rank waits inside a collective, none is missing and the ranks cannot say
// who holds them (each misses its peers across the cut). One logger per node (cli/link_watch.hpp)
// then asks, once, which of the job's other nodes answer it (one probe per node, a few seconds at
// most) and writes the answers to the run directory, which the shared file system still carries;
// the node that none of the others reaches while they reach each other is the one cut off:
//   dtrain: hang: node node2 (ranks 2-3) stopped answering: nodes node1, node3 cannot reach it
//   and reach each other (it reaches none of them: its link is cut); ranks 0-5 wait in allreduce
//   #12 of 4096 bytes for 11 s; DTRAIN_ON_HANG=abort: ending ranks 2-3 on node2, the node cut off
// (said on node2), or ...: ending ranks 2-3 on node2 (their loggers there) and rank 0 on node1,
// not at fault: ... (said by the lowest waiting rank of the other side: cut_node_abort).
// With 2 nodes each misses the other and nothing tells the sides apart: no node is named.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/hang_watch.hpp"

namespace dtrain::report {

// How long a node's probe waits for another node to answer: a node that answers at all does in
// well under a second (a TCP handshake or refusal), and TCP sends its first handshake again after
// 1 s, so within 3 s a live node on a working path was asked twice; a node silent that long while
// every rank waits is cut off, not slow. The verdict waits for the probes.
inline constexpr auto kProbeLimit = std::chrono::seconds(3);

// What one node's probe found: the job's other nodes that answered, and those that did not within
// the probe's time.
struct NodeReach {
  std::string host;
  std::vector<std::string> answered;
  std::vector<std::string> silent;
};
// One line, and back (nullopt: not a reach line, e.g. a file half written). Host names hold no
// space or comma.
std::string format_reach(const NodeReach& reach);
std::optional<NodeReach> parse_reach(std::string_view line);

// The hosts of `waits`, each once, in the order first seen.
std::vector<std::string> hosts_of(const std::vector<RankWait>& waits);

// Of `hosts` (3 or more), the one that every other host's record says did not answer, while each
// of those others answered all the rest; nullopt when there are fewer than 3 hosts (each side of
// a cut misses the other alike), when a host other than it wrote no record, or when the records
// point at no single node (a switch down, a firewall, every probe timing out).
std::optional<std::string> cut_node(const std::vector<std::string>& hosts,
                                    const std::vector<NodeReach>& reach);

// The verdict when every rank waits (`waits`: all of them, as all_waiting_verdict takes) and
// `reach` names one node cut off (cut_node over the waits' hosts); nullopt otherwise.
std::optional<std::string> cut_node_verdict(const std::vector<RankWait>& waits,
                                            const std::vector<NodeReach>& reach,
                                            std::int64_t now_us);

// What DTRAIN_ON_HANG=abort ends after a cut-node verdict naming `cut_host`, as the logger of
// `own_rank` on `own_host` says it (the words after "DTRAIN_ON_HANG=abort: "). On the node cut
// off each logger ends its own rank: the ranks at fault end there. Nothing of their end crosses
// the cut (their connections carry nothing, and the launcher's link to them is the one cut), so
// the lowest waiting rank of the other side ends as well, though not at fault, and its peers then
// fail at once: the job ends in seconds, not at DTRAIN_TIMEOUT; the words say it is not at fault.
std::string cut_node_abort(const std::vector<RankWait>& waits, const std::string& cut_host,
                           int own_rank, const std::string& own_host);

}  // namespace dtrain::report
