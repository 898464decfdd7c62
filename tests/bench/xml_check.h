// A small XML well-formedness checker for the tests of hoop-perf's SVG output: it parses the
// subset of XML 1.0 an SVG writer produces (declaration, elements, attributes, text, comments,
// CDATA, the five named entities and character references) into a tree, and says what is wrong
// with anything else. No DTDs, no namespaces beyond keeping prefixed names as they are.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hoop::perf::testing {

struct XmlElement {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attributes;  // values with entities decoded
  std::vector<XmlElement> children;
  std::string text;  // the character data directly inside, entities decoded, concatenated

  const std::string* attribute(std::string_view attributeName) const;
};

struct XmlParse {
  std::optional<XmlElement> root;  // set when the document is well-formed
  std::string error;               // otherwise what is wrong and at which byte
};

XmlParse parseXml(std::string_view document);

// Every element of the tree (root included) named `name`, in document order.
std::vector<const XmlElement*> findElements(const XmlElement& root, std::string_view name);

}  // namespace hoop::perf::testing
