// 64 random bits that tell one job's (or one listener's) messages from anything else reaching the
// same port: the peer alarm's datagrams (comm/lost_peers/peer_alarm.hpp) and the key every
// connection to a rank's listener brings in its hello (comm/transport/tcp/peer_address.hpp,
// comm/point_to_point/wire_format.hpp). Ports are reused: a rank that connects to a peer that has
// exited may reach whatever process listens on that port now, another job's rank on the node or
// another communicator of this job.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dtrain::runtime::net {

// From getrandom; where it has no entropy yet (early boot) or is missing, from the clock and the
// process id, which still differ between the jobs that could reach each other's ports.
std::uint64_t draw_token();

// The token as 16 lower-case hexadecimal digits, and back: nothing for any other text.
std::string token_text(std::uint64_t token);
std::optional<std::uint64_t> parse_token_text(std::string_view text);

}  // namespace dtrain::runtime::net
