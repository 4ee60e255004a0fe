// Whether a topology file's text is well-formed XML, and if not where and why: libxml2's reading
// of it (the parser hwloc's own XML plugin uses). hwloc says only "Invalid argument" for a file it
// cannot parse, and its fallback parser accepts some malformed files; this check runs before hwloc
// sees the text, so every malformed file is refused with its line and libxml2's words.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace dtrain::affinity {

struct XmlFault {
  int line = 0;         // 1-based; 0 when libxml2 names none
  std::string message;  // libxml2's, one line: "AttValue: \" or ' expected"
};

// Nothing when `text` is well-formed XML. Reads no file and no DTD (no network, no entities from
// outside the text).
std::optional<XmlFault> xml_fault(std::string_view text);

}  // namespace dtrain::affinity
