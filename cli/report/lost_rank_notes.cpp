#include "report/lost_rank_notes.hpp"

#include <optional>
#include <string>

#include "common/alarm_datagram.hpp"

namespace dtrain::report {

std::vector<records::LostRankNote> lost_rank_notes(const std::vector<RankLogScan>& scans,
                                                   std::string_view writer) {
  // The report: the earliest that parses, and whose log it is.
  const RankLogScan* reporter = nullptr;
  std::optional<LostPeer> peer;
  for (const auto& s : scans) {
    if (!s.lost_peer()) continue;
    if (reporter && reporter->lost_peer()->time <= s.lost_peer()->time) continue;
    if (auto p = parse_lost_peer_text(s.lost_peer()->text)) {
      reporter = &s;
      peer = std::move(p);
    }
  }
  std::vector<records::LostRankNote> notes;
  if (!peer) return notes;
  records::LostRankNote note;
  note.reporter = reporter->rank();
  note.lost = peer->lost;
  note.lost_host = peer->host;
  // "this node" is the reporter's: the other ranks' logs must name it.
  if (note.lost_host.empty() && reporter->start()) note.lost_host = reporter->start()->host;
  // The rank that saw the loss: the reporter itself, unless it says who told it.
  note.told_by = peer->told_by >= 0 ? peer->told_by : reporter->rank();
  note.writer = std::string(writer);
  for (const auto& s : scans) {
    if (!s.start() || s.rank() == peer->lost || s.lost_peer()) continue;
    if (s.exit() && !s.exit()->failed()) continue;  // it finished before anything was lost
    note.rank = s.rank();
    notes.push_back(note);
  }
  return notes;
}

}  // namespace dtrain::report
