#include "base/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace hoop {
namespace {

// Length of the valid UTF-8 sequence at text[i], or 0 when it is not one (stray continuation
// byte, truncated sequence, overlong form, surrogate, or above U+10FFFF).
size_t utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t at) { return static_cast<unsigned char>(text[at]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  unsigned char low = 0x80;  // bounds of the second byte, which rule out overlongs and surrogates
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

std::string jsonString(std::string_view text) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8SequenceLength(text, i);
      if (length == 0) {
        out += "\\ufffd";
        ++i;
      } else {
        out.append(text, i, length);
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  out += '"';
  return out;
}

std::string jsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char digits[32];
  const auto [end, error] = std::to_chars(digits, digits + sizeof(digits), value);
  if (error != std::errc()) return "null";  // cannot happen: 32 bytes hold any double
  return std::string(digits, end);
}

JsonWriter& JsonWriter::beginObject() {
  open('{', false);
  return *this;
}

JsonWriter& JsonWriter::endObject() {
  close('}');
  return *this;
}

JsonWriter& JsonWriter::beginArray(bool oneLine) {
  open('[', oneLine);
  return *this;
}

JsonWriter& JsonWriter::endArray() {
  close(']');
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  beforeValue();
  text_ += jsonString(name);
  text_ += ": ";
  afterKey_ = true;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
  beforeValue();
  text_ += jsonString(text);
  return *this;
}

JsonWriter& JsonWriter::number(double value) {
  beforeValue();
  text_ += jsonNumber(value);
  return *this;
}

JsonWriter& JsonWriter::integer(int64_t value) {
  beforeValue();
  text_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::unsignedInteger(uint64_t value) {
  beforeValue();
  text_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
  beforeValue();
  text_ += value ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::null() {
  beforeValue();
  text_ += "null";
  return *this;
}

void JsonWriter::beforeValue() {
  if (afterKey_) {
    afterKey_ = false;
    return;
  }
  if (levels_.empty()) return;  // the top-level value
  Level& level = levels_.back();
  if (level.members++ > 0) text_ += level.oneLine ? ", " : ",";
  if (!level.oneLine) newline();
}

void JsonWriter::newline() {
  text_ += '\n';
  text_.append(2 * levels_.size(), ' ');
}

void JsonWriter::open(char bracket, bool oneLine) {
  beforeValue();
  text_ += bracket;
  const bool inherited = !levels_.empty() && levels_.back().oneLine;
  levels_.push_back({oneLine || inherited, 0});
}

void JsonWriter::close(char bracket) {
  const Level level = levels_.back();
  levels_.pop_back();
  if (level.members > 0 && !level.oneLine) newline();
  text_ += bracket;
  if (levels_.empty()) text_ += '\n';
}

}  // namespace hoop
