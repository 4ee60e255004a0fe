#include "comm/transport/tcp/tcp_loss.hpp"

#include <algorithm>
#include <cstring>

#include "comm/point_to_point/message_space.hpp"

namespace dtrain::runtime {

AbortFrame frame_of_loss(const Loss& loss) {
  AbortFrame f;
  f.lost = loss.rank;
  f.how = static_cast<std::int32_t>(loss.how);
  f.error = loss.error;
  for (std::size_t i = 0; i < 2 && i < loss.calls.size(); ++i) {
    f.call_rank[i] = loss.calls[i].rank;
    f.call_count[i] = loss.calls[i].count;
    f.call_what[i] = loss.calls[i].what.pack();
  }
  return f;
}

Loss loss_of_frame(const AbortFrame& f, int messenger) {
  Loss loss{f.lost, static_cast<net::IoResult>(f.how), f.error, messenger, {}};
  if (loss.how == net::IoResult::kMismatch) {
    for (std::size_t i = 0; i < 2; ++i) {
      loss.calls.push_back({f.call_rank[i], f.call_count[i], CallWhat::unpack(f.call_what[i])});
    }
  }
  return loss;
}

bool tells_mismatch(const std::optional<AbortFrame>& f, int size) {
  return f && f->magic == kAbortMagic &&
         f->how == static_cast<std::int32_t>(net::IoResult::kMismatch) && f->lost >= 0 &&
         f->lost < size;
}

Loss cause_of(const Loss& seen, int self, int size, const FrameReader& read_frame,
              const std::vector<int>& closed) {
  std::vector<bool> asked(static_cast<std::size_t>(size), false);
  asked[static_cast<std::size_t>(self)] = true;
  const auto names = [&](const std::optional<AbortFrame>& f) {
    return f && f->magic == kAbortMagic && f->lost >= 0 && f->lost < size &&
           !asked[static_cast<std::size_t>(f->lost)];
  };
  Loss cause = seen;
  while (!asked[static_cast<std::size_t>(cause.rank)]) {
    asked[static_cast<std::size_t>(cause.rank)] = true;
    const std::optional<AbortFrame> f = read_frame(cause.rank);
    // Ranks that passed different calls: no rank was lost, the frame names both calls.
    if (tells_mismatch(f, size)) return loss_of_frame(*f, cause.rank);
    if (!names(f)) break;
    cause = loss_of_frame(*f, cause.rank);
  }
  if (cause.rank != seen.rank || seen.how != net::IoResult::kClosed) return cause;
  for (int q : closed) {
    if (q == seen.rank || q == self || q < 0 || q >= size) continue;
    const std::optional<AbortFrame> f = read_frame(q);
    if (tells_mismatch(f, size)) return loss_of_frame(*f, q);
    if (!names(f) || f->lost == seen.rank ||
        f->how == static_cast<std::int32_t>(net::IoResult::kTimeout)) {
      continue;
    }
    // The seen peer's own loss stays in the message as a missing rank; the cause is the rank the
    // others stopped for, and `q` told it.
    return loss_of_frame(*f, q);
  }
  return cause;
}

std::vector<int> missing_ranks(const Loss& loss, const std::vector<int>& closed) {
  if (loss.how == net::IoResult::kMismatch) return {};
  std::vector<int> missing = loss.how == net::IoResult::kTimeout && loss.messenger < 0
                                 ? std::vector<int>{loss.rank}
                                 : closed;
  missing.push_back(loss.rank);
  if (loss.messenger >= 0) missing.push_back(loss.messenger);
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  return missing;
}

namespace {

std::string who(int r, const std::vector<std::string>& hosts) {
  return rank_name(r, nullptr, hosts[static_cast<std::size_t>(r)]);
}

}  // namespace

std::string loss_message(const char* what, const Loss& loss, const std::vector<int>& missing,
                         const std::vector<std::string>& hosts, const Timeout& timeout) {
  if (loss.how == net::IoResult::kMismatch) {
    std::string text =
        std::string("dtrain: ") + what + ": tcp: " + mismatch_text("ranks", loss.calls);
    if (loss.messenger >= 0) text += "; " + who(loss.rank, hosts) + " saw it";
    return text;
  }
  const std::string why = loss.how == net::IoResult::kClosed
                              ? " closed its connection (it exited or was killed)"
                          : loss.how == net::IoResult::kTimeout
                              ? " did not answer within " + timeout_text(timeout)
                              : ": socket error: " + std::string(std::strerror(loss.error));
  std::string text = std::string("dtrain: ") + what +
                     ": tcp: missing ranks: " + join_ranks(missing) + "; " + who(loss.rank, hosts) +
                     why;
  if (loss.messenger >= 0) text += "; " + who(loss.messenger, hosts) + " stopped because of it";
  return text;
}

}  // namespace dtrain::runtime
