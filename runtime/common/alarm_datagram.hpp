// The peer alarm's words (comm/lost_peers/peer_alarm.hpp): what a rank that saw a peer of its node
// end sends to the other ranks, every rank's UDP endpoint as the ranks exchange them, and the
// sentence that names a lost peer. Here, not in comm/, because two kinds of process read them: the
// ranks (libdtrain) and each rank's logger (records/output_tee.hpp, `dtrain run-rank` and the SPANK
// plugin), which holds the rank's alarm socket too and reports an alarm that arrives after its
// rank was ended before it could (Open MPI 4.1 ends a rank whose TCP connection to the lost peer
// breaks at once, before the alarm reaches it; docs/fault-tolerance.md, "How it works"). Pure: no
// I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dtrain {

// The variable through which a rank's logger hands the rank the UDP socket it listens on for
// alarms (a descriptor number), so that an alarm sent to the rank reaches the logger once the
// rank is gone.
inline constexpr const char* kAlarmFdVariable = "DTRAIN_ALARM_FD";

// Where one rank listens for alarms: its host as the job knows it (WorldInfo::hostname) and its
// UDP port (0: it cannot be told).
struct AlarmEndpoint {
  std::string host;
  int port = 0;
};

// Fixed-size records, so the ranks can exchange them with one allgather of kAlarmEndpointBytes
// each. A host name too long to fit is dropped, and the rank with it cannot be told.
constexpr std::size_t kAlarmEndpointBytes = 128;
std::string encode_alarm_endpoint(const AlarmEndpoint& e);
// `record`: kAlarmEndpointBytes from encode_alarm_endpoint. A malformed one gives port 0.
AlarmEndpoint decode_alarm_endpoint(const char* record);

// What one alarm says: rank `reporter` saw rank `lost`, on `lost_host`, end; or, when `reporter`
// is `lost`, that rank is leaving the job without finalizing (an error: Context::abort).
struct Alarm {
  int lost = -1;
  std::string lost_host;
  int reporter = -1;
};

// Larger than any valid datagram, so a longer one arrives cut and fails to decode.
constexpr std::size_t kMaxAlarmDatagram = 512;

// The datagram: a fixed first line (kind and version), the job's token in hex, the two ranks and
// the host, one per line. Text, so that tcpdump shows what it is.
std::string encode_alarm(std::uint64_t token, const Alarm& alarm);
// The alarm in `datagram`, or nullopt when it is not one of this job's (another `token`; a
// logger, which never learns the token, passes nullopt and takes any job's: the port is its own
// rank's, so only this job's ranks know it) or is malformed in any way: wrong first line, ranks
// not below `world_size`, a host that is empty, longer than 255 bytes or not printable ASCII,
// anything more.
std::optional<Alarm> decode_alarm(std::string_view datagram, std::optional<std::uint64_t> token,
                                  int world_size);

// The words every report of a lost peer starts with (the logger looks for them in its rank's
// output, to know whether the rank said it itself).
inline constexpr std::string_view kLostPeerWords = "peer process lost: rank ";
// "peer process lost: rank 3 (on node2) was killed or exited without finalizing (seen by rank 2
// on that node)": `told_by` -1 when this process saw it itself, `lost` when that rank said it
// was leaving after an error; an empty host reads "this node".
std::string lost_peer_text(int lost, const std::string& host, int told_by);

// What lost_peer_text said, read back from any line that quotes it (a rank log's line, which
// names the operation before it): the lost rank, its host ("" for "this node") and `told_by` as it
// was given. nullopt when `line` holds no such sentence or a malformed one. `dtrain supervise`
// reads the ranks' reports this way, to tell the ranks that were ended before they heard.
struct LostPeer {
  int lost = -1;
  std::string host;
  int told_by = -1;
};
std::optional<LostPeer> parse_lost_peer_text(std::string_view line);

}  // namespace dtrain
