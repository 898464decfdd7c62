#include "json_writer.h"

#include <cstdio>

namespace hoop {

std::string jsonQuote(std::string_view text) {
  std::string quoted = "\"";
  for (char c : text) {
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\t': quoted += "\\t"; break;
      case '\r': quoted += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof(escape), "\\u%04x", static_cast<unsigned>(c));
          quoted += escape;
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

void JsonWriter::newline() {
  out_ += '\n';
  out_.append(2 * levels_.size(), ' ');
}

void JsonWriter::beforeValue() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (!level.empty) out_ += level.oneLine ? ", " : ",";
  if (!level.oneLine) newline();
  level.empty = false;
}

void JsonWriter::open(char bracket, bool oneLine) {
  beforeValue();
  out_ += bracket;
  // Inside a one-line array everything stays on that line.
  bool inherited = !levels_.empty() && levels_.back().oneLine;
  levels_.push_back({oneLine || inherited, true});
}

void JsonWriter::close(char bracket) {
  Level level = levels_.back();
  levels_.pop_back();
  if (!level.empty && !level.oneLine) newline();
  out_ += bracket;
  if (levels_.empty()) out_ += '\n';
}

void JsonWriter::key(std::string_view name) {
  beforeValue();
  out_ += jsonQuote(name);
  out_ += ": ";
  afterKey_ = true;
}

void JsonWriter::value(std::string_view text) {
  beforeValue();
  out_ += jsonQuote(text);
}

void JsonWriter::value(uint64_t number) {
  beforeValue();
  out_ += std::to_string(number);
}

void JsonWriter::value(int64_t number) {
  beforeValue();
  out_ += std::to_string(number);
}

void JsonWriter::value(bool flag) {
  beforeValue();
  out_ += flag ? "true" : "false";
}

void JsonWriter::null() {
  beforeValue();
  out_ += "null";
}

}  // namespace hoop
