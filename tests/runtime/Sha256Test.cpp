#include <catch2/catch_test_macros.hpp>

#include <string>

#include "qla/runtime/Sha256.h"

using qla::sha256Hex;

TEST_CASE("sha256 matches the FIPS 180-2 test vectors", "[runtime][sha256]") {
  CHECK(sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklm"
                  "nopqrlmnopqrsmnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  CHECK(sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256 gives the same digest however the input is split", "[runtime][sha256]") {
  std::string data;
  for (int i = 0; i < 300; ++i)
    data += static_cast<char>(i * 7 + 3);
  const std::string expected = sha256Hex(data);
  for (std::size_t split = 0; split <= data.size(); ++split) {
    qla::Sha256 hash;
    hash.update(std::string_view(data).substr(0, split));
    hash.update(std::string_view(data).substr(split));
    REQUIRE(hash.hexDigest() == expected);
  }
  // Byte by byte crosses every padding boundary (55, 56, 63, 64 bytes mod 64).
  qla::Sha256 hash;
  for (char c : data)
    hash.update(&c, 1);
  CHECK(hash.hexDigest() == expected);
}

TEST_CASE("sha256 distinguishes inputs of lengths around the padding boundary", "[runtime][sha256]") {
  // 55 and 56 bytes need one and two final blocks respectively.
  CHECK(sha256Hex(std::string(55, 'a')) ==
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(sha256Hex(std::string(56, 'a')) ==
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(sha256Hex(std::string(64, 'a')) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

TEST_CASE("sha256: the SHA-extension rounds and the portable rounds agree", "[runtime][sha256]") {
  // Where the CPU has no SHA extensions both sides are the portable rounds (the vectors above test them).
  std::string data;
  uint32_t x = 12345;
  for (int i = 0; i < 5000; ++i) {
    x = x * 1664525u + 1013904223u;
    data += static_cast<char>(x >> 24);
  }
  for (std::size_t n : {0, 1, 55, 56, 63, 64, 65, 127, 128, 129, 1000, 4096, 5000}) {
    qla::Sha256 fast, portable(false);
    fast.update(std::string_view(data).substr(0, n));
    portable.update(std::string_view(data).substr(0, n));
    REQUIRE(fast.hexDigest() == portable.hexDigest());
  }
  INFO("SHA extensions used: " << qla::Sha256::hardwareAvailable());
}
