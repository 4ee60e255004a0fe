#include "comm/transport/tcp/peer_address.hpp"

#include "common/number_text.hpp"
#include "net/random_token.hpp"

namespace dtrain::runtime {

std::string format_peer_address(const PeerAddress& a) {
  return a.host + ":" + std::to_string(a.port) + "/" + std::to_string(a.mail_port) + "/" +
         net::token_text(a.key) + " " + a.node;
}

std::optional<PeerAddress> parse_peer_address(std::string_view line) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos || space + 1 == line.size()) return std::nullopt;
  const std::string_view where = line.substr(0, space);
  // The host's own colons (an IPv6 address) come before the port's.
  const auto colon = where.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  const std::string_view numbers = where.substr(colon + 1);
  const auto slash = numbers.find('/');
  const auto key_slash = slash == std::string_view::npos ? slash : numbers.find('/', slash + 1);
  if (key_slash == std::string_view::npos) return std::nullopt;
  const auto port = parse_whole_number(numbers.substr(0, slash), 1, 65535);
  const auto mail_port =
      parse_whole_number(numbers.substr(slash + 1, key_slash - slash - 1), 1, 65535);
  const auto key = net::parse_token_text(numbers.substr(key_slash + 1));
  if (!port || !mail_port || !key) return std::nullopt;
  return PeerAddress{std::string(where.substr(0, colon)), static_cast<int>(*port),
                     static_cast<int>(*mail_port), *key, std::string(line.substr(space + 1))};
}

}  // namespace dtrain::runtime
