#include "comm/point_to_point/mailbox_records.hpp"

#include <cstring>
#include <optional>
#include <string_view>

#include "common/number_text.hpp"
#include "net/random_token.hpp"

namespace dtrain::runtime {
namespace {

// "host port key": the host name, a space, the port in decimal, a space, the listener's key
// (net/random_token.hpp: 16 hexadecimal digits); NUL-padded.
constexpr std::size_t kMaxHost = kMailboxRecordBytes - 8 - 17;

}  // namespace

MailboxListener listen_for_messages(const std::string& host) {
  if (host.empty() || host.size() > kMaxHost || host.find(' ') != std::string::npos) {
    throw Error(Error::Code::kInvalid, "dtrain: point-to-point: host name \"" + host +
                                           "\"; expected 1 to " + std::to_string(kMaxHost) +
                                           " characters without spaces");
  }
  MailboxListener l;
  l.socket = net::listen_on("", 0);
  l.record = host + " " + std::to_string(net::local_port(l.socket)) + " " +
             net::token_text(net::draw_token());
  l.record.resize(kMailboxRecordBytes, '\0');
  return l;
}

std::vector<MailboxAddress> read_mailbox_records(const char* all, int size) {
  std::vector<MailboxAddress> addresses;
  for (int r = 0; r < size; ++r) {
    const char* record = all + static_cast<std::size_t>(r) * kMailboxRecordBytes;
    const std::string text(record, strnlen(record, kMailboxRecordBytes));
    const auto key_space = text.rfind(' ');
    const auto space = key_space == std::string::npos || key_space == 0
                           ? std::string::npos
                           : text.rfind(' ', key_space - 1);
    const std::string_view view(text);
    const auto port =
        space == std::string::npos
            ? std::nullopt
            : parse_whole_number(view.substr(space + 1, key_space - space - 1), 1, 65535);
    const auto key = port ? net::parse_token_text(view.substr(key_space + 1)) : std::nullopt;
    if (!port || !key || space == 0) {
      throw Error(Error::Code::kComm, "dtrain: point-to-point: rank " + std::to_string(r) +
                                          "'s address record is not \"host port key\": \"" + text +
                                          "\"");
    }
    const std::string host = text.substr(0, space);
    addresses.push_back({host, static_cast<int>(*port), *key, host});
  }
  return addresses;
}

}  // namespace dtrain::runtime
