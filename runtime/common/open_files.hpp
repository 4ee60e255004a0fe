// The limit on open files (RLIMIT_NOFILE), for the parts of the toolkit whose descriptors grow
// with the job: the TCP store's server (one connection per rank) and the merge of a run
// directory's rank logs (cli/file_pool). One definition of raising it.
#pragma once

#include <cstdint>

namespace dtrain {

// Raises this process's soft limit on open files to `needed` when it is lower (never above the
// hard limit, never lowers it) and returns the soft limit now in force; callers compare it with
// what they need and say what they cannot do.
std::uint64_t raise_open_files(std::uint64_t needed);

}  // namespace dtrain
