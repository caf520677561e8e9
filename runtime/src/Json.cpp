#include "qla/runtime/Json.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "qla/runtime/Error.h"

namespace qla {

const char* jsonTypeName(Json::Type type) {
  switch (type) {
  case Json::Type::Null: return "null";
  case Json::Type::Bool: return "bool";
  case Json::Type::Int: return "integer";
  case Json::Type::Double: return "number";
  case Json::Type::String: return "string";
  case Json::Type::Array: return "array";
  case Json::Type::Object: return "object";
  }
  return "unknown";
}

void Json::throwIntegerOverflow(std::uint64_t value) {
  throw Error(fmt::format("JSON: integer {} does not fit in a signed 64-bit integer", value));
}

void Json::throwTypeError(const char* expected) const {
  throw Error(fmt::format("JSON: expected {}, got {}", expected, jsonTypeName(type())));
}

bool Json::asBool() const {
  if (!isBool())
    throwTypeError("a bool");
  return std::get<bool>(value_);
}

std::int64_t Json::asInt() const {
  if (!isInt())
    throwTypeError("an integer");
  return std::get<std::int64_t>(value_);
}

double Json::asDouble() const {
  if (isInt())
    return static_cast<double>(std::get<std::int64_t>(value_));
  if (!isDouble())
    throwTypeError("a number");
  return std::get<double>(value_);
}

const std::string& Json::asString() const {
  if (!isString())
    throwTypeError("a string");
  return std::get<std::string>(value_);
}

const Json::Array& Json::asArray() const {
  if (!isArray())
    throwTypeError("an array");
  return std::get<Array>(value_);
}

Json::Array& Json::asArray() {
  if (!isArray())
    throwTypeError("an array");
  return std::get<Array>(value_);
}

const Json::Object& Json::asObject() const {
  if (!isObject())
    throwTypeError("an object");
  return std::get<Object>(value_);
}

Json::Object& Json::asObject() {
  if (!isObject())
    throwTypeError("an object");
  return std::get<Object>(value_);
}

std::size_t Json::size() const {
  if (isArray())
    return std::get<Array>(value_).size();
  if (isObject())
    return std::get<Object>(value_).size();
  throwTypeError("an array or an object");
}

const Json& Json::at(std::size_t index) const {
  const Array& items = asArray();
  if (index >= items.size())
    throw Error(fmt::format("JSON: index {} is out of range for an array of {} elements", index,
                            items.size()));
  return items[index];
}

const Json& Json::at(std::string_view key) const {
  asObject(); // type check
  if (const Json* member = find(key))
    return *member;
  throw Error(fmt::format("JSON object has no member '{}'", key));
}

const Json* Json::find(std::string_view key) const {
  if (!isObject())
    return nullptr;
  for (const Member& member : std::get<Object>(value_))
    if (member.first == key)
      return &member.second;
  return nullptr;
}

Json* Json::find(std::string_view key) {
  return const_cast<Json*>(static_cast<const Json&>(*this).find(key));
}

Json& Json::set(std::string key, Json value) {
  if (isNull())
    value_ = Object{};
  if (Json* existing = find(key)) {
    *existing = std::move(value);
    return *existing;
  }
  Object& members = asObject();
  members.emplace_back(std::move(key), std::move(value));
  return members.back().second;
}

Json& Json::operator[](std::string_view key) {
  if (isNull())
    value_ = Object{};
  if (Json* existing = find(key))
    return *existing;
  Object& members = asObject();
  members.emplace_back(std::string(key), Json());
  return members.back().second;
}

bool Json::erase(std::string_view key) {
  Object& members = asObject();
  for (auto it = members.begin(); it != members.end(); ++it) {
    if (it->first == key) {
      members.erase(it);
      return true;
    }
  }
  return false;
}

void Json::push_back(Json value) {
  if (isNull())
    value_ = Array{};
  asArray().push_back(std::move(value));
}

// ---------------------------------------------------------------------------------------------
// Serialisation

namespace {

void dumpString(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20)
        out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
      else
        out += c;
    }
  }
  out += '"';
}

void dumpDouble(std::string& out, double value) {
  if (!std::isfinite(value))
    throw Error(fmt::format("JSON: cannot serialise the non-finite number {}", value));
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
  out += text;
  // Keep doubles doubles across a round trip: "1" would parse back as an integer.
  if (text.find_first_of(".eE") == std::string_view::npos)
    out += ".0";
}

void newline(std::string& out, int indent, int depth) {
  if (indent <= 0)
    return;
  out += '\n';
  out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(depth), ' ');
}

void dumpValue(std::string& out, const Json& value, int indent, int depth) {
  switch (value.type()) {
  case Json::Type::Null: out += "null"; return;
  case Json::Type::Bool: out += value.asBool() ? "true" : "false"; return;
  case Json::Type::Int: out += std::to_string(value.asInt()); return;
  case Json::Type::Double: dumpDouble(out, value.asDouble()); return;
  case Json::Type::String: dumpString(out, value.asString()); return;
  case Json::Type::Array: {
    const Json::Array& items = value.asArray();
    if (items.empty()) {
      out += "[]";
      return;
    }
    out += '[';
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i)
        out += ',';
      newline(out, indent, depth + 1);
      dumpValue(out, items[i], indent, depth + 1);
    }
    newline(out, indent, depth);
    out += ']';
    return;
  }
  case Json::Type::Object: {
    const Json::Object& members = value.asObject();
    if (members.empty()) {
      out += "{}";
      return;
    }
    out += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i)
        out += ',';
      newline(out, indent, depth + 1);
      dumpString(out, members[i].first);
      out += indent > 0 ? ": " : ":";
      dumpValue(out, members[i].second, indent, depth + 1);
    }
    newline(out, indent, depth);
    out += '}';
    return;
  }
  }
}

} // namespace

std::string Json::dump(int indent) const {
  std::string out;
  dumpValue(out, *this, indent, 0);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Parsing

namespace {

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  Json parseDocument() {
    skipWhitespace();
    Json value = parseValue(0);
    skipWhitespace();
    if (pos_ != text_.size())
      fail("unexpected characters after the JSON value");
    return value;
  }

private:
  // Deeper documents are rejected instead of overflowing the stack.
  static constexpr int kMaxDepth = 256;

  [[noreturn]] void fail(std::string_view what) const { failAt(pos_, what); }
  [[noreturn]] void failAt(std::size_t offset, std::string_view what) const {
    throw Error(fmt::format("JSON parse error at offset {}: {}", offset, what));
  }

  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return atEnd() ? '\0' : text_[pos_]; }

  void skipWhitespace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++pos_;
  }

  void expect(char c) {
    if (peek() != c || atEnd())
      fail(atEnd() ? fmt::format("expected '{}', got the end of the input", c)
                   : fmt::format("expected '{}', got '{}'", c, peek()));
    ++pos_;
  }

  void expectWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word)
      fail(fmt::format("invalid literal (expected '{}')", word));
    pos_ += word.size();
  }

  Json parseValue(int depth) {
    if (depth > kMaxDepth)
      fail(fmt::format("nesting deeper than {} levels", kMaxDepth));
    if (atEnd())
      fail("expected a value, got the end of the input");
    switch (peek()) {
    case '{': return parseObject(depth);
    case '[': return parseArray(depth);
    case '"': return Json(parseString());
    case 't': expectWord("true"); return Json(true);
    case 'f': expectWord("false"); return Json(false);
    case 'n': expectWord("null"); return Json();
    default:
      if (peek() == '-' || (peek() >= '0' && peek() <= '9'))
        return parseNumber();
      fail(fmt::format("unexpected character '{}'", peek()));
    }
  }

  Json parseObject(int depth) {
    expect('{');
    Json::Object members;
    skipWhitespace();
    if (peek() == '}') {
      ++pos_;
      return Json(std::move(members));
    }
    while (true) {
      skipWhitespace();
      std::size_t keyOffset = pos_;
      if (peek() != '"' || atEnd())
        fail("expected a string key");
      std::string key = parseString();
      for (const auto& member : members)
        if (member.first == key)
          failAt(keyOffset, fmt::format("duplicate key '{}'", key));
      skipWhitespace();
      expect(':');
      skipWhitespace();
      Json value = parseValue(depth + 1);
      members.emplace_back(std::move(key), std::move(value));
      skipWhitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == '}') {
        ++pos_;
        return Json(std::move(members));
      }
      fail("expected ',' or '}' in an object");
    }
  }

  Json parseArray(int depth) {
    expect('[');
    Json::Array items;
    skipWhitespace();
    if (peek() == ']') {
      ++pos_;
      return Json(std::move(items));
    }
    while (true) {
      skipWhitespace();
      items.push_back(parseValue(depth + 1));
      skipWhitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') {
        ++pos_;
        return Json(std::move(items));
      }
      fail("expected ',' or ']' in an array");
    }
  }

  unsigned parseHex4() {
    if (pos_ + 4 > text_.size())
      fail("truncated \\u escape");
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + pos_ + 4, value, 16);
    if (ec != std::errc() || end != text_.data() + pos_ + 4)
      fail("invalid \\u escape (expected 4 hex digits)");
    pos_ += 4;
    return value;
  }

  static void appendUtf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string parseString() {
    const std::size_t start = pos_;
    expect('"');
    std::string out;
    while (true) {
      if (atEnd())
        failAt(start, "unterminated string");
      char c = text_[pos_++];
      if (c == '"')
        return out;
      if (static_cast<unsigned char>(c) < 0x20)
        failAt(pos_ - 1, "control character in a string (must be escaped)");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (atEnd())
        failAt(start, "unterminated string");
      char e = text_[pos_++];
      switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        unsigned cp = parseHex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (text_.substr(pos_, 2) != "\\u")
            fail("high surrogate not followed by a low surrogate");
          pos_ += 2;
          unsigned low = parseHex4();
          if (low < 0xDC00 || low > 0xDFFF)
            fail("invalid low surrogate");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          fail("unpaired low surrogate");
        }
        appendUtf8(out, cp);
        break;
      }
      default: failAt(pos_ - 1, fmt::format("invalid escape '\\{}'", e));
      }
    }
  }

  Json parseNumber() {
    const std::size_t start = pos_;
    auto digits = [&] {
      std::size_t first = pos_;
      while (!atEnd() && peek() >= '0' && peek() <= '9')
        ++pos_;
      return pos_ - first;
    };
    bool integral = true;
    if (peek() == '-')
      ++pos_;
    if (peek() == '0') {
      ++pos_;
    } else if (digits() == 0) {
      failAt(start, "invalid number");
    }
    if (peek() == '.') {
      integral = false;
      ++pos_;
      if (digits() == 0)
        failAt(start, "invalid number (expected digits after '.')");
    }
    if ((peek() == 'e' || peek() == 'E')) {
      integral = false;
      ++pos_;
      if (peek() == '+' || peek() == '-')
        ++pos_;
      if (digits() == 0)
        failAt(start, "invalid number (expected digits in the exponent)");
    }
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    if (integral) {
      std::int64_t value = 0;
      auto [end, ec] = std::from_chars(first, last, value);
      if (ec == std::errc() && end == last)
        return Json(value);
      // Out of int64 range: fall through to a double.
    }
    double value = 0;
    auto [end, ec] = std::from_chars(first, last, value);
    if (ec == std::errc::result_out_of_range)
      failAt(start, "number out of range");
    if (ec != std::errc() || end != last)
      failAt(start, "invalid number");
    return Json(value);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

} // namespace

Json Json::parse(std::string_view text) { return Parser(text).parseDocument(); }

} // namespace qla
