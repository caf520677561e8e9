#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace qla {

// A minimal JSON value for manifests and tuning databases. Objects keep insertion order, so
// dump() is stable. Integers that fit int64 stay integers; other numbers are doubles.
// Type mismatches and parse errors throw qla::Error.
class Json {
public:
  enum class Type { Null, Bool, Int, Double, String, Array, Object };
  using Array = std::vector<Json>;
  using Member = std::pair<std::string, Json>;
  using Object = std::vector<Member>;

  Json() = default;
  Json(std::nullptr_t) {}
  Json(bool value) : value_(value) {}
  template <std::integral T>
    requires(!std::same_as<T, bool>)
  Json(T value) : value_(toInt64(value)) {}
  template <std::floating_point T> Json(T value) : value_(static_cast<double>(value)) {}
  Json(const char* value) : value_(std::string(value)) {}
  Json(std::string value) : value_(std::move(value)) {}
  Json(std::string_view value) : value_(std::string(value)) {}
  Json(Array value) : value_(std::move(value)) {}
  Json(Object value) : value_(std::move(value)) {}

  static Json array() { return Json(Array{}); }
  static Json object() { return Json(Object{}); }

  Type type() const { return static_cast<Type>(value_.index()); }
  bool isNull() const { return type() == Type::Null; }
  bool isBool() const { return type() == Type::Bool; }
  bool isInt() const { return type() == Type::Int; }
  bool isDouble() const { return type() == Type::Double; }
  bool isNumber() const { return isInt() || isDouble(); }
  bool isString() const { return type() == Type::String; }
  bool isArray() const { return type() == Type::Array; }
  bool isObject() const { return type() == Type::Object; }

  bool asBool() const;
  std::int64_t asInt() const;
  double asDouble() const; // also accepts integers
  const std::string& asString() const;
  const Array& asArray() const;
  Array& asArray();
  const Object& asObject() const;
  Object& asObject();

  // Number of elements of an array or members of an object.
  std::size_t size() const;
  // Array element; throws when out of range.
  const Json& at(std::size_t index) const;
  // Object member; throws "JSON object has no member 'key'" when absent.
  const Json& at(std::string_view key) const;
  // Object member or nullptr (also nullptr when this is not an object).
  const Json* find(std::string_view key) const;
  Json* find(std::string_view key);
  bool contains(std::string_view key) const { return find(key) != nullptr; }

  // Replaces the member `key` in place or appends it. A null value becomes an object first.
  Json& set(std::string key, Json value);
  // Member `key`, appended as null when absent. A null value becomes an object first.
  Json& operator[](std::string_view key);
  // Removes a member; returns whether it existed.
  bool erase(std::string_view key);
  // Appends to an array. A null value becomes an array first.
  void push_back(Json value);

  // indent > 0: pretty, one member per line; indent == 0: compact. Throws for NaN/infinity.
  std::string dump(int indent = 2) const;
  // Strict RFC 8259 parsing; errors name the byte offset. Duplicate object keys are rejected.
  static Json parse(std::string_view text);

  friend bool operator==(const Json& a, const Json& b) { return a.value_ == b.value_; }

private:
  template <std::integral T> static std::int64_t toInt64(T value) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
      if (value > static_cast<T>(INT64_MAX))
        throwIntegerOverflow(static_cast<std::uint64_t>(value));
    }
    return static_cast<std::int64_t>(value);
  }
  [[noreturn]] static void throwIntegerOverflow(std::uint64_t value);
  [[noreturn]] void throwTypeError(const char* expected) const;

  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, Array, Object> value_;
};

// "null", "bool", "integer", "number", "string", "array", "object".
const char* jsonTypeName(Json::Type type);

} // namespace qla
