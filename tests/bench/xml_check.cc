#include "xml_check.h"

#include <cstdint>

namespace hoop::perf::testing {
namespace {

bool isNameStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' ||
         static_cast<unsigned char>(c) >= 0x80;
}

bool isNameChar(char c) { return isNameStart(c) || (c >= '0' && c <= '9') || c == '-' || c == '.'; }

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Code point as UTF-8.
std::string utf8(uint32_t code) {
  std::string out;
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
  return out;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  XmlParse parse() {
    XmlParse result;
    if (text_.substr(0, 5) == "<?xml") {
      if (!skipPast("?>")) return fail("unterminated XML declaration");
    }
    if (!skipMisc()) return fail(error_);
    if (!at('<')) return fail("no root element");
    XmlElement root;
    if (!element(root)) return fail(error_);
    if (!skipMisc()) return fail(error_);
    if (pos_ != text_.size()) return fail("content after the root element");
    result.root = std::move(root);
    return result;
  }

 private:
  XmlParse fail(const std::string& what) {
    XmlParse result;
    result.error = what + " (at byte " + std::to_string(pos_) + ")";
    return result;
  }
  bool error(const std::string& what) {
    error_ = what;
    return false;
  }
  bool at(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool startsWith(std::string_view s) const { return text_.substr(pos_, s.size()) == s; }
  bool skipPast(std::string_view end) {
    const size_t found = text_.find(end, pos_);
    if (found == std::string_view::npos) return false;
    pos_ = found + end.size();
    return true;
  }
  void skipSpace() {
    while (pos_ < text_.size() && isSpace(text_[pos_])) ++pos_;
  }
  // Whitespace, comments and processing instructions between top-level parts.
  bool skipMisc() {
    while (true) {
      skipSpace();
      if (startsWith("<!--")) {
        if (!comment()) return false;
      } else if (startsWith("<?")) {
        if (!skipPast("?>")) return error("unterminated processing instruction");
      } else if (startsWith("<!")) {
        return error("DOCTYPE and other declarations are not supported");
      } else {
        return true;
      }
    }
  }
  bool comment() {
    pos_ += 4;
    const size_t end = text_.find("--", pos_);
    if (end == std::string_view::npos) return error("unterminated comment");
    if (text_.substr(end, 3) != "-->") return error("'--' inside a comment");
    pos_ = end + 3;
    return true;
  }
  bool name(std::string& out) {
    if (pos_ >= text_.size() || !isNameStart(text_[pos_])) return error("expected a name");
    const size_t start = pos_;
    while (pos_ < text_.size() && isNameChar(text_[pos_])) ++pos_;
    out = std::string(text_.substr(start, pos_ - start));
    return true;
  }
  // An entity or character reference after '&', appended decoded.
  bool reference(std::string& out) {
    const size_t end = text_.find(';', pos_);
    if (end == std::string_view::npos || end - pos_ > 12) return error("'&' without a reference");
    const std::string_view ref = text_.substr(pos_ + 1, end - pos_ - 1);
    if (ref == "amp") {
      out += '&';
    } else if (ref == "lt") {
      out += '<';
    } else if (ref == "gt") {
      out += '>';
    } else if (ref == "quot") {
      out += '"';
    } else if (ref == "apos") {
      out += '\'';
    } else if (ref.size() >= 2 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      const std::string_view digits = ref.substr(hex ? 2 : 1);
      if (digits.empty()) return error("empty character reference");
      uint32_t code = 0;
      for (char c : digits) {
        uint32_t digit = 0;
        if (c >= '0' && c <= '9') {
          digit = static_cast<uint32_t>(c - '0');
        } else if (hex && c >= 'a' && c <= 'f') {
          digit = static_cast<uint32_t>(c - 'a' + 10);
        } else if (hex && c >= 'A' && c <= 'F') {
          digit = static_cast<uint32_t>(c - 'A' + 10);
        } else {
          return error("bad character reference &" + std::string(ref) + ";");
        }
        code = code * (hex ? 16 : 10) + digit;
        if (code > 0x10FFFF) return error("character reference out of range");
      }
      const bool allowed = code == 0x9 || code == 0xA || code == 0xD ||
                           (code >= 0x20 && code <= 0xD7FF) || (code >= 0xE000 && code <= 0xFFFD) ||
                           code >= 0x10000;
      if (!allowed) return error("character reference to a character XML forbids");
      out += utf8(code);
    } else {
      return error("unknown entity &" + std::string(ref) + ";");
    }
    pos_ = end + 1;
    return true;
  }
  bool checkChar(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 && c != '\t' && c != '\n' && c != '\r') return error("control character");
    return true;
  }
  bool attributeValue(std::string& out) {
    if (!at('"') && !at('\'')) return error("attribute value without quotes");
    const char quote = text_[pos_++];
    while (true) {
      if (pos_ >= text_.size()) return error("unterminated attribute value");
      const char c = text_[pos_];
      if (c == quote) {
        ++pos_;
        return true;
      }
      if (c == '<') return error("'<' in an attribute value");
      if (c == '&') {
        if (!reference(out)) return false;
        continue;
      }
      if (!checkChar(c)) return false;
      out += c;
      ++pos_;
    }
  }
  bool element(XmlElement& out) {
    ++pos_;  // '<'
    if (!name(out.name)) return false;
    while (true) {
      const size_t before = pos_;
      skipSpace();
      if (startsWith("/>")) {
        pos_ += 2;
        return true;
      }
      if (at('>')) {
        ++pos_;
        break;
      }
      if (pos_ == before) return error("expected whitespace before an attribute");
      std::string attributeName;
      if (!name(attributeName)) return false;
      if (out.attribute(attributeName) != nullptr) {
        return error("duplicate attribute " + attributeName);
      }
      skipSpace();
      if (!at('=')) return error("attribute " + attributeName + " without '='");
      ++pos_;
      skipSpace();
      std::string value;
      if (!attributeValue(value)) return false;
      out.attributes.emplace_back(attributeName, value);
    }
    // Content up to the matching end tag.
    while (true) {
      if (pos_ >= text_.size()) return error("element <" + out.name + "> is not closed");
      if (startsWith("</")) {
        pos_ += 2;
        std::string endName;
        if (!name(endName)) return false;
        if (endName != out.name) {
          return error("</" + endName + "> closes <" + out.name + ">");
        }
        skipSpace();
        if (!at('>')) return error("end tag without '>'");
        ++pos_;
        return true;
      }
      if (startsWith("<!--")) {
        if (!comment()) return false;
      } else if (startsWith("<![CDATA[")) {
        pos_ += 9;
        const size_t end = text_.find("]]>", pos_);
        if (end == std::string_view::npos) return error("unterminated CDATA");
        out.text += std::string(text_.substr(pos_, end - pos_));
        pos_ = end + 3;
      } else if (startsWith("<?")) {
        if (!skipPast("?>")) return error("unterminated processing instruction");
      } else if (at('<')) {
        XmlElement child;
        if (!element(child)) return false;
        out.children.push_back(std::move(child));
      } else if (at('&')) {
        if (!reference(out.text)) return false;
      } else {
        if (startsWith("]]>")) return error("']]>' in text");
        if (!checkChar(text_[pos_])) return false;
        out.text += text_[pos_++];
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

void collect(const XmlElement& element, std::string_view name,
             std::vector<const XmlElement*>& found) {
  if (element.name == name) found.push_back(&element);
  for (const XmlElement& child : element.children) collect(child, name, found);
}

}  // namespace

const std::string* XmlElement::attribute(std::string_view attributeName) const {
  for (const auto& [key, value] : attributes) {
    if (key == attributeName) return &value;
  }
  return nullptr;
}

XmlParse parseXml(std::string_view document) { return Parser(document).parse(); }

std::vector<const XmlElement*> findElements(const XmlElement& root, std::string_view name) {
  std::vector<const XmlElement*> found;
  collect(root, name, found);
  return found;
}

}  // namespace hoop::perf::testing
