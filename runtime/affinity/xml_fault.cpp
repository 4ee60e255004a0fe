#include "affinity/xml_fault.hpp"

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include <climits>
#include <memory>
#include <utility>

namespace dtrain::affinity {

namespace {

// The first error of a parse: libxml2 goes on after some faults and its last error ("Extra content
// at the end of the document") then hides the one that broke the file.
void keep_first(void* first, xmlErrorPtr error) {
  auto* fault = static_cast<std::optional<XmlFault>*>(first);
  if (fault->has_value() || error == nullptr || error->level < XML_ERR_ERROR) return;
  XmlFault f;
  f.line = error->line;
  // One line: "Input is not proper UTF-8, indicate encoding !\nBytes: 0xA2 0x22" -> "...; Bytes:".
  for (const char* c = error->message != nullptr ? error->message : ""; *c != '\0'; ++c) {
    if (*c == '\n') {
      if (c[1] != '\0') f.message += "; ";
    } else {
      f.message += *c;
    }
  }
  while (!f.message.empty() && f.message.back() == ' ') f.message.pop_back();
  if (f.message.empty()) f.message = "libxml2 gave no reason";
  *fault = std::move(f);
}

}  // namespace

std::optional<XmlFault> xml_fault(std::string_view text) {
  if (text.size() > static_cast<std::size_t>(INT_MAX)) return XmlFault{0, "larger than 2 GiB"};
  // Idempotent; the first call sets libxml2's globals up (its documentation asks for it before
  // any parse in a threaded program).
  xmlInitParser();
  std::unique_ptr<xmlParserCtxt, decltype(&xmlFreeParserCtxt)> ctxt(xmlNewParserCtxt(),
                                                                    &xmlFreeParserCtxt);
  if (!ctxt) return XmlFault{0, "libxml2 could not make a parser (out of memory)"};
  std::optional<XmlFault> first;
  // libxml2 2.9 has no per-parser structured handler; this one is the calling thread's (Debian's
  // libxml2 keeps its error globals per thread) and is put back after the parse.
  void* previous_context = xmlStructuredErrorContext;
  const xmlStructuredErrorFunc previous = xmlStructuredError;
  xmlSetStructuredErrorFunc(&first, keep_first);
  // NOERROR/NOWARNING: nothing printed to stderr; NONET and no DTDLOAD: the export's
  // <!DOCTYPE topology SYSTEM "hwloc2.dtd"> is not fetched.
  const int options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING;
  std::unique_ptr<xmlDoc, decltype(&xmlFreeDoc)> doc(
      xmlCtxtReadMemory(ctxt.get(), text.data(), static_cast<int>(text.size()), nullptr, nullptr,
                        options),
      &xmlFreeDoc);
  xmlSetStructuredErrorFunc(previous_context, previous);
  if (doc && ctxt->wellFormed != 0) return std::nullopt;
  if (!first) first = XmlFault{0, "libxml2 gave no reason"};
  return first;
}

}  // namespace dtrain::affinity
