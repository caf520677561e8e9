// SIMT simulator: Memory: bounds and alignment, shared-memory races by vector clocks, loads, stores, TMA tile loads.
#include "Simulator.h"

namespace qla::simt::detail {

/// The host bytes at `addr` for an access of `size` bytes by thread `t` (bounds, alignment and,
/// in shared memory, hazards checked).
uint8_t *Simulator::memory(Operation *op, Type ptrType, uint64_t addr, int64_t size, int64_t t, bool write) {
  if (size > 1 && addr % std::min<int64_t>(size, 16) != 0)
    fail(op, "misaligned " + std::to_string(size) + "-byte access at " + std::to_string(addr));
  auto space = cast<LLVM::LLVMPointerType>(ptrType).getAddressSpace();
  if (space == 3 || (addr >= kSmemBase && addr < kSmemBase + smem_.size())) {
    if (addr < kSmemBase || addr + size > kSmemBase + smem_.size())
      fail(op, "shared-memory access out of bounds (offset " + std::to_string(int64_t(addr - kSmemBase)) + ", " +
                   std::to_string(size) + " bytes, " + std::to_string(smem_.size()) + " allocated)");
    for (int64_t i = 0; i < size; ++i)
      track(op, addr - kSmemBase + i, t, write);
    return smem_.data() + (addr - kSmemBase);
  }
  for (Buffer *b : globals_) {
    uint64_t base = reinterpret_cast<uint64_t>(b->bytes.data());
    if (addr >= base && addr + size <= base + b->bytes.size())
      return b->bytes.data() + (addr - base);
  }
  fail(op, "global access outside every buffer at address " + std::to_string(addr));
}

/// Race tracking of one shared-memory byte by vector clocks: thread t has seen thread w's access made
/// at w's clock c once clocks_[t][w] > c (a barrier, or an mbarrier phase, ordered them). A write
/// that another thread's access has not seen, or a read not seen by a later writer, is a hazard.
void Simulator::track(Operation *op, uint64_t byte, int64_t t, bool write) {
  Access &a = access_[byte];
  const std::vector<int64_t> &seen = clocks_[t];
  auto hazard = [&](const char *kind, int64_t other) {
    if (hazards_.insert({op, kind}).second)
      report_.hazards.push_back(std::string(kind) + " hazard at shared byte " + std::to_string(byte) + ": thread " +
                                std::to_string(t) + " and thread " + std::to_string(other) + ", " + describe(op));
  };
  if (a.writer >= 0 && a.writer != t && seen[a.writer] <= a.writeClock)
    hazard(write ? "write-after-write" : "read-after-write", a.writer);
  if (write) {
    if (a.reader >= 0 && a.reader != t && seen[a.reader] <= a.readClock)
      hazard("write-after-read", a.reader);
    a.writer = t;
    a.writeClock = seen[t];
    a.reader = -1;
  } else {
    a.reader = t;
    a.readClock = seen[t];
  }
}

/// One TMA tile load by thread t: the box at the coordinates (innermost first) into shared memory,
/// row-major, 128-byte swizzled when the map says so (the same address XOR as wgmma's); zeros for
/// elements outside the tensor. Returns the bytes written.
int64_t Simulator::tmaLoad(NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp op, int64_t t) {
  auto it = maps_.find(get(op, op.getTmaDescriptor())[t][0]);
  if (it == maps_.end())
    fail(op, "a TMA descriptor that is not a tensor-map argument");
  const TensorMap &map = *it->second;
  auto coords = op.getCoordinates();
  size_t rank = map.dims.size();
  if (coords.size() != rank || map.box.size() != rank || (map.swizzle != 0 && map.swizzle != 128))
    fail(op, "a TMA load whose coordinates or map do not match (or a swizzle other than 128 bytes)");
  std::vector<int64_t> at(rank);
  for (size_t d = 0; d < rank; ++d)
    at[d] = signExtend(get(op, coords[d])[t][0], scalarBits(coords[d].getType()));
  uint64_t dst = get(op, op.getDstMem())[t][0];
  int64_t elements = 1;
  for (int64_t b : map.box)
    elements *= b;
  auto ptr3 = LLVM::LLVMPointerType::get(op.getContext(), 3);
  for (int64_t e = 0; e < elements; ++e) {
    int64_t rest = e, offset = 0;
    bool inside = true;
    for (size_t d = 0; d < rank; ++d) {
      int64_t i = rest % map.box[d], g = at[d] + i;
      rest /= map.box[d];
      inside &= g >= 0 && g < map.dims[d];
      offset += g * (d == 0 ? map.elementBytes : map.stridesBytes[d - 1]);
    }
    uint64_t logical = dst + e * map.elementBytes;
    uint64_t physical = map.swizzle ? logical ^ (((logical >> 7) & 7) << 4) : logical;
    uint8_t *out = memory(op, ptr3, physical, map.elementBytes, t, true);
    if (inside)
      std::memcpy(out, map.buffer->bytes.data() + offset, map.elementBytes);
    else
      std::memset(out, 0, map.elementBytes);
  }
  return elements * map.elementBytes;
}

Bits Simulator::load(Operation *op, Value ptr, Type type, int64_t t) {
  uint64_t addr = get(op, ptr)[t][0];
  size_t lanes = laneCount(type);
  int64_t bytes = scalarBits(laneType(type, 0)) / 8;
  uint8_t *p = memory(op, ptr.getType(), addr, bytes * lanes, t, false);
  Bits out(lanes, 0);
  for (size_t i = 0; i < lanes; ++i)
    std::memcpy(&out[i], p + i * bytes, bytes);
  return out;
}

void Simulator::store(Operation *op, Value ptr, Value value, int64_t t) {
  uint64_t addr = get(op, ptr)[t][0];
  Type type = value.getType();
  size_t lanes = laneCount(type);
  int64_t bytes = scalarBits(laneType(type, 0)) / 8;
  uint8_t *p = memory(op, ptr.getType(), addr, bytes * lanes, t, true);
  const Bits &v = get(op, value)[t];
  for (size_t i = 0; i < lanes; ++i)
    std::memcpy(p + i * bytes, &v[i], bytes);
}

} // namespace qla::simt::detail
