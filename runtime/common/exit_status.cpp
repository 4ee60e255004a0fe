#include "common/exit_status.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dtrain {

int exit_code_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

void exec_or_exit_127(const std::vector<std::string>& argv, std::string_view who) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& w : argv) args.push_back(const_cast<char*>(w.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  const std::string msg =
      std::string(who) + ": cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
  (void)!::write(STDERR_FILENO, msg.data(), msg.size());
  ::_exit(127);
}

}  // namespace dtrain
