#include "comm/tcp_loss.hpp"

#include <algorithm>
#include <cstring>

namespace dtrain::runtime {

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
    if (!names(f)) break;
    cause = Loss{f->lost, static_cast<net::IoResult>(f->how), f->error, cause.rank};
  }
  if (cause.rank != seen.rank || seen.how != net::IoResult::kClosed) return cause;
  for (int q : closed) {
    if (q == seen.rank || q == self || q < 0 || q >= size) continue;
    const std::optional<AbortFrame> f = read_frame(q);
    if (!names(f) || f->lost == seen.rank ||
        f->how == static_cast<std::int32_t>(net::IoResult::kTimeout)) {
      continue;
    }
    // The seen peer's own loss stays in the message as a missing rank; the cause is the rank the
    // others stopped for, and `q` told it.
    return Loss{f->lost, static_cast<net::IoResult>(f->how), f->error, q};
  }
  return cause;
}

std::vector<int> missing_ranks(const Loss& loss, const std::vector<int>& closed) {
  std::vector<int> missing = loss.how == net::IoResult::kTimeout && loss.messenger < 0
                                 ? std::vector<int>{loss.rank}
                                 : closed;
  missing.push_back(loss.rank);
  if (loss.messenger >= 0) missing.push_back(loss.messenger);
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  return missing;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string list;
  for (int q : ranks) list += (list.empty() ? "" : ", ") + std::to_string(q);
  return list;
}

namespace {

std::string who(int r, const std::vector<std::string>& hosts) {
  return "rank " + std::to_string(r) + " (on " + hosts[static_cast<std::size_t>(r)] + ")";
}

}  // namespace

std::string loss_message(const char* what, const Loss& loss, const std::vector<int>& missing,
                         const std::vector<std::string>& hosts) {
  const std::string why = loss.how == net::IoResult::kClosed
                              ? " closed its connection (it exited or was killed)"
                          : loss.how == net::IoResult::kTimeout
                              ? " did not answer before the deadline (DTRAIN_TIMEOUT)"
                              : ": socket error: " + std::string(std::strerror(loss.error));
  std::string text = std::string("dtrain: ") + what +
                     ": tcp: missing ranks: " + rank_list(missing) + "; " + who(loss.rank, hosts) +
                     why;
  if (loss.messenger >= 0) text += "; " + who(loss.messenger, hosts) + " stopped because of it";
  return text;
}

}  // namespace dtrain::runtime
