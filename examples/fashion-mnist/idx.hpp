// The IDX format of the MNIST family (http://yann.lecun.com/exdb/mnist/): two zero bytes, a type
// byte (0x08: unsigned bytes, the only type these data sets use), the number of dimensions, each
// dimension as a big-endian 32-bit count, then the elements in row-major order. parse_idx() is
// pure and checks everything a damaged or wrong file can get wrong; read_gzip_file() is the only
// I/O, through zlib (which also reads an uncompressed file as is).
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fmnist {

// Every problem with a data file; the message starts with the file's name.
class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct IdxArray {
  std::vector<std::uint32_t> dims;
  std::vector<std::uint8_t> data;  // product(dims) elements
};

// `name` (a path) only labels the messages. `expected_rank` is the number of dimensions the
// caller needs (1 for labels, 3 for images). Throws DataError for a bad magic number, an element
// type other than unsigned byte, a wrong number of dimensions, a truncated file or trailing bytes.
IdxArray parse_idx(std::span<const std::uint8_t> bytes, std::string_view name, int expected_rank);

// The decompressed contents of `path`. Throws DataError naming the file when it cannot be opened
// or its gzip stream is damaged or cut short.
std::vector<std::uint8_t> read_gzip_file(const std::string& path);

}  // namespace fmnist
