#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>

namespace qla {

// An owned device allocation (cuMemAlloc/cuMemFree) in the primary context of device 0.
// Copies and fills are synchronous with respect to the host. Move-only.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  // Throws qla::Error without a GPU or when the allocation fails. Zero bytes allocates nothing.
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();

  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t size() const { return bytes_; }

  // Copy `bytes` from/to the start of the buffer; bytes must not exceed size().
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;

  // Fill the whole buffer with a repeated pattern (e.g. to poison it before a kernel writes it).
  // fill16/fill32 require size() to be a multiple of 2/4 bytes.
  void fill8(std::uint8_t value);
  void fill16(std::uint16_t value);
  void fill32(std::uint32_t value);

private:
  void release() noexcept;

  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

} // namespace qla
