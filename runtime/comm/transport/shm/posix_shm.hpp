// A POSIX shared-memory object mapped into this process (shm_open + mmap), for backends that have
// no MPI window to share memory through (the TCP communicator). One rank creates it, the others
// open it by name, and the creator unlinks the name once everyone has it mapped, so nothing is
// left in /dev/shm even if the job is killed later.
#pragma once

#include <cstddef>
#include <string>

namespace dtrain::runtime {

class PosixShm {
 public:
  PosixShm() = default;
  PosixShm(const PosixShm&) = delete;
  PosixShm& operator=(const PosixShm&) = delete;
  PosixShm(PosixShm&& other) noexcept;
  PosixShm& operator=(PosixShm&& other) noexcept;
  ~PosixShm();

  // A new object of `bytes` (zero-filled) under `name` ("/dtrain-..."). Throws Error (kSystem)
  // naming the call and the object.
  static PosixShm create(const std::string& name, std::size_t bytes);
  // The object another process created. Throws Error (kSystem) naming the call and the object.
  static PosixShm open(const std::string& name, std::size_t bytes);
  // Removes the name (the mapping stays valid); does nothing when already removed.
  static void unlink(const std::string& name) noexcept;

  char* data() const { return data_; }
  std::size_t size() const { return bytes_; }

 private:
  static PosixShm map(const std::string& name, std::size_t bytes, bool create);
  char* data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace dtrain::runtime
