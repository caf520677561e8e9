#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"

using Catch::Matchers::ContainsSubstring;
using qla::Json;

namespace {

Json sampleManifest() {
  Json j = Json::object();
  j.set("kernel", "gdn_chunk_fwd");
  j.set("grid", Json(Json::Array{132, 1, 1}));
  j.set("dynamic_smem", 200704);
  j.set("tolerance", 0.001);
  j.set("ratio", 2.0);
  j.set("big", std::numeric_limits<std::int64_t>::max());
  j.set("small", std::numeric_limits<std::int64_t>::min());
  j.set("huge", 1e300);
  j.set("negative", -0.5);
  j.set("enabled", true);
  j.set("disabled", false);
  j.set("nothing", nullptr);
  j.set("text", "quote \" backslash \\ newline \n tab \t control \x01 unicode é 😀");
  j.set("empty_array", Json::array());
  j.set("empty_object", Json::object());
  Json nested = Json::object();
  nested.set("z", 1);
  nested.set("a", Json(Json::Array{Json::object(), Json::array(), "x"}));
  j.set("nested", nested);
  return j;
}

} // namespace

TEST_CASE("json round-trips through dump and parse", "[runtime][json]") {
  const Json original = sampleManifest();
  for (int indent : {0, 2, 4}) {
    const std::string text = original.dump(indent);
    const Json parsed = Json::parse(text);
    CHECK(parsed == original);
    CHECK(parsed.dump(indent) == text);
  }
}

TEST_CASE("json keeps insertion order and types", "[runtime][json]") {
  const Json j = Json::parse(R"({"zeta": 1, "alpha": 2.0, "mid": [1, 2.5, "s"]})");
  REQUIRE(j.isObject());
  REQUIRE(j.size() == 3);
  CHECK(j.asObject()[0].first == "zeta");
  CHECK(j.asObject()[1].first == "alpha");
  CHECK(j.asObject()[2].first == "mid");
  CHECK(j.at("zeta").isInt());
  CHECK(j.at("alpha").isDouble());
  CHECK(j.at("alpha").asDouble() == 2.0);
  CHECK(j.at("mid").at(1).asDouble() == 2.5);
  CHECK(j.dump(0) == R"({"zeta":1,"alpha":2.0,"mid":[1,2.5,"s"]})");
}

TEST_CASE("json pretty output is stable and readable", "[runtime][json]") {
  Json j = Json::object();
  j.set("b", 1);
  j.set("a", Json(Json::Array{true, nullptr}));
  j.set("c", Json::object());
  CHECK(j.dump() == "{\n  \"b\": 1,\n  \"a\": [\n    true,\n    null\n  ],\n  \"c\": {}\n}");
}

TEST_CASE("json numbers keep their exact value", "[runtime][json]") {
  CHECK(Json::parse("0.1").asDouble() == 0.1);
  CHECK(Json::parse(Json(0.1).dump()).asDouble() == 0.1);
  CHECK(Json::parse("-9223372036854775808").asInt() == std::numeric_limits<std::int64_t>::min());
  CHECK(Json::parse("9223372036854775807").asInt() == std::numeric_limits<std::int64_t>::max());
  // Beyond int64: a double.
  const Json beyond = Json::parse("9223372036854775808");
  CHECK(beyond.isDouble());
  CHECK(beyond.asDouble() == 9223372036854775808.0);
  CHECK(Json::parse("1e3").isDouble());
  CHECK(Json::parse("1E-2").asDouble() == 0.01);
  CHECK(Json::parse("-0.0").isDouble());
  CHECK(Json(3.0).dump() == "3.0");
  CHECK(Json::parse("3").isInt());
}

TEST_CASE("json strings decode escapes and surrogate pairs", "[runtime][json]") {
  CHECK(Json::parse(R"("a\"b\\c\/d\b\f\n\r\t")").asString() == "a\"b\\c/d\b\f\n\r\t");
  CHECK(Json::parse(R"("\u00e9")").asString() == "\xc3\xa9");
  CHECK(Json::parse(R"("\ud83d\ude00")").asString() == "\xf0\x9f\x98\x80");
  CHECK(Json::parse(R"("\u0001")").asString() == std::string(1, '\x01'));
  CHECK(Json(std::string(1, '\x01')).dump() == R"("\u0001")");
}

TEST_CASE("json parse errors name the offset", "[runtime][json]") {
  auto parseError = [](std::string_view text) -> std::string {
    try {
      Json::parse(text);
    } catch (const qla::Error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(parseError(R"({"a": })"), ContainsSubstring("offset 6") && ContainsSubstring("unexpected character '}'"));
  CHECK_THAT(parseError("[1, 2"), ContainsSubstring("offset 5") && ContainsSubstring("expected ',' or ']'"));
  CHECK_THAT(parseError("[1] x"), ContainsSubstring("offset 4") && ContainsSubstring("unexpected characters after"));
  CHECK_THAT(parseError(R"("abc)"), ContainsSubstring("offset 0") && ContainsSubstring("unterminated string"));
  CHECK_THAT(parseError(R"({"a": 1, "a": 2})"), ContainsSubstring("offset 9") && ContainsSubstring("duplicate key 'a'"));
  CHECK_THAT(parseError(R"("\x")"), ContainsSubstring("offset 2") && ContainsSubstring("invalid escape"));
  CHECK_THAT(parseError("tru"), ContainsSubstring("offset 0") && ContainsSubstring("invalid literal"));
  CHECK_THAT(parseError("-"), ContainsSubstring("offset 0") && ContainsSubstring("invalid number"));
  CHECK_THAT(parseError("1."), ContainsSubstring("invalid number"));
  CHECK_THAT(parseError("01"), ContainsSubstring("offset 1"));
  CHECK_THAT(parseError(""), ContainsSubstring("offset 0") && ContainsSubstring("end of the input"));
  CHECK_THAT(parseError("{1: 2}"), ContainsSubstring("offset 1") && ContainsSubstring("expected a string key"));
  CHECK_THAT(parseError("\"a\nb\""), ContainsSubstring("offset 2") && ContainsSubstring("control character"));
  CHECK_THAT(parseError(R"("\ud83d")"), ContainsSubstring("surrogate"));
  CHECK_THAT(parseError("1e999"), ContainsSubstring("out of range"));
  CHECK_THAT(parseError(std::string(100000, '[')), ContainsSubstring("nesting deeper than"));
}

TEST_CASE("json accessors report type mismatches", "[runtime][json]") {
  const Json j = Json::parse(R"({"n": 1, "s": "x"})");
  CHECK_THROWS_WITH(j.at("n").asString(), ContainsSubstring("expected a string, got integer"));
  CHECK_THROWS_WITH(j.at("s").asInt(), ContainsSubstring("expected an integer, got string"));
  CHECK_THROWS_WITH(j.at("missing"), ContainsSubstring("no member 'missing'"));
  CHECK_THROWS_WITH(j.at("n").at(0), ContainsSubstring("expected an array, got integer"));
  CHECK(j.find("missing") == nullptr);
  CHECK_THROWS_AS(Json(std::numeric_limits<std::uint64_t>::max()), qla::Error);
  CHECK_THROWS_WITH(Json(std::nan("")).dump(), ContainsSubstring("non-finite"));
}

TEST_CASE("json objects can be edited", "[runtime][json]") {
  Json j;
  j["a"] = 1;
  j["b"] = "two";
  j["a"] = 3; // replaced in place, order kept
  j.set("c", Json::array());
  j["c"].push_back(4);
  CHECK(j.dump(0) == R"({"a":3,"b":"two","c":[4]})");
  CHECK(j.erase("b"));
  CHECK_FALSE(j.erase("b"));
  CHECK(j.dump(0) == R"({"a":3,"c":[4]})");
}
