#include "common/open_files.hpp"

#include <sys/resource.h>

#include <algorithm>

namespace dtrain {

std::uint64_t raise_open_files(std::uint64_t needed) {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return needed;  // unknown: let the opens tell
  const auto want = static_cast<rlim_t>(needed);
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < want) {
    lim.rlim_cur = lim.rlim_max == RLIM_INFINITY ? want : std::min(want, lim.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &lim) != 0) ::getrlimit(RLIMIT_NOFILE, &lim);
  }
  return lim.rlim_cur == RLIM_INFINITY ? needed : static_cast<std::uint64_t>(lim.rlim_cur);
}

}  // namespace dtrain
