#include "qla/runtime/DeviceInfo.h"

#include <fmt/format.h>

#include "qla/runtime/Driver.h"
#include "qla/runtime/Error.h"
#include "qla/runtime/Json.h"

namespace qla {

DeviceInfo queryDevice(int ordinal) {
  Driver& drv = Driver::get();
  drv.requireAvailable();
  if (ordinal < 0 || ordinal >= drv.deviceCount())
    throw Error(fmt::format("queryDevice: device ordinal {} is out of range (the driver reports {} "
                            "device{})",
                            ordinal, drv.deviceCount(), drv.deviceCount() == 1 ? "" : "s"));
  CUdevice device = 0;
  drv.check(drv.cuDeviceGet(&device, ordinal), "cuDeviceGet");

  DeviceInfo info;
  char name[256] = {};
  drv.check(drv.cuDeviceGetName(name, sizeof(name) - 1, device), "cuDeviceGetName");
  info.name = name;

  auto attribute = [&](CUdevice_attribute attr, const char* what) {
    int value = 0;
    drv.check(drv.cuDeviceGetAttribute(&value, attr, device),
              fmt::format("cuDeviceGetAttribute({})", what).c_str());
    return value;
  };
  info.smCount = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT");
  info.smemPerBlockOptin = attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                     "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN");
  info.l2Bytes = attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "L2_CACHE_SIZE");
  info.clockKHz = attribute(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, "CLOCK_RATE");
  info.memClockKHz = attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "MEMORY_CLOCK_RATE");
  info.ccMajor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR");
  info.ccMinor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR");
  info.driverVersion = drv.driverVersion();
  return info;
}

Json toJson(const DeviceInfo& info) {
  Json j = Json::object();
  j.set("name", info.name);
  j.set("sm_count", info.smCount);
  j.set("smem_per_block_optin", info.smemPerBlockOptin);
  j.set("l2_bytes", info.l2Bytes);
  j.set("clock_khz", info.clockKHz);
  j.set("mem_clock_khz", info.memClockKHz);
  j.set("cc_major", info.ccMajor);
  j.set("cc_minor", info.ccMinor);
  j.set("driver_version", info.driverVersion);
  return j;
}

} // namespace qla
