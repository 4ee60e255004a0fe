// xml_fault: libxml2's word on a topology file's text, before hwloc reads it.
#include "affinity/xml_fault.hpp"

#include <gtest/gtest.h>

namespace dtrain::affinity {
namespace {

TEST(XmlFault, AWellFormedExportHasNone) {
  EXPECT_FALSE(
      xml_fault("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
                "<topology version=\"2.0\">\n  <object type=\"Machine\"/>\n</topology>\n"));
}

TEST(XmlFault, AFlippedQuoteIsNamedWithItsLine) {
  const auto fault = xml_fault(
      "<?xml version=\"1.0\"?>\n<topology>\n"
      "  <object type=\"PCIDev\" pci_busid=\xa2\"0000:85:00.0\"/>\n"
      "</topology>\n");
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->line, 3);
  EXPECT_EQ(fault->message, "AttValue: \" or ' expected");
}

TEST(XmlFault, BytesThatAreNotUtf8AreNamedOnOneLine) {
  const auto fault = xml_fault("<?xml version=\"1.0\"?>\n<topology name=\"\xa2\"/>\n");
  ASSERT_TRUE(fault);
  EXPECT_EQ(fault->line, 2);
  EXPECT_EQ(fault->message,
            "Input is not proper UTF-8, indicate encoding !; Bytes: 0xA2 0x22 0x2F 0x3E");
}

TEST(XmlFault, ATruncatedFileAndTextThatIsNoXmlAreFaults) {
  const auto truncated = xml_fault("<?xml version=\"1.0\"?>\n<topology>\n  <object type=\"M");
  ASSERT_TRUE(truncated);
  EXPECT_EQ(truncated->line, 3);
  EXPECT_FALSE(truncated->message.empty());
  EXPECT_NE(truncated->message.back(), '\n');
  const auto markdown = xml_fault("# Topologies\n\nReal hwloc exports.\n");
  ASSERT_TRUE(markdown);
  EXPECT_EQ(markdown->message, "Start tag expected, '<' not found");
  ASSERT_TRUE(xml_fault(""));
}

// The export's DOCTYPE names hwloc2.dtd: nothing is fetched or read from outside the text, and an
// external entity stays unexpanded rather than reading a file.
TEST(XmlFault, NothingOutsideTheTextIsRead) {
  EXPECT_FALSE(
      xml_fault("<?xml version=\"1.0\"?>\n<!DOCTYPE t [<!ENTITY x SYSTEM "
                "\"file:///nonexistent/x\">]>\n<t>&x;</t>\n"));
}

}  // namespace
}  // namespace dtrain::affinity
