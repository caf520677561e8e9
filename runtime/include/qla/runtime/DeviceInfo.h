#pragma once

#include <string>

namespace qla {

class Json;

// What the autotuner records per GPU and the launcher checks limits against.
struct DeviceInfo {
  std::string name;
  int smCount = 0;
  int smemPerBlockOptin = 0; // bytes of shared memory one block may opt in to
  int l2Bytes = 0;
  int clockKHz = 0;
  int memClockKHz = 0;
  int ccMajor = 0;
  int ccMinor = 0;
  int driverVersion = 0; // e.g. 13000
};

// Queries the device through the driver; throws qla::Error without a GPU or for a bad ordinal.
DeviceInfo queryDevice(int ordinal = 0);

// For tuning databases: {"name": …, "sm_count": …, …}.
Json toJson(const DeviceInfo& info);

} // namespace qla
