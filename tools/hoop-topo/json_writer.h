// A small streaming JSON writer for hoop-topo's --json output: objects and arrays with commas and
// indentation handled, strings escaped. Short arrays (PU lists) can be written on one line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hoop {

class JsonWriter {
 public:
  void beginObject() { open('{', false); }
  void endObject() { close('}'); }
  // `oneLine`: elements separated by ", " instead of one per line.
  void beginArray(bool oneLine = false) { open('[', oneLine); }
  void endArray() { close(']'); }

  // Names the next value inside an object.
  void key(std::string_view name);
  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(uint64_t number);
  void value(int64_t number);
  void value(unsigned number) { value(static_cast<uint64_t>(number)); }
  void value(int number) { value(static_cast<int64_t>(number)); }
  void value(bool flag);
  void null();

  // The document so far, with a final newline once the outermost container is closed.
  const std::string& text() const { return out_; }

 private:
  struct Level {
    bool oneLine = false;
    bool empty = true;
  };

  void open(char bracket, bool oneLine);
  void close(char bracket);
  // Comma and line break before a new element (skipped right after a key).
  void beforeValue();
  void newline();

  std::string out_;
  std::vector<Level> levels_;
  bool afterKey_ = false;
};

// `text` as a quoted JSON string.
std::string jsonQuote(std::string_view text);

}  // namespace hoop
