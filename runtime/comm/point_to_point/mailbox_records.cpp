#include "comm/point_to_point/mailbox_records.hpp"

#include <cstring>
#include <optional>
#include <string_view>

#include "common/number_text.hpp"

namespace dtrain::runtime {
namespace {

// "host port": the host name, a space, the port in decimal; NUL-padded.
constexpr std::size_t kMaxHost = kMailboxRecordBytes - 8;

}  // namespace

MailboxListener listen_for_messages(const std::string& host) {
  if (host.empty() || host.size() > kMaxHost || host.find(' ') != std::string::npos) {
    throw Error(Error::Code::kInvalid, "dtrain: point-to-point: host name \"" + host +
                                           "\"; expected 1 to " + std::to_string(kMaxHost) +
                                           " characters without spaces");
  }
  MailboxListener l;
  l.socket = net::listen_on("", 0);
  l.record = host + " " + std::to_string(net::local_port(l.socket));
  l.record.resize(kMailboxRecordBytes, '\0');
  return l;
}

std::vector<MailboxAddress> read_mailbox_records(const char* all, int size) {
  std::vector<MailboxAddress> addresses;
  for (int r = 0; r < size; ++r) {
    const char* record = all + static_cast<std::size_t>(r) * kMailboxRecordBytes;
    const std::string text(record, strnlen(record, kMailboxRecordBytes));
    const auto space = text.rfind(' ');
    const auto port = space == std::string::npos
                          ? std::nullopt
                          : parse_whole_number(std::string_view(text).substr(space + 1), 1, 65535);
    if (!port) {
      throw Error(Error::Code::kComm, "dtrain: point-to-point: rank " + std::to_string(r) +
                                          "'s address record is not \"host port\": \"" + text +
                                          "\"");
    }
    const std::string host = text.substr(0, space);
    addresses.push_back({host, static_cast<int>(*port), host});
  }
  return addresses;
}

}  // namespace dtrain::runtime
