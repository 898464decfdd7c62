// The checker must reject what is not well-formed, or the SVG tests that rely on it prove nothing.
#include "xml_check.h"

#include <gtest/gtest.h>

namespace hoop::perf::testing {
namespace {

TEST(XmlCheck, ParsesATree) {
  const XmlParse parse = parseXml(
      "<?xml version=\"1.0\"?>\n<!-- c -->\n<a x=\"1 &amp; 2\" y='&lt;'>"
      "t&#65;&#x42;<b/><c>in</c><![CDATA[<raw>]]></a>\n");
  ASSERT_TRUE(parse.root) << parse.error;
  const XmlElement& a = *parse.root;
  EXPECT_EQ(a.name, "a");
  ASSERT_NE(a.attribute("x"), nullptr);
  EXPECT_EQ(*a.attribute("x"), "1 & 2");
  EXPECT_EQ(*a.attribute("y"), "<");
  EXPECT_EQ(a.text, "tAB<raw>");
  ASSERT_EQ(a.children.size(), 2u);
  EXPECT_EQ(a.children[1].text, "in");
  EXPECT_EQ(findElements(a, "c").size(), 1u);
}

TEST(XmlCheck, RejectsWhatIsNotWellFormed) {
  const char* bad[] = {
      "",                        // no root
      "<a>",                     // not closed
      "<a></b>",                 // mismatched end tag
      "<a><b></a></b>",          // crossed
      "<a x=1/>",                // unquoted attribute
      "<a x=\"1\" x=\"2\"/>",    // duplicate attribute
      "<a x=\"<\"/>",            // '<' in a value
      "<a>&</a>",                // bare ampersand
      "<a>&nbsp;</a>",           // entity XML does not define
      "<a>&#0;</a>",             // forbidden character
      "<a/><b/>",                // two roots
      "<a>\x01</a>",             // control character
      "<a x=\"1\"y=\"2\"/>",     // no space between attributes
      "<a><!-- x -- y --></a>",  // '--' in a comment
      "<!DOCTYPE a><a/>",        // declarations unsupported
      "<a>]]></a>",              // CDATA end in text
      "<1a/>",                   // bad name
  };
  for (const char* document : bad) {
    const XmlParse parse = parseXml(document);
    EXPECT_FALSE(parse.root) << "accepted: " << document;
    EXPECT_FALSE(parse.error.empty()) << document;
  }
}

}  // namespace
}  // namespace hoop::perf::testing
