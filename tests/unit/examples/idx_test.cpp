#include "idx.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace fmnist {
namespace {

std::vector<std::uint8_t> idx_bytes(std::vector<std::uint32_t> dims, std::size_t data_bytes,
                                    std::uint8_t type = 0x08) {
  std::vector<std::uint8_t> out = {0, 0, type, static_cast<std::uint8_t>(dims.size())};
  for (std::uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<std::uint8_t>(d >> shift));
  }
  for (std::size_t i = 0; i < data_bytes; ++i) out.push_back(static_cast<std::uint8_t>(i * 7));
  return out;
}

std::string message_of(const std::vector<std::uint8_t>& bytes, int rank) {
  try {
    parse_idx(bytes, "data/x.gz", rank);
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ParseIdx, ReadsDimensionsBigEndianAndData) {
  const auto bytes = idx_bytes({3, 2, 258}, 3 * 2 * 258);
  const IdxArray a = parse_idx(bytes, "x", 3);
  EXPECT_EQ(a.dims, (std::vector<std::uint32_t>{3, 2, 258}));
  ASSERT_EQ(a.data.size(), 3u * 2 * 258);
  EXPECT_EQ(a.data[1], 7);
  EXPECT_EQ(a.data.back(), static_cast<std::uint8_t>((3 * 2 * 258 - 1) * 7));
}

TEST(ParseIdx, BadMagicNamesTheFileAndBothValues) {
  auto bytes = idx_bytes({4}, 4);
  bytes[0] = 0x1f;  // e.g. a gzip stream that was not decompressed
  EXPECT_EQ(message_of(bytes, 1),
            "data/x.gz: bad IDX magic number; expected 0x00000801 (unsigned bytes, 1 "
            "dimension), got 0x1f000801");
}

TEST(ParseIdx, RejectsOtherElementTypesAndRanks) {
  EXPECT_NE(message_of(idx_bytes({4}, 16, 0x0d), 1).find("expected 0x00000801"), std::string::npos);
  EXPECT_NE(message_of(idx_bytes({2, 2}, 4), 3)
                .find("expected 0x00000803 (unsigned bytes, 3 "
                      "dimensions), got 0x00000802"),
            std::string::npos);
}

TEST(ParseIdx, TruncatedFilesSayWhatIsMissing) {
  EXPECT_EQ(message_of({0, 0}, 1),
            "data/x.gz: truncated IDX file; expected a 4-byte magic number, got 2 bytes");
  auto header = idx_bytes({60000, 28, 28}, 0);
  header.resize(10);
  EXPECT_EQ(message_of(header, 3), "data/x.gz: truncated IDX header; expected 16 bytes, got 10");
  EXPECT_EQ(message_of(idx_bytes({10, 28, 28}, 7000), 3),
            "data/x.gz: truncated IDX data; the header says 10 x 28 x 28 (7840 bytes), got 7000 "
            "bytes after the header");
}

TEST(ParseIdx, HugeDimensionsDoNotOverflow) {
  EXPECT_EQ(message_of(idx_bytes({0xffffffff, 0xffffffff, 0xffffffff}, 5), 3),
            "data/x.gz: truncated IDX data; the header says 4294967295 x 4294967295 x 4294967295 "
            "(more than 1099511627776 bytes), got 5 bytes after the header");
}

TEST(ParseIdx, TrailingBytesAreAnError) {
  EXPECT_EQ(message_of(idx_bytes({4}, 5), 1),
            "data/x.gz: trailing bytes after IDX data; the header says 4 (4 bytes), got 5 bytes "
            "after the header");
}

class GzipFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fmnist-idx-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const auto& f : files_) std::remove(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string write_gzip(const std::string& name, const std::vector<std::uint8_t>& bytes) {
    const std::string path = dir_ + "/" + name;
    files_.push_back(path);
    gzFile f = gzopen(path.c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    gzclose(f);
    return path;
  }
  std::string dir_;
  std::vector<std::string> files_;
};

TEST_F(GzipFile, RoundTripsThroughZlib) {
  const auto bytes = idx_bytes({100, 28, 28}, 100 * 28 * 28);
  const std::string path = write_gzip("images.gz", bytes);
  EXPECT_EQ(read_gzip_file(path), bytes);
  EXPECT_EQ(parse_idx(read_gzip_file(path), path, 3).dims[0], 100u);
}

TEST_F(GzipFile, MissingFileIsNamed) {
  try {
    read_gzip_file(dir_ + "/absent.gz");
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), dir_ + "/absent.gz: cannot open: No such file or directory");
  }
}

TEST_F(GzipFile, CutShortStreamIsAnErrorNamingTheFile) {
  const std::string path = write_gzip("cut.gz", idx_bytes({100, 28, 28}, 100 * 28 * 28));
  std::ifstream in(path, std::ios::binary);
  std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);
  try {
    read_gzip_file(path);
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot decompress: unexpected end of file");
  }
}

}  // namespace
}  // namespace fmnist
