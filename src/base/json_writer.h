// The one JSON writer of hoop's tools (hoop-perf's and hoop-topo's --json): objects, arrays,
// strings, numbers, booleans and null, indented two spaces, with correct string escaping. Written
// by hand so no tool needs a JSON library.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hoop {

// text as a JSON string literal, quotes included: '"' and '\' escaped, control characters as
// \n, \t, ... or \u00XX, valid UTF-8 kept as it is, and each byte of invalid UTF-8 replaced by
// \ufffd so the document stays valid whatever a hostname holds.
std::string jsonString(std::string_view text);

// The shortest decimal that reads back as the same double; JSON has no NaN or infinity, so
// those are written as null.
std::string jsonNumber(double value);

// Builds one document. Inside an object every value follows key(); the writer adds the commas,
// line breaks and indentation. Separate names per kind (string, number, integer, ...) because
// overloads would send a const char* to bool.
class JsonWriter {
 public:
  JsonWriter& beginObject();
  JsonWriter& endObject();
  // `oneLine`: elements separated by ", " on the array's line (short lists such as a core's PUs);
  // containers inside it stay on that line too.
  JsonWriter& beginArray(bool oneLine = false);
  JsonWriter& endArray();
  JsonWriter& key(std::string_view name);
  JsonWriter& string(std::string_view text);
  JsonWriter& number(double value);
  JsonWriter& integer(int64_t value);
  JsonWriter& unsignedInteger(uint64_t value);
  JsonWriter& boolean(bool value);
  JsonWriter& null();

  // The document so far; complete once every begin has its end. Ends with a newline then.
  const std::string& text() const { return text_; }

 private:
  // Starts a value or a key: the comma and line break before it, nothing after a key.
  void beforeValue();
  void newline();
  void open(char bracket, bool oneLine);
  void close(char bracket);

  struct Level {
    bool oneLine = false;
    size_t members = 0;
  };
  std::string text_;
  std::vector<Level> levels_;
  bool afterKey_ = false;
};

}  // namespace hoop
