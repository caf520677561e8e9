#include "qla/runtime/DeviceBuffer.h"

#include <fmt/format.h>

#include <utility>

#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"

namespace qla {

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  Driver& drv = Driver::get();
  drv.ensureContext();
  if (bytes == 0)
    return;
  drv.check(drv.cuMemAlloc(&ptr_, bytes), fmt::format("cuMemAlloc({} bytes)", bytes).c_str());
  bytes_ = bytes;
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  // Errors are ignored: a destructor cannot report them, and the context may already be gone.
  if (ptr_)
    Driver::get().cuMemFree(ptr_);
  ptr_ = 0;
  bytes_ = 0;
}

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  if (bytes > bytes_)
    throw Error(fmt::format("DeviceBuffer::upload: {} bytes do not fit in a buffer of {} bytes",
                            bytes, bytes_));
  if (bytes == 0)
    return;
  Driver& drv = Driver::get();
  drv.ensureContext();
  drv.check(drv.cuMemcpyHtoD(ptr_, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, std::size_t bytes) const {
  if (bytes > bytes_)
    throw Error(fmt::format("DeviceBuffer::download: {} bytes requested from a buffer of {} bytes",
                            bytes, bytes_));
  if (bytes == 0)
    return;
  Driver& drv = Driver::get();
  drv.ensureContext();
  drv.check(drv.cuMemcpyDtoH(host, ptr_, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fill8(std::uint8_t value) {
  if (bytes_ == 0)
    return;
  Driver& drv = Driver::get();
  drv.ensureContext();
  drv.check(drv.cuMemsetD8(ptr_, value, bytes_), "cuMemsetD8");
  drv.check(drv.cuCtxSynchronize(), "cuCtxSynchronize after cuMemsetD8");
}

void DeviceBuffer::fill16(std::uint16_t value) {
  if (bytes_ % 2 != 0)
    throw Error(fmt::format("DeviceBuffer::fill16: buffer size {} is not a multiple of 2 bytes",
                            bytes_));
  if (bytes_ == 0)
    return;
  Driver& drv = Driver::get();
  drv.ensureContext();
  drv.check(drv.cuMemsetD16(ptr_, value, bytes_ / 2), "cuMemsetD16");
  drv.check(drv.cuCtxSynchronize(), "cuCtxSynchronize after cuMemsetD16");
}

void DeviceBuffer::fill32(std::uint32_t value) {
  if (bytes_ % 4 != 0)
    throw Error(fmt::format("DeviceBuffer::fill32: buffer size {} is not a multiple of 4 bytes",
                            bytes_));
  if (bytes_ == 0)
    return;
  Driver& drv = Driver::get();
  drv.ensureContext();
  drv.check(drv.cuMemsetD32(ptr_, value, bytes_ / 4), "cuMemsetD32");
  drv.check(drv.cuCtxSynchronize(), "cuCtxSynchronize after cuMemsetD32");
}

} // namespace qla
