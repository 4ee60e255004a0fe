// The hang watch's link probe (report/node_reach.hpp judges): when every rank of the job waits
// inside a collective, the first logger of each node to see it (a claim file in RUN_DIR/live,
// created exclusively) asks once whether each of the job's other nodes answers, and writes what it
// found to RUN_DIR/live/reach-HOST.txt, which the shared file system carries even when the node's
// link is cut. One probe per node and per other node, not per rank or peer: 1,000 nodes of 8
// ranks probe 1,000 x 999 times once, not 8,000 x 7,999. The lowest waiting rank's logger reads
// the records to name the node cut off.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "report/hang_watch.hpp"
#include "report/node_reach.hpp"

namespace dtrain::cli {

// Which of `hosts` answer a TCP connection (accepted or refused: either proves the host and the
// path to it are up) on the ports a cluster's nodes keep open to each other (slurmd's 6818, ssh's
// 22) within `limit`: a cut link or a node down answers neither. A host whose name does not
// resolve does not answer.
std::vector<bool> hosts_answer(const std::vector<std::string>& hosts,
                               std::chrono::milliseconds limit);

class LinkWatch {
 public:
  LinkWatch(std::string live_dir, std::string host);
  // Removes this logger's claim and record, if it wrote them.
  ~LinkWatch();
  LinkWatch(const LinkWatch&) = delete;
  LinkWatch& operator=(const LinkWatch&) = delete;

  // Every rank waits (`waits`: all of them): unless another logger of this node claimed the probe,
  // probes the waits' other hosts (at most report::kProbeLimit) and writes this node's record. Once
  // per wait of this rank (forget() ends it).
  void probe_once(const std::vector<report::RankWait>& waits);
  // This rank's wait ended: the record no longer describes a hang.
  void forget();
  // The nodes' records in RUN_DIR/live.
  std::vector<report::NodeReach> read() const;

 private:
  std::string live_dir_;
  std::string host_;
  std::string claim_path_;
  std::string record_path_;
  bool tried_ = false;    // probe_once ran for this wait
  bool claimed_ = false;  // this logger holds the node's claim
};

}  // namespace dtrain::cli
