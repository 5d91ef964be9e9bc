#pragma once
// Escapes text for XML and HTML (& < > "), for the report and the SVG graphs in it.
#include <string>

namespace fsc {

std::string escapeXml(const std::string& text);

}  // namespace fsc
