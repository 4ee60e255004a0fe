#include "dataset.hpp"

#include <gtest/gtest.h>

#include "support.hpp"

#include <string>

namespace fmnist {
namespace {

IdxArray images(std::uint32_t n) { return {{n, 2, 2}, std::vector<std::uint8_t>(n * 4, 255)}; }

using testing::message_of;

TEST(MakeDataset, StandardizesPixelsAndKeepsLabels) {
  IdxArray img = images(2);
  img.data[0] = 0;
  const Dataset d = make_dataset(img, {{2}, {3, 9}}, "i.gz", "l.gz");
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.features, 4u);
  EXPECT_NEAR(d.images[0], -0.2860f / 0.3530f, 1e-6);
  EXPECT_NEAR(d.images[1], (1.0f - 0.2860f) / 0.3530f, 1e-6);
  EXPECT_EQ(d.labels, (std::vector<std::uint8_t>{3, 9}));
  EXPECT_EQ(d.image(1), d.images.data() + 4);
}

TEST(MakeDataset, CountsMustAgree) {
  EXPECT_EQ(message_of([] {
              make_dataset(images(3), {{2}, {1, 2}}, "i.gz", "l.gz");
            }),
            "l.gz: expected 3 labels (one per image of i.gz), got 2");
}

TEST(MakeDataset, LabelsMustBeClasses) {
  EXPECT_EQ(message_of([] {
              make_dataset(images(2), {{2}, {1, 10}}, "i.gz", "l.gz");
            }),
            "l.gz: label 1: expected 0-9, got 10");
}

TEST(FindDataDir, AGivenDirectoryWithoutTheFilesIsNamed) {
  const std::string message = message_of([] { find_data_dir("/nonexistent/fm"); });
  EXPECT_EQ(message.rfind("/nonexistent/fm/train-images-idx3-ubyte.gz: no such file; expected "
                          "--data /nonexistent/fm to hold",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("dataset-fashion-mnist"), std::string::npos) << message;
}

}  // namespace
}  // namespace fmnist
