#include "comm/transport/shm/posix_shm.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "dtrain/dtrain.hpp"

namespace dtrain::runtime {
namespace {

[[noreturn]] void fail(const char* call, const std::string& name, int err) {
  throw Error(Error::Code::kSystem, std::string("dtrain: shared memory: ") + call + " " + name +
                                        " failed: " + std::strerror(err) +
                                        " (DTRAIN_SHM=0 allreduces through messages instead)");
}

}  // namespace

PosixShm::PosixShm(PosixShm&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

PosixShm& PosixShm::operator=(PosixShm&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, bytes_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

PosixShm::~PosixShm() {
  if (data_ != nullptr) ::munmap(data_, bytes_);
}

PosixShm PosixShm::create(const std::string& name, std::size_t bytes) {
  return map(name, bytes, true);
}

PosixShm PosixShm::open(const std::string& name, std::size_t bytes) {
  return map(name, bytes, false);
}

void PosixShm::unlink(const std::string& name) noexcept { ::shm_unlink(name.c_str()); }

PosixShm PosixShm::map(const std::string& name, std::size_t bytes, bool create) {
  const int fd =
      ::shm_open(name.c_str(), create ? O_RDWR | O_CREAT | O_EXCL : O_RDWR, S_IRUSR | S_IWUSR);
  if (fd < 0) fail("shm_open", name, errno);
  if (create && ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::close(fd);
    ::shm_unlink(name.c_str());
    fail("ftruncate", name, err);
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) {
    if (create) ::shm_unlink(name.c_str());
    fail("mmap", name, err);
  }
  PosixShm shm;
  shm.data_ = static_cast<char*>(p);
  shm.bytes_ = bytes;
  return shm;
}

}  // namespace dtrain::runtime
