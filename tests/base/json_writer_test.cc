// The one JSON writer: string escaping, numbers, and the layout hoop-perf and hoop-topo print.
#include "base/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace hoop {
namespace {

TEST(JsonString, PlainTextIsQuoted) { EXPECT_EQ(jsonString("allreduce"), "\"allreduce\""); }

TEST(JsonString, EscapesQuoteBackslashAndControlCharacters) {
  EXPECT_EQ(jsonString("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(jsonString("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
  EXPECT_EQ(jsonString(std::string("\x00\x01\x1f", 3)), "\"\\u0000\\u0001\\u001f\"");
  // '/' and DEL need no escape in JSON.
  EXPECT_EQ(jsonString("a/b\x7f"), "\"a/b\x7f\"");
}

TEST(JsonString, KeepsValidUtf8) {
  EXPECT_EQ(jsonString("h\xc3\xa9te"), "\"h\xc3\xa9te\"");            // é
  EXPECT_EQ(jsonString("\xe2\x82\xac"), "\"\xe2\x82\xac\"");          // €
  EXPECT_EQ(jsonString("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");  // U+1F600
  EXPECT_EQ(jsonString("\xf4\x8f\xbf\xbf"), "\"\xf4\x8f\xbf\xbf\"");  // U+10FFFF
}

TEST(JsonString, ReplacesInvalidUtf8ByteByByte) {
  EXPECT_EQ(jsonString("\xff"), "\"\\ufffd\"");                        // never valid
  EXPECT_EQ(jsonString("a\x80z"), "\"a\\ufffdz\"");                    // stray continuation
  EXPECT_EQ(jsonString("\xc3"), "\"\\ufffd\"");                        // truncated at the end
  EXPECT_EQ(jsonString("\xc3z"), "\"\\ufffdz\"");                      // truncated mid-text
  EXPECT_EQ(jsonString("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong '/'
  EXPECT_EQ(jsonString("\xe0\x80\xaf"), "\"\\ufffd\\ufffd\\ufffd\"");  // overlong, 3 bytes
  EXPECT_EQ(jsonString("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate D800
  EXPECT_EQ(jsonString("\xf4\x90\x80\x80"),
            "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // above U+10FFFF
}

TEST(JsonNumber, ShortestTextThatReadsBack) {
  EXPECT_EQ(jsonNumber(0.0), "0");
  EXPECT_EQ(jsonNumber(1.0), "1");
  EXPECT_EQ(jsonNumber(-2.5), "-2.5");
  EXPECT_EQ(jsonNumber(0.1), "0.1");
  EXPECT_EQ(jsonNumber(1e-7), "1e-07");
  EXPECT_EQ(std::stod(jsonNumber(1.0 / 3.0)), 1.0 / 3.0);
}

TEST(JsonNumber, NonFiniteIsNull) {
  EXPECT_EQ(jsonNumber(std::nan("")), "null");
  EXPECT_EQ(jsonNumber(std::numeric_limits<double>::infinity()), "null");
  EXPECT_EQ(jsonNumber(-std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonWriter, NestedDocument) {
  JsonWriter json;
  json.beginObject();
  json.key("name").string("x\"y");
  json.key("n").integer(-3);
  json.key("big").unsignedInteger(18446744073709551615u);
  json.key("ok").boolean(true);
  json.key("none").null();
  json.key("list").beginArray();
  json.number(1.5).boolean(false);
  json.beginObject().key("k").string("v").endObject();
  json.endArray();
  json.key("empty_list").beginArray().endArray();
  json.key("empty_object").beginObject().endObject();
  json.endObject();
  EXPECT_EQ(json.text(),
            "{\n"
            "  \"name\": \"x\\\"y\",\n"
            "  \"n\": -3,\n"
            "  \"big\": 18446744073709551615,\n"
            "  \"ok\": true,\n"
            "  \"none\": null,\n"
            "  \"list\": [\n"
            "    1.5,\n"
            "    false,\n"
            "    {\n"
            "      \"k\": \"v\"\n"
            "    }\n"
            "  ],\n"
            "  \"empty_list\": [],\n"
            "  \"empty_object\": {}\n"
            "}\n");
}

TEST(JsonWriter, KeysAreEscapedToo) {
  JsonWriter json;
  json.beginObject().key("a\nb").integer(1).endObject();
  EXPECT_EQ(json.text(), "{\n  \"a\\nb\": 1\n}\n");
}

TEST(JsonWriter, TopLevelArray) {
  JsonWriter json;
  json.beginArray().integer(1).integer(2).endArray();
  EXPECT_EQ(json.text(), "[\n  1,\n  2\n]\n");
}

// hoop-topo's short lists (a core's PUs, the ring): ", " between elements, on the key's line.
TEST(JsonWriter, OneLineArrays) {
  JsonWriter json;
  json.beginObject();
  json.key("pus").beginArray(/*oneLine=*/true).unsignedInteger(0).unsignedInteger(8).endArray();
  json.key("none").beginArray(/*oneLine=*/true).endArray();
  json.key("one").beginArray(/*oneLine=*/true).integer(-1).endArray();
  json.key("cores").beginArray();
  json.beginObject().key("pus").beginArray(true).unsignedInteger(3).endArray().endObject();
  json.endArray();
  json.endObject();
  EXPECT_EQ(json.text(),
            "{\n"
            "  \"pus\": [0, 8],\n"
            "  \"none\": [],\n"
            "  \"one\": [-1],\n"
            "  \"cores\": [\n"
            "    {\n"
            "      \"pus\": [3]\n"
            "    }\n"
            "  ]\n"
            "}\n");
}

// Inside a one-line array everything stays on its line, objects and arrays included.
TEST(JsonWriter, ContainersInAOneLineArrayStayOnIt) {
  JsonWriter json;
  json.beginArray(/*oneLine=*/true);
  json.beginObject().key("a").integer(1).key("b").string("x").endObject();
  json.beginArray().integer(2).integer(3).endArray();
  json.beginObject().endObject();
  json.endArray();
  EXPECT_EQ(json.text(), "[{\"a\": 1, \"b\": \"x\"}, [2, 3], {}]\n");
}

TEST(JsonWriter, TopLevelScalarHasNoNewline) {
  JsonWriter json;
  json.string("x");
  EXPECT_EQ(json.text(), "\"x\"");
}

}  // namespace
}  // namespace hoop
