#include "svg_chart.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "xml_check.h"

namespace hoop::perf {
namespace {

using testing::findElements;
using testing::parseXml;
using testing::XmlElement;
using testing::XmlParse;

SizeChart twoSeries() {
  SizeChart chart;
  chart.title = "t";
  chart.xLabel = "Message size (bytes, log2 scale)";
  chart.yLabel = "Bus bandwidth (GB/s)";
  chart.valueUnit = "GB/s";
  chart.series.push_back({"ring", {{8, 0.01}, {1024, 1.5}, {1 << 20, 4.25}, {4 << 20, 3.0}}});
  chart.series.push_back({"direct", {{8, 0.02}, {1024, 2.5}, {1 << 20, 1.0}}});
  return chart;
}

std::vector<std::string> texts(const XmlElement& root) {
  std::vector<std::string> found;
  for (const XmlElement* text : findElements(root, "text")) found.push_back(text->text);
  return found;
}

bool hasText(const XmlElement& root, const std::string& text) {
  const std::vector<std::string> all = texts(root);
  return std::find(all.begin(), all.end(), text) != all.end();
}

// The <g class="series"> elements, in order.
std::vector<const XmlElement*> seriesGroups(const XmlElement& root) {
  std::vector<const XmlElement*> groups;
  for (const XmlElement* g : findElements(root, "g")) {
    const std::string* cls = g->attribute("class");
    if (cls != nullptr && *cls == "series") groups.push_back(g);
  }
  return groups;
}

std::string childText(const XmlElement& element, const std::string& name) {
  for (const XmlElement& child : element.children) {
    if (child.name == name) return child.text;
  }
  return "<none>";
}

TEST(SvgChart, IsWellFormedSvg11) {
  const std::string svg = renderSizeChartSvg(twoSeries());
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"", 0), 0u);
  const XmlParse parse = parseXml(svg);
  ASSERT_TRUE(parse.root) << parse.error << "\n" << svg;
  const XmlElement& root = *parse.root;
  EXPECT_EQ(root.name, "svg");
  ASSERT_NE(root.attribute("xmlns"), nullptr);
  EXPECT_EQ(*root.attribute("xmlns"), "http://www.w3.org/2000/svg");
  EXPECT_EQ(*root.attribute("version"), "1.1");
  EXPECT_NE(root.attribute("viewBox"), nullptr);
}

TEST(SvgChart, OneGroupPerSeriesWithLinePeakAndLabel) {
  const XmlParse parse = parseXml(renderSizeChartSvg(twoSeries()));
  ASSERT_TRUE(parse.root) << parse.error;
  const std::vector<const XmlElement*> groups = seriesGroups(*parse.root);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(childText(*groups[0], "title"), "ring");
  EXPECT_EQ(childText(*groups[1], "title"), "direct");
  for (const XmlElement* group : groups) {
    EXPECT_EQ(findElements(*group, "polyline").size(), 1u);
    size_t peaks = 0;
    for (const XmlElement* circle : findElements(*group, "circle")) {
      const std::string* cls = circle->attribute("class");
      if (cls != nullptr && *cls == "peak") ++peaks;
    }
    EXPECT_EQ(peaks, 1u);
  }
  // The peak labels carry the values, and the legend says where each peak is.
  EXPECT_TRUE(hasText(*parse.root, "4.25 GB/s"));
  EXPECT_TRUE(hasText(*parse.root, "2.50 GB/s"));
  EXPECT_TRUE(hasText(*parse.root, "peak 4.25 GB/s at 1M"));
  EXPECT_TRUE(hasText(*parse.root, "peak 2.50 GB/s at 1K"));
  EXPECT_TRUE(hasText(*parse.root, "ring"));    // legend
  EXPECT_TRUE(hasText(*parse.root, "direct"));  // legend
}

TEST(SvgChart, PolylineHasOnePointPerValue) {
  const XmlParse parse = parseXml(renderSizeChartSvg(twoSeries()));
  ASSERT_TRUE(parse.root) << parse.error;
  const XmlElement* line = findElements(*seriesGroups(*parse.root)[0], "polyline")[0];
  const std::string points = *line->attribute("points");
  EXPECT_EQ(std::count(points.begin(), points.end(), ','), 4);
}

TEST(SvgChart, AxesHaveLabelsAndSizeTicks) {
  const XmlParse parse = parseXml(renderSizeChartSvg(twoSeries()));
  ASSERT_TRUE(parse.root) << parse.error;
  const XmlElement& root = *parse.root;
  EXPECT_TRUE(hasText(root, "Message size (bytes, log2 scale)"));
  EXPECT_TRUE(hasText(root, "Bus bandwidth (GB/s)"));
  // 8B..4M is 20 powers of two: every second one labelled, on even exponents (1K, 1M).
  for (const char* tick : {"16B", "64B", "1K", "4K", "256K", "1M", "4M"}) {
    EXPECT_TRUE(hasText(root, tick)) << tick;
  }
  EXPECT_FALSE(hasText(root, "8B"));
  EXPECT_FALSE(hasText(root, "2M"));
  // y ticks up to a round number above the highest value (4.25: 0, 1, ..., 5).
  EXPECT_TRUE(hasText(root, "0"));
  EXPECT_TRUE(hasText(root, "5"));
}

TEST(SvgChart, EveryPowerLabelledWhenFew) {
  SizeChart chart = twoSeries();
  chart.series = {{"one", {{8, 1.0}, {256 << 10, 2.0}}}};
  const XmlParse parse = parseXml(renderSizeChartSvg(chart));
  ASSERT_TRUE(parse.root) << parse.error;
  for (const char* tick : {"8B", "16B", "512B", "1K", "2K", "128K", "256K"}) {
    EXPECT_TRUE(hasText(*parse.root, tick)) << tick;
  }
}

TEST(SvgChart, EscapesText) {
  SizeChart chart = twoSeries();
  chart.title = "a < b & \"c\"";
  chart.series[0].label = "<ring> & 'co'";
  const std::string svg = renderSizeChartSvg(chart);
  const XmlParse parse = parseXml(svg);
  ASSERT_TRUE(parse.root) << parse.error;
  EXPECT_TRUE(hasText(*parse.root, "a < b & \"c\""));
  EXPECT_EQ(childText(*seriesGroups(*parse.root)[0], "title"), "<ring> & 'co'");
}

TEST(SvgChart, EmptyAndDegenerateChartsStayWellFormed) {
  SizeChart chart;
  chart.title = "nothing";
  chart.valueUnit = "GB/s";
  XmlParse parse = parseXml(renderSizeChartSvg(chart));
  ASSERT_TRUE(parse.root) << parse.error;
  EXPECT_TRUE(hasText(*parse.root, "no data"));

  // One size, all zero, and a 0-byte point the log axis cannot show.
  chart.series = {{"flat", {{0, 5.0}, {64, 0.0}}}};
  const std::string svg = renderSizeChartSvg(chart);
  parse = parseXml(svg);
  ASSERT_TRUE(parse.root) << parse.error;
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  EXPECT_TRUE(hasText(*parse.root, "0.00 GB/s"));
  EXPECT_TRUE(hasText(*parse.root, "64B"));
  const XmlElement* line = findElements(*seriesGroups(*parse.root)[0], "polyline")[0];
  EXPECT_EQ(std::count(line->attribute("points")->begin(), line->attribute("points")->end(), ','),
            1);
}

TEST(SvgChart, ManySeriesAllListed) {
  SizeChart chart = twoSeries();
  chart.series.clear();
  for (int i = 0; i < 25; ++i) {
    chart.series.push_back({"s" + std::to_string(i), {{8, 1.0 + i}, {16, 2.0}}});
  }
  const XmlParse parse = parseXml(renderSizeChartSvg(chart));
  ASSERT_TRUE(parse.root) << parse.error;
  EXPECT_EQ(seriesGroups(*parse.root).size(), 25u);
  EXPECT_TRUE(hasText(*parse.root, "s24"));
}

TEST(SvgChart, SizeLabels) {
  EXPECT_EQ(sizeLabel(8), "8B");
  EXPECT_EQ(sizeLabel(1000), "1000B");
  EXPECT_EQ(sizeLabel(1024), "1K");
  EXPECT_EQ(sizeLabel(1536), "1536B");
  EXPECT_EQ(sizeLabel(3 << 10), "3K");
  EXPECT_EQ(sizeLabel(256 << 10), "256K");
  EXPECT_EQ(sizeLabel(1 << 20), "1M");
  EXPECT_EQ(sizeLabel(double(size_t{2} << 30)), "2G");
  EXPECT_EQ(sizeLabel(double(size_t{1} << 40)), "1T");
  EXPECT_EQ(sizeLabel(double(size_t{1} << 50)), "1024T");
  EXPECT_EQ(sizeLabel(0.5), "0.5B");
}

TEST(SvgChart, ValueLabels) {
  EXPECT_EQ(valueLabel(0.0), "0.00");
  EXPECT_EQ(valueLabel(0.00412), "0.00412");
  EXPECT_EQ(valueLabel(4.654), "4.65");
  EXPECT_EQ(valueLabel(12.34), "12.3");
  EXPECT_EQ(valueLabel(1234.4), "1234");
}

TEST(SvgChart, XmlEscape) {
  EXPECT_EQ(xmlEscape("a&b<c>d\"e'f"), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
  EXPECT_EQ(xmlEscape(std::string("x\x01y", 3)), "xy");  // XML cannot hold it at all
  EXPECT_EQ(xmlEscape("tab\there"), "tab\there");
}

}  // namespace
}  // namespace hoop::perf
