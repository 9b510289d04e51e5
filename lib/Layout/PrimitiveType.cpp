//===- PrimitiveType.cpp - XLA element types and their widths -------------===//
#include "tessel/Layout/PrimitiveType.h"

#include <cctype>
#include <string>

namespace tessel {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

constexpr TypeInfo kTypes[] = {
    {PrimitiveType::Pred, "pred", 1},
    {PrimitiveType::S2, "s2", 2},
    {PrimitiveType::S4, "s4", 4},
    {PrimitiveType::S8, "s8", 8},
    {PrimitiveType::S16, "s16", 16},
    {PrimitiveType::S32, "s32", 32},
    {PrimitiveType::S64, "s64", 64},
    {PrimitiveType::U2, "u2", 2},
    {PrimitiveType::U4, "u4", 4},
    {PrimitiveType::U8, "u8", 8},
    {PrimitiveType::U16, "u16", 16},
    {PrimitiveType::U32, "u32", 32},
    {PrimitiveType::U64, "u64", 64},
    {PrimitiveType::F16, "f16", 16},
    {PrimitiveType::BF16, "bf16", 16},
    {PrimitiveType::F32, "f32", 32},
    {PrimitiveType::F64, "f64", 64},
    {PrimitiveType::C64, "c64", 64},
    {PrimitiveType::C128, "c128", 128},
    {PrimitiveType::F8E5M2, "f8e5m2", 8},
    {PrimitiveType::F8E4M3FN, "f8e4m3fn", 8},
    {PrimitiveType::F8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {PrimitiveType::F8E5M2FNUZ, "f8e5m2fnuz", 8},
    {PrimitiveType::F8E4M3FNUZ, "f8e4m3fnuz", 8},
    {PrimitiveType::Token, "token", 0},
};

const TypeInfo *find(PrimitiveType type) {
  for (const TypeInfo &info : kTypes)
    if (info.type == type)
      return &info;
  return nullptr;
}

} // namespace

std::string_view primitiveTypeName(PrimitiveType type) {
  const TypeInfo *info = find(type);
  return info ? info->name : "invalid";
}

std::optional<PrimitiveType> parsePrimitiveType(std::string_view name) {
  std::string lower(name);
  for (char &c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const TypeInfo &info : kTypes)
    if (info.name == lower)
      return info.type;
  return std::nullopt;
}

int bitWidth(PrimitiveType type) {
  const TypeInfo *info = find(type);
  return info ? info->bits : 0;
}

int byteWidth(PrimitiveType type) { return (bitWidth(type) + 7) / 8; }

bool isArrayType(PrimitiveType type) {
  return type != PrimitiveType::Invalid && type != PrimitiveType::Token;
}

bool isSignedInteger(PrimitiveType type) {
  switch (type) {
  case PrimitiveType::S2:
  case PrimitiveType::S4:
  case PrimitiveType::S8:
  case PrimitiveType::S16:
  case PrimitiveType::S32:
  case PrimitiveType::S64:
    return true;
  default:
    return false;
  }
}

bool isUnsignedInteger(PrimitiveType type) {
  switch (type) {
  case PrimitiveType::U2:
  case PrimitiveType::U4:
  case PrimitiveType::U8:
  case PrimitiveType::U16:
  case PrimitiveType::U32:
  case PrimitiveType::U64:
    return true;
  default:
    return false;
  }
}

bool isInteger(PrimitiveType type) {
  return isSignedInteger(type) || isUnsignedInteger(type);
}

bool isFloat(PrimitiveType type) {
  switch (type) {
  case PrimitiveType::F16:
  case PrimitiveType::BF16:
  case PrimitiveType::F32:
  case PrimitiveType::F64:
  case PrimitiveType::F8E5M2:
  case PrimitiveType::F8E4M3FN:
  case PrimitiveType::F8E4M3B11FNUZ:
  case PrimitiveType::F8E5M2FNUZ:
  case PrimitiveType::F8E4M3FNUZ:
    return true;
  default:
    return false;
  }
}

bool isComplex(PrimitiveType type) {
  return type == PrimitiveType::C64 || type == PrimitiveType::C128;
}

std::string npyDescr(PrimitiveType type) {
  switch (type) {
  case PrimitiveType::Pred:
    return "|b1";
  case PrimitiveType::S8:
    return "|i1";
  case PrimitiveType::U8:
    return "|u1";
  case PrimitiveType::S16:
    return "<i2";
  case PrimitiveType::S32:
    return "<i4";
  case PrimitiveType::S64:
    return "<i8";
  case PrimitiveType::U16:
    return "<u2";
  case PrimitiveType::U32:
    return "<u4";
  case PrimitiveType::U64:
    return "<u8";
  case PrimitiveType::F16:
    return "<f2";
  case PrimitiveType::F32:
    return "<f4";
  case PrimitiveType::F64:
    return "<f8";
  case PrimitiveType::C64:
    return "<c8";
  case PrimitiveType::C128:
    return "<c16";
  default:
    return "<V" + std::to_string(byteWidth(type));
  }
}

std::optional<PrimitiveType> primitiveTypeFromNpyDescr(std::string_view descr) {
  for (PrimitiveType type : kArrayTypes) {
    std::string own = npyDescr(type);
    if (own[1] == 'V')
      continue;
    // Single-byte types may be written with '|', '<' or '=' as the order.
    if (descr == own ||
        (descr.size() == own.size() && descr.substr(1) == own.substr(1) &&
         (descr[0] == '|' || descr[0] == '<' || descr[0] == '=')))
      return type;
  }
  return std::nullopt;
}

bool npyDescrMatches(std::string_view descr, PrimitiveType type) {
  if (std::optional<PrimitiveType> named = primitiveTypeFromNpyDescr(descr))
    return *named == type;
  return descr.size() > 2 && descr[1] == 'V' &&
         descr.substr(2) == std::to_string(byteWidth(type));
}

} // namespace tessel
