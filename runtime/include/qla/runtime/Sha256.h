#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace qla {

// Incremental SHA-256 (FIPS 180-4).
class Sha256 {
public:
  // `allowHardware` false: the portable rounds even where the CPU has the SHA extensions (tests).
  explicit Sha256(bool allowHardware = true);
  static bool hardwareAvailable();
  void update(const void* data, std::size_t bytes);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // Finishes the hash; the object must not be updated afterwards.
  std::array<std::uint8_t, 32> digest();
  std::string hexDigest();

private:
  void compressBlocks(const std::uint8_t* data, std::size_t blocks); // SHA-NI where the CPU has it
  void compress(const std::uint8_t* block);                            // the portable rounds

  bool hardware_;
  std::array<std::uint32_t, 8> state_;
  std::array<std::uint8_t, 64> buffer_{};
  std::size_t buffered_ = 0;
  std::uint64_t totalBytes_ = 0;
};

// Lower-case hex SHA-256 of `data`.
std::string sha256Hex(std::string_view data);

} // namespace qla
