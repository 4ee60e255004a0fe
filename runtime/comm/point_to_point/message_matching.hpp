// Which receive a point-to-point message goes to, as MPI matches them: a message from rank `s`
// with tag `t` goes to the earliest posted receive that takes it (source `s` or any source, tag
// `t`); a receive posted later takes the earliest message that arrived for it unclaimed. So
// messages between one pair with one tag are received in the order they were sent, whatever
// else is in flight. Pure: the mailbox (mailbox.hpp) keeps the two queues and moves the bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>

namespace dtrain::runtime {

// A receive's source that takes a message from any rank (torch's recv(src=None), MPI_ANY_SOURCE).
inline constexpr int kAnySource = -1;

// What a receive asks for, or what a message carries (`source` is then a rank).
struct Envelope {
  int source = kAnySource;
  std::int64_t tag = 0;
};

// Whether a receive posted for `wanted` takes a message that carries `got`.
constexpr bool takes(const Envelope& wanted, const Envelope& got) {
  return (wanted.source == kAnySource || wanted.source == got.source) && wanted.tag == got.tag;
}

// The index of the earliest posted receive (`receives`, pointers to entries with an
// `envelope()`, in the order posted) that takes a message of envelope `message`.
template <typename Pointer>
std::optional<std::size_t> first_receive_for(const std::deque<Pointer>& receives,
                                             const Envelope& message) {
  for (std::size_t i = 0; i < receives.size(); ++i) {
    if (takes(receives[i]->envelope(), message)) return i;
  }
  return std::nullopt;
}
// The index of the earliest message that arrived unclaimed (`messages`, in arrival order) that a
// receive for `receive` takes.
template <typename Pointer>
std::optional<std::size_t> first_message_for(const std::deque<Pointer>& messages,
                                             const Envelope& receive) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (takes(receive, messages[i]->envelope())) return i;
  }
  return std::nullopt;
}

}  // namespace dtrain::runtime
