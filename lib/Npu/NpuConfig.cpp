//===- NpuConfig.cpp - NPUs, their local memories and addresses -----------===//
#include "tessel/Npu/NpuConfig.h"

#include "tessel/Support/MathExtras.h"

#include <cctype>

namespace tessel {
namespace {

struct Preset {
  std::string_view name;
  int64_t npus, bytesPerNpu, banks, alignBytes;
  bool packedModes;
};

// Public constants of the chips (spec section 6).
constexpr Preset kPresets[] = {
    {"bm1684", 64, 512 * 1024, 8, 128, true},
    {"bm1684x", 64, 256 * 1024, 16, 64, false},
    {"bm1688", 32, 128 * 1024, 16, 16, false},
};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool isPowerOfTwo(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

struct TypeAlias {
  std::string_view alias;
  PrimitiveType type;
};

// The NPU spelling first for each type: npuTypeName prints it.
constexpr TypeAlias kAliases[] = {
    {"fp32", PrimitiveType::F32},    {"f32", PrimitiveType::F32},
    {"float32", PrimitiveType::F32}, {"float", PrimitiveType::F32},
    {"fp16", PrimitiveType::F16},    {"f16", PrimitiveType::F16},
    {"float16", PrimitiveType::F16}, {"half", PrimitiveType::F16},
    {"bf16", PrimitiveType::BF16},   {"bfloat16", PrimitiveType::BF16},
    {"fp64", PrimitiveType::F64},    {"f64", PrimitiveType::F64},
    {"float64", PrimitiveType::F64}, {"double", PrimitiveType::F64},
    {"int8", PrimitiveType::S8},     {"s8", PrimitiveType::S8},
    {"i8", PrimitiveType::S8},       {"uint8", PrimitiveType::U8},
    {"u8", PrimitiveType::U8},       {"int16", PrimitiveType::S16},
    {"s16", PrimitiveType::S16},     {"i16", PrimitiveType::S16},
    {"uint16", PrimitiveType::U16},  {"u16", PrimitiveType::U16},
    {"int32", PrimitiveType::S32},   {"s32", PrimitiveType::S32},
    {"i32", PrimitiveType::S32},     {"uint32", PrimitiveType::U32},
    {"u32", PrimitiveType::U32},     {"int64", PrimitiveType::S64},
    {"s64", PrimitiveType::S64},     {"i64", PrimitiveType::S64},
    {"uint64", PrimitiveType::U64},  {"u64", PrimitiveType::U64},
    {"bool", PrimitiveType::Pred},   {"pred", PrimitiveType::Pred},
    {"c64", PrimitiveType::C64},     {"c128", PrimitiveType::C128},
};

} // namespace

Expected<NpuConfig> NpuConfig::get(int64_t npus, int64_t bytesPerNpu,
                                   int64_t banks, int64_t alignBytes,
                                   bool packedModes, std::string name) {
  if (npus < 1 || npus > kMaxNpus)
    return Error("npus is " + std::to_string(npus) + ", expected 1.." +
                 std::to_string(kMaxNpus));
  if (bytesPerNpu < 1 || bytesPerNpu > kMaxBytesPerNpu)
    return Error("local memory of " + std::to_string(bytesPerNpu) +
                 " bytes per npu is out of range, expected 1.." +
                 std::to_string(kMaxBytesPerNpu));
  if (banks < 1 || banks > bytesPerNpu || bytesPerNpu % banks != 0)
    return Error(std::to_string(banks) + " banks do not divide the " +
                 std::to_string(bytesPerNpu) +
                 " bytes of an npu, expected a divisor of " +
                 std::to_string(bytesPerNpu));
  if (!isPowerOfTwo(alignBytes))
    return Error("alignment unit of " + std::to_string(alignBytes) +
                 " bytes is not a power of two");
  if (bytesPerNpu % alignBytes != 0)
    return Error("local memory of " + std::to_string(bytesPerNpu) +
                 " bytes per npu is not a multiple of the " +
                 std::to_string(alignBytes) + "-byte alignment unit");
  NpuConfig config;
  config.chipName = std::move(name);
  config.numNpus = npus;
  config.memBytes = bytesPerNpu;
  config.numBanks = banks;
  config.alignUnit = alignBytes;
  config.packed = packedModes;
  return config;
}

Expected<NpuConfig> NpuConfig::preset(std::string_view name) {
  std::string key = lower(name);
  for (const Preset &p : kPresets)
    if (p.name == key)
      return get(p.npus, p.bytesPerNpu, p.banks, p.alignBytes, p.packedModes,
                 std::string(p.name));
  std::string known;
  for (const Preset &p : kPresets)
    known += std::string(known.empty() ? "" : ", ") + std::string(p.name);
  return Error("unknown chip '" + std::string(name) + "', expected one of " +
               known);
}

std::vector<std::string_view> NpuConfig::presetNames() {
  std::vector<std::string_view> names;
  for (const Preset &p : kPresets)
    names.push_back(p.name);
  return names;
}

NpuConfig NpuConfig::seed() { return *get(4, 1024, 1, 128, true, "custom"); }

Expected<NpuPlace> NpuConfig::split(int64_t address) const {
  if (address < 0 || address >= totalBytes())
    return Error("address " + std::to_string(address) +
                 " is outside local memory, expected 0.." +
                 std::to_string(totalBytes() - 1) + " (" +
                 std::to_string(numNpus) + " npus x " +
                 std::to_string(memBytes) + " bytes)");
  return NpuPlace{address / memBytes, address % memBytes};
}

int64_t NpuConfig::channelsPerNpu(int64_t startNpu, int64_t channels) const {
  return ceilDiv(startNpu + channels, numNpus);
}

ChannelSlot NpuConfig::channelSlot(int64_t startNpu, int64_t channel) const {
  return {(startNpu + channel) % numNpus, (startNpu + channel) / numNpus};
}

std::string NpuConfig::toString() const {
  std::string out = chipName + ": " + std::to_string(numNpus) + " npus x " +
                    formatBytes(memBytes);
  if (numBanks > 1)
    out += ", " + std::to_string(numBanks) + " banks of " +
           formatBytes(bankBytes());
  out += ", " + std::to_string(alignUnit) + "-byte alignment";
  if (packed)
    out += ", 4N/2N/2IC modes";
  return out;
}

bool NpuConfig::operator==(const NpuConfig &other) const {
  return chipName == other.chipName && numNpus == other.numNpus &&
         memBytes == other.memBytes && numBanks == other.numBanks &&
         alignUnit == other.alignUnit && packed == other.packed;
}

std::string formatBytes(int64_t bytes) {
  if (bytes >= (int64_t(1) << 20) && bytes % (int64_t(1) << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

Expected<int64_t> parseByteSize(std::string_view text) {
  size_t i = 0;
  int64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    std::optional<int64_t> next = checkedMul(value, 10);
    if (next)
      next = checkedAdd(*next, text[i] - '0');
    if (!next)
      return Error("byte size '" + std::string(text) + "' is too large");
    value = *next;
    ++i;
  }
  if (i == 0)
    return Error("byte size '" + std::string(text) +
                 "' does not start with a number, expected e.g. 1024 or 512K");
  std::string unit = lower(text.substr(i));
  int shift = -1;
  if (unit.empty() || unit == "b")
    shift = 0;
  else if (unit == "k" || unit == "kb" || unit == "kib")
    shift = 10;
  else if (unit == "m" || unit == "mb" || unit == "mib")
    shift = 20;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    shift = 30;
  if (shift < 0)
    return Error("unknown unit '" + std::string(text.substr(i)) + "' in '" +
                 std::string(text) + "', expected K, KiB, M, MiB, G or GiB");
  std::optional<int64_t> bytes = checkedMul(value, int64_t(1) << shift);
  if (!bytes)
    return Error("byte size '" + std::string(text) + "' is too large");
  return *bytes;
}

Expected<PrimitiveType> parseNpuType(std::string_view name) {
  std::string key = lower(name);
  for (const TypeAlias &a : kAliases)
    if (a.alias == key)
      return a.type;
  std::optional<PrimitiveType> type = parsePrimitiveType(key);
  if (type && isArrayType(*type) && bitWidth(*type) >= 8)
    return *type;
  if (type && isArrayType(*type))
    return Error("element type '" + std::string(name) + "' is " +
                 std::to_string(bitWidth(*type)) +
                 " bits wide; npu local memory holds whole bytes, expected a "
                 "type of 8 bits or more");
  return Error("unknown element type '" + std::string(name) +
               "', expected one of fp32, fp16, bf16, fp64, int8, uint8, "
               "int16, uint16, int32, uint32, int64, uint64, bool");
}

std::string npuTypeName(PrimitiveType type) {
  for (const TypeAlias &a : kAliases)
    if (a.type == type)
      return std::string(a.alias);
  return std::string(primitiveTypeName(type));
}

Expected<NpuConfig> NpuConfig::resolve(const std::string &chip,
                                       std::optional<int64_t> npus,
                                       std::optional<int64_t> bytesPerNpu,
                                       std::optional<int64_t> banks,
                                       std::optional<int64_t> alignBytes) {
  int64_t x = 0, s = 0, b = 1, a = 128;
  bool packed = true;
  std::string name = "custom";
  if (!chip.empty()) {
    Expected<NpuConfig> preset = NpuConfig::preset(chip);
    if (!preset)
      return preset.takeError();
    x = preset->npus();
    s = preset->bytesPerNpu();
    b = preset->banks();
    a = preset->alignBytes();
    packed = preset->hasPackedModes();
    bool modified =
        npus || bytesPerNpu || (banks && *banks) || (alignBytes && *alignBytes);
    name = modified ? preset->name() + "-modified" : preset->name();
  }
  x = npus.value_or(x);
  s = bytesPerNpu.value_or(s);
  b = banks.value_or(b);
  a = alignBytes.value_or(a);
  return NpuConfig::get(x, s, b, a, packed, name);
}

} // namespace tessel
